/**
 * `orgplane bootstrap create --workspace-name N`: a provisional workspace with one-time claim links (public, no
 * credential needed), and `orgplane bootstrap claim <token>`: redeem one as the signed-in user.
 */
import { AcceptClaimRequest, AcceptClaimResult, BootstrapApi, BootstrapWorkspaceResult, ClaimRoles, Email, OrganizationName } from "@orgplane/schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/** The API's own rules for `claimRoles`, on the words given. */
const Roles = Inputs.wordsAs(ClaimRoles)

export const create = Commands.endpoint("create", {
  summary: "Create a provisional workspace and print its one-time claim links (no credential needed).",
  anonymous: true,
  inputs: {
    workspaceName: Inputs.text("workspace-name", { placeholder: "<name>", description: "Name of the provisional workspace.", schema: OrganizationName }),
    roles: Inputs.repeatedText("role", {
      placeholder: "<owner|admin|member>",
      description: "One claim link per role (default: owner).",
      schema: Roles
    }),
    ownerEmail: Inputs.optional(Inputs.text("owner-email", {
      placeholder: "<email>",
      description: "Prefills the owner claim link (not stored).",
      schema: Email
    }))
  },
  call: (client, { ownerEmail, roles, workspaceName }) =>
    client.bootstrap.workspace({
      payload: { workspaceName, ...(roles.length > 0 ? { claimRoles: roles } : {}), ...Inputs.ifSome("ownerEmail", ownerEmail) }
    }),
  output: BootstrapWorkspaceResult,
  human: ({ claimLinks, organization, setup }) =>
    [
      `Created provisional workspace ${organization.name} (${organization.id}); unclaimed setup expires ${Output.date(setup.expiresAt)}.`,
      `One-time claim links, valid until ${Output.date(claimLinks[0]?.expiresAt)}; send each to the person who should take that role:`,
      "",
      Output.table(["role", "token", "url"], claimLinks.map((link) => [link.role, link.token, link.url])),
      "",
      "Each url opens the server's claim page: the person signs in (or creates an account) and claims it in a browser.",
      "Signed in with the CLI, 'orgplane bootstrap claim <token>' does the same (the API: POST /v1/bootstrap/claims/accept)."
    ].join("\n")
})

export const claim = Commands.endpoint("claim", {
  examples: [
    ["Redeem the claim link's token.", ["bootstrap", "claim", "opc_Yw1m4h9kQ2s8LxV0pN7cR5tZ3bJ6dF1gH8uA2eK4m0Q"]],
  ],
  summary: "Redeem a claim token: join the workspace with the claim's role (needs a session).",
  inputs: { token: Inputs.argument("token", { schema: AcceptClaimRequest.fields.token, description: "The claim token (opc_…)." }) },
  call: (client, { token }) => client.bootstrap.acceptClaim({ payload: { token } }),
  output: AcceptClaimResult,
  human: ({ membership, organization }) =>
    `Joined ${organization.name} (${organization.id}) as ${membership.role}; it is now your active organization.`
})

export const bootstrap = Commands.group("bootstrap", "Set up a provisional workspace that others claim, and redeem claims.", [create, claim], [BootstrapApi])
