/**
 * `orgplane bootstrap --workspace-name N`: a provisional workspace with one-time claim links (public, no
 * credential needed), and `orgplane bootstrap claim <token>`: redeem one as the signed-in user.
 */
import { Args, Command, Options } from "@effect/cli"
import { AcceptClaimRequest, AcceptClaimResult, BootstrapWorkspaceResult, Email, OrganizationName } from "@orgplane/schema"
import { Effect, Option } from "effect"
import { UsageError } from "../Errors.js"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Target from "../Target.js"

export const claim = Command.make(
  "claim",
  { token: Inputs.arg(Args.text({ name: "token" }), "token", AcceptClaimRequest.fields.token), global },
  ({ token, global }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.bootstrap.acceptClaim({ payload: { token } })
        yield* Output.emit(global, AcceptClaimResult, result, ({ membership, organization }) =>
          `Joined ${organization.name} (${organization.id}) as ${membership.role}; it is now your active organization.`)
      }))
).pipe(Command.withDescription("Redeem a claim token: join the workspace with the claim's role (needs a session)."))

const workspace = {
  // Optional for the parser so that `bootstrap claim <token>` parses; required when creating a workspace.
  workspaceName: Inputs.option(
    Options.text("workspace-name").pipe(Options.withDescription("Name of the provisional workspace.")),
    "--workspace-name",
    OrganizationName
  ).pipe(Options.optional),
  roles: Options.choice("role", ["owner", "admin", "member"]).pipe(
    Options.withDescription("One claim link per role; repeat the flag for several (default: owner)."),
    Options.repeated
  ),
  ownerEmail: Inputs.option(
    Options.text("owner-email").pipe(Options.withDescription("Prefills the owner claim link (not stored).")),
    "--owner-email",
    Email
  ).pipe(Options.optional),
  global
}

export const bootstrap = Command.make("bootstrap", workspace, ({ ownerEmail, roles, workspaceName, global }) =>
  Target.run(global, (target) =>
    Effect.gen(function*() {
      if (Option.isNone(workspaceName)) {
        return yield* new UsageError({ message: "--workspace-name is required (or use 'orgplane bootstrap claim <token>')" })
      }
      if (new Set(roles).size !== roles.length) return yield* new UsageError({ message: "--role: roles must not repeat" })
      const client = yield* Target.connect(target, { authenticated: false })
      const result = yield* client.bootstrap.workspace({
        payload: {
          workspaceName: workspaceName.value,
          ...(roles.length > 0 ? { claimRoles: roles } : {}),
          ...Inputs.ifSome("ownerEmail", ownerEmail)
        }
      })
      yield* Output.emit(global, BootstrapWorkspaceResult, result, ({ claimLinks, organization, setup }) =>
        [
          `Created provisional workspace ${organization.name} (${organization.id}); unclaimed setup expires ${Output.date(setup.expiresAt)}.`,
          `One-time claim links, valid until ${Output.date(claimLinks[0]?.expiresAt)}; send each to the person who should take that role:`,
          "",
          Output.table(["role", "token", "url"], claimLinks.map((link) => [link.role, link.token, link.url])),
          "",
          "A signed-in user redeems a token with 'orgplane bootstrap claim <token>'."
        ].join("\n"))
    }))).pipe(
    Command.withDescription("Create a provisional workspace and print its one-time claim links (no credential needed)."),
    Command.withSubcommands([claim])
  )
