/**
 * `orgplane teams create | list | add | remove | rename | delete`: named groups of the active organization's
 * members. Any member may list; owners and admins change them.
 */
import { Args, Command, Options } from "@effect/cli"
import { CreateTeamRequest, MembershipId, SearchText, type Team, TeamId, TeamPage, TeamResponse } from "@orgplane/schema"
import { Effect, Option, Schema } from "effect"
import { UsageError } from "../Errors.js"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Paging from "../Paging.js"
import * as Target from "../Target.js"
import { group } from "./group.js"

const teamId = Inputs.arg(Args.text({ name: "teamId" }), "teamId", TeamId)
const teamName = Inputs.arg(Args.text({ name: "name" }), "name", CreateTeamRequest.fields.name)

/** The API takes at most this many member ids in one request. */
const MAX_MEMBER_IDS = 500

/** Each id once (the API counts a repeated id once, but its size limit counts every entry), at most 500. */
const distinctMembers = <A extends string>(ids: ReadonlyArray<A>, label: string) => {
  const distinct = [...new Set(ids)]
  return distinct.length > MAX_MEMBER_IDS
    ? Effect.fail(new UsageError({ message: `${label}: at most ${MAX_MEMBER_IDS} members at a time` }))
    : Effect.succeed(distinct)
}

const count = (team: Team) => `${team.memberIds.length} member${team.memberIds.length === 1 ? "" : "s"}`

const rows = (items: ReadonlyArray<Team>) =>
  Output.table(
    ["id", "name", "members", "created"],
    items.map((team) => [team.id, team.name, String(team.memberIds.length), Output.date(team.createdAt)])
  )

export const create = Command.make(
  "create",
  {
    name: teamName,
    members: Inputs.option(
      Options.text("member").pipe(Options.withDescription("A member (om_…) to put in the team; repeat for several."), Options.repeated),
      "--member",
      Schema.Array(MembershipId)
    ),
    global
  },
  ({ global, members, name }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const memberIds = yield* distinctMembers(members, "--member")
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.teams.create({
          payload: { name, ...(memberIds.length > 0 ? { memberIds } : {}) }
        })
        yield* Output.emit(global, TeamResponse, result, ({ team }) => `Created team ${team.name} (${team.id}) with ${count(team)}.`)
      }))
).pipe(Command.withDescription("Create a team, optionally with members (owners and admins)."))

export const list = Command.make(
  "list",
  {
    query: Inputs.option(
      Options.text("query").pipe(Options.withDescription("Only teams whose name contains this text (case-insensitive).")),
      "--query",
      SearchText
    ).pipe(Options.optional),
    member: Inputs.option(
      Options.text("member").pipe(Options.withDescription("Only teams this member (om_…) belongs to.")),
      "--member",
      MembershipId
    ).pipe(Options.optional),
    ...Paging.options,
    global
  },
  ({ global, member, query, ...paging }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        yield* Paging.check(paging)
        const client = yield* Target.connect(target, { authenticated: true })
        const filters = { ...Inputs.ifSome("q", query), ...Inputs.ifSome("memberId", member) }
        const result = yield* Paging.fetch(paging, (page) => client.teams.list({ urlParams: { ...filters, ...page } }))
        yield* Output.emit(global, TeamPage, result, ({ items }) => items.length === 0 ? "No teams." : rows(items))
        const command = [
          "teams list",
          ...Option.toArray(Option.map(query, (value) => `--query ${Paging.quote(value)}`)),
          ...Option.toArray(Option.map(member, (value) => `--member ${value}`))
        ].join(" ")
        yield* Paging.hint(global, "teams", command, result)
      }))
).pipe(Command.withDescription("List the active organization's teams by name (any member may)."))

export const add = Command.make(
  "add",
  {
    teamId,
    memberIds: Inputs.arg(Args.text({ name: "memberId" }).pipe(Args.atLeast(1)), "memberId", Schema.Array(MembershipId)),
    global
  },
  ({ global, memberIds, teamId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const distinct = yield* distinctMembers(memberIds, "memberId")
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.teams.addMembers({ path: { teamId }, payload: { memberIds: distinct } })
        yield* Output.emit(global, TeamResponse, result, ({ team }) => `Team ${team.name} (${team.id}) now has ${count(team)}.`)
      }))
).pipe(Command.withDescription("Add members (om_…) to a team; members already in it stay."))

const RemovedMember = Schema.Struct({ ok: Schema.Literal(true), team: TeamId, removed: MembershipId })

export const remove = Command.make(
  "remove",
  { teamId, memberId: Inputs.arg(Args.text({ name: "memberId" }), "memberId", MembershipId), global },
  ({ global, memberId, teamId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        yield* client.teams.removeMember({ path: { teamId, memberId } })
        yield* Output.emit(
          global,
          RemovedMember,
          { ok: true, team: teamId, removed: memberId },
          () => `Member ${memberId} is no longer in team ${teamId}; they stay in the organization.`
        )
      }))
).pipe(Command.withDescription("Take a member out of a team (succeeds also when they were not in it)."))

export const rename = Command.make(
  "rename",
  { teamId, name: teamName, global },
  ({ global, name, teamId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* client.teams.update({ path: { teamId }, payload: { name } })
        yield* Output.emit(global, TeamResponse, result, ({ team }) => `Renamed team ${team.id} to ${team.name}.`)
      }))
).pipe(Command.withDescription("Rename a team."))

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: TeamId })

export const del = Command.make(
  "delete",
  { teamId, global },
  ({ global, teamId }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        yield* client.teams.delete({ path: { teamId } })
        yield* Output.emit(
          global,
          Deleted,
          { ok: true, deleted: teamId },
          () => `Deleted team ${teamId} and everything assigned to it; its members stay in the organization.`
        )
      }))
).pipe(Command.withDescription("Delete a team with its memberships and everything assigned to it (members stay in the organization)."))

export const teams = group("teams", "Manage the active organization's teams (owners and admins; any member may list).", [
  create,
  list,
  add,
  remove,
  rename,
  del
])
