/** `orgplane orgs create | switch`: organizations of the signed-in user. */
import { Args, Command } from "@effect/cli"
import { Me, OrganizationId, OrganizationName, OrganizationWithMembership } from "@orgplane/schema"
import { Effect } from "effect"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Target from "../Target.js"
import { group } from "./group.js"

export const create = Command.make(
  "create",
  { name: Inputs.arg(Args.text({ name: "name" }), "name", OrganizationName), global },
  ({ name, global }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const created = yield* client.organizations.create({ payload: { name } })
        yield* Output.emit(global, OrganizationWithMembership, created, ({ membership, organization }) =>
          `Created organization ${organization.name} (${organization.id}), plan ${organization.plan}; you are its ${membership.role} and it is now your active organization.`)
      }))
).pipe(Command.withDescription("Create an organization (you become its owner) and make it the active one."))

export const switchTo = Command.make(
  "switch",
  { organizationId: Inputs.arg(Args.text({ name: "organizationId" }), "organizationId", OrganizationId), global },
  ({ organizationId, global }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const me = yield* client.users.switchOrganization({ payload: { organizationId } })
        yield* Output.emit(global, Me, me, ({ membership, organization }) =>
          `Switched to ${organization?.name ?? organizationId} (${organizationId}) as ${membership?.role ?? "member"}.`)
      }))
).pipe(Command.withDescription("Make another organization you belong to the session's active one."))

export const orgs = group("orgs", "Create and switch organizations.", [create, switchTo])
