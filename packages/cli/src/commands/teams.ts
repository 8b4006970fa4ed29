/**
 * `orgplane teams create | list | add | remove | rename | delete`: named groups of the active organization's
 * members. Any member may list; owners and admins change them.
 */
import {
  CreateTeamRequest,
  MemberIds,
  MembershipId,
  SearchText,
  type Team,
  TeamExternalKey,
  TeamId,
  TeamPage,
  TeamResponse,
  TeamsApi
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const teamId = Inputs.argument("teamId", { schema: TeamId, description: "The team (tem_…)." })
const teamName = Inputs.argument("name", { schema: CreateTeamRequest.fields.name })

/** Each id once (the API counts a repeated id once, but its size limit counts every entry), then the API's limit. */
const DistinctMemberIds = Schema.Array(MembershipId).pipe(Schema.decodeTo(Schema.toType(MemberIds), {
  decode: SchemaGetter.transform((ids: ReadonlyArray<MembershipId>) => [...new Set(ids)]),
  encode: SchemaGetter.transform((ids: ReadonlyArray<MembershipId>) => ids)
}))

const count = (team: Team) => `${team.memberIds.length} member${team.memberIds.length === 1 ? "" : "s"}`

export const create = Commands.endpoint("create", {
  summary: "Create a team, optionally with members (owners and admins).",
  inputs: {
    name: teamName,
    members: Inputs.repeatedText("member", {
      placeholder: "<memberId>",
      description: "A member (om_…) to put in the team.",
      schema: DistinctMemberIds
    }),
    externalKey: Inputs.optional(Inputs.text("external-key", {
      description: "The organization's own key for the team (unique), e.g. its directory group's id.",
      schema: TeamExternalKey
    }))
  },
  call: (client, { externalKey, members, name }) =>
    client.teams.create({
      payload: { name, ...(members.length > 0 ? { memberIds: members } : {}), ...Inputs.ifSome("externalKey", externalKey) }
    }),
  output: TeamResponse,
  human: ({ team }) => `Created team ${team.name} (${team.id}) with ${count(team)}.`
})

export const list = Commands.list("list", {
  summary: "List the active organization's teams by name (any member may).",
  noun: "teams",
  inputs: {
    query: Inputs.optional(Inputs.text("query", {
      description: "Only teams whose name contains this text (case-insensitive).",
      schema: SearchText
    })),
    member: Inputs.optional(Inputs.text("member", {
      placeholder: "<memberId>",
      description: "Only teams this member (om_…) belongs to.",
      schema: MembershipId
    }))
  },
  call: (client, { member, query }, page) =>
    client.teams.list({ query: { ...Inputs.ifSome("q", query), ...Inputs.ifSome("memberId", member), ...page } }),
  output: TeamPage,
  columns: [
    ["id", (team) => team.id],
    ["name", (team) => team.name],
    ["members", (team) => String(team.memberIds.length)],
    ["created", (team) => Output.date(team.createdAt)]
  ]
})

export const add = Commands.endpoint("add", {
  summary: "Add members (om_…) to a team; members already in it stay.",
  inputs: {
    teamId,
    memberIds: Inputs.variadic("memberId", { schema: DistinctMemberIds, description: "Members (om_…) to add." })
  },
  call: (client, { memberIds, teamId }) => client.teams.addMembers({ params: { teamId }, payload: { memberIds } }),
  output: TeamResponse,
  human: ({ team }) => `Team ${team.name} (${team.id}) now has ${count(team)}.`
})

const RemovedMember = Schema.Struct({ ok: Schema.Literal(true), team: TeamId, removed: MembershipId })

export const remove = Commands.endpoint("remove", {
  summary: "Take a member out of a team (succeeds also when they were not in it).",
  inputs: { teamId, memberId: Inputs.argument("memberId", { schema: MembershipId, description: "The member (om_…)." }) },
  call: (client, { memberId, teamId }) =>
    client.teams.removeMember({ params: { teamId, memberId } }).pipe(
      Effect.as({ ok: true as const, team: teamId, removed: memberId })
    ),
  output: RemovedMember,
  human: ({ removed, team }) => `Member ${removed} is no longer in team ${team}; they stay in the organization.`
})

export const rename = Commands.endpoint("rename", {
  summary: "Rename a team.",
  inputs: { teamId, name: teamName },
  call: (client, { name, teamId }) => client.teams.update({ params: { teamId }, payload: { name } }),
  output: TeamResponse,
  human: ({ team }) => `Renamed team ${team.id} to ${team.name}.`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: TeamId })

export const del = Commands.endpoint("delete", {
  summary: "Delete a team with everything assigned to it; its members stay in the organization.",
  inputs: { teamId },
  call: (client, { teamId }) => client.teams.delete({ params: { teamId } }).pipe(Effect.as({ ok: true as const, deleted: teamId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted team ${deleted} and everything assigned to it; its members stay in the organization.`
})

export const teams = Commands.group("teams", "Manage the active organization's teams (owners and admins; any member may list).", [
  create,
  list,
  add,
  remove,
  rename,
  del
], [TeamsApi])
