/**
 * `orgplane members list | role | remove | transfer-ownership`: the active organization's members and their roles.
 * Any member may list; changing roles and removing take an admin or owner (see the API's role model).
 */
import { Args, Command, Options } from "@effect/cli"
import { type Member, MemberPage, MemberResponse, MembershipId, OwnershipTransfer, Role, SearchText } from "@orgplane/schema"
import { Effect, Option, Schema } from "effect"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Paging from "../Paging.js"
import * as Target from "../Target.js"
import { group } from "./group.js"

const memberId = Inputs.arg(Args.text({ name: "memberId" }), "memberId", MembershipId)

/** `Ada Lovelace (om_…)`, or the id alone for the unclaimed owner of a bootstrapped workspace. */
const who = (member: Member) => member.name === null ? member.id : `${member.name} (${member.id})`

const rows = (items: ReadonlyArray<Member>) =>
  Output.table(
    ["id", "name", "email", "role", "removed"],
    items.map((member) => [member.id, member.name ?? "-", member.email ?? "-", member.role, Output.date(member.removedAt)])
  )

export const list = Command.make(
  "list",
  {
    role: Options.choice("role", Role.literals).pipe(Options.withDescription("Only members with this role."), Options.optional),
    query: Inputs.option(
      Options.text("query").pipe(Options.withDescription("Only members whose name or email contains this text (case-insensitive).")),
      "--query",
      SearchText
    ).pipe(Options.optional),
    includeRemoved: Options.boolean("include-removed").pipe(Options.withDescription("Also list removed members.")),
    ...Paging.options,
    global
  },
  ({ global, includeRemoved, query, role, ...paging }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        yield* Paging.check(paging)
        const client = yield* Target.connect(target, { authenticated: true })
        const filters = {
          ...Inputs.ifSome("role", role),
          ...Inputs.ifSome("q", query),
          ...(includeRemoved ? { includeRemoved: true } : {})
        }
        const result = yield* Paging.fetch(paging, (page) => client.members.list({ urlParams: { ...filters, ...page } }))
        yield* Output.emit(global, MemberPage, result, ({ items }) => items.length === 0 ? "No members." : rows(items))
        const command = [
          "members list",
          ...Option.toArray(Option.map(role, (value) => `--role ${value}`)),
          ...Option.toArray(Option.map(query, (value) => `--query ${Paging.quote(value)}`)),
          ...(includeRemoved ? ["--include-removed"] : [])
        ].join(" ")
        yield* Paging.hint(global, "members", command, result)
      }))
).pipe(Command.withDescription("List the active organization's members, oldest first (any member may)."))

export const role = Command.make(
  "role",
  {
    memberId,
    role: Args.choice(Role.literals.map((value) => [value, value] as [string, Role]), { name: "role" }),
    global
  },
  ({ global, memberId, role }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.members.changeRole({ path: { memberId }, payload: { role } })
        yield* Output.emit(global, MemberResponse, result, ({ member }) => `${who(member)} is now ${member.role}.`)
      }))
).pipe(
  Command.withDescription(
    "Change a member's role: owner, admin or member. Admins move people between member and admin; only owners make, demote or change owners."
  )
)

const Removed = Schema.Struct({ ok: Schema.Literal(true), removed: MembershipId })

export const remove = Command.make(
  "remove",
  { memberId, global },
  ({ global, memberId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        yield* client.members.remove({ path: { memberId } })
        yield* Output.emit(
          global,
          Removed,
          { ok: true, removed: memberId },
          () => `Removed member ${memberId}: they left every team, their API keys are revoked and their sessions no longer reach the organization.`
        )
      }))
).pipe(Command.withDescription("Remove a member from the organization (your own id: leave it). The last owner cannot be removed."))

export const transferOwnership = Command.make(
  "transfer-ownership",
  { memberId, global },
  ({ global, memberId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.members.transferOwnership({ path: { memberId } })
        yield* Output.emit(global, OwnershipTransfer, result, ({ owner, previousOwner }) =>
          `${who(owner)} is now an owner; you (${previousOwner.id}) are now ${previousOwner.role === "admin" ? "an admin" : previousOwner.role}.`)
      }))
).pipe(Command.withDescription("Make an admin an owner and yourself an admin, in one step (owners only)."))

export const members = group("members", "List the active organization's members and manage their roles.", [
  list,
  role,
  remove,
  transferOwnership
])
