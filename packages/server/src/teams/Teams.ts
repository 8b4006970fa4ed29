/**
 * Teams: created and changed by owners and admins (or the system), read by every member.
 */
import { Conflict, type MembershipId, NotFound, type OrganizationId, Team, type TeamId, type TeamListQuery } from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { memberNotFound, Memberships } from "../identity/Memberships.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { externalKeyTaken, TeamsRepository } from "./TeamsRepository.js"

export const teamNotFound = () => new NotFound({ error: "team_not_found", message: "Team not found." })

export const teamManagedByDirectory = () =>
  new Conflict({
    error: "team_managed_by_directory",
    message: "The organization's directory (SCIM) manages this team: change it in the directory."
  })

const make = Effect.gen(function*() {
  const teams = yield* TeamsRepository
  const memberships = yield* Memberships

  const read = (principal: Principal, id: TeamId) =>
    Effect.flatMap(teams.find({ organizationId: principal.organization.id, id }), Option.match({
      onNone: () => Effect.fail(teamNotFound()),
      onSome: (team) => Effect.succeed({ team })
    }))

  /** Fails with 404 `member_not_found` unless every id is an active member; locks them against removal. */
  const requireActive = (principal: Principal, ids: ReadonlyArray<MembershipId>) =>
    Effect.flatMap(memberships.missingActive(principal.organization.id, ids), (missing) =>
      missing.length === 0 ? Effect.void : Effect.fail(memberNotFound(missing[0])))

  /** A change to one existing team, in a transaction holding the team's lock; answers the new team. */
  const change = <E, R>(
    principal: Principal,
    id: TeamId,
    apply: (team: { readonly organizationId: OrganizationId; readonly id: TeamId }, at: Date) => Effect.Effect<unknown, E, R>,
    directoryManaged: "refuse" | "allow" = "refuse"
  ) =>
    Effect.andThen(
      authorize(principal, "teams.manage"),
      transaction(
        Effect.gen(function*() {
          const team = { organizationId: principal.organization.id, id }
          if (!(yield* teams.lock(team))) return yield* teamNotFound()
          if (directoryManaged === "refuse" && (yield* teams.managedBy(team)) !== null) return yield* teamManagedByDirectory()
          const before = yield* read(principal, id)
          const at = yield* now
          yield* apply(team, at)
          yield* teams.touch({ ...team, at })
          const after = yield* read(principal, id)
          yield* describeChange(Team, before.team, after.team)
          return after
        })
      )
    )

  const create = Effect.fn("Teams.create")(function*(
    principal: Principal,
    input: { readonly name: string; readonly memberIds?: ReadonlyArray<MembershipId> | undefined; readonly externalKey?: string | undefined }
  ) {
    yield* authorize(principal, "teams.manage")
    return yield* transaction(
      Effect.gen(function*() {
        const memberIds = Arr.dedupe(input.memberIds ?? [])
        yield* requireActive(principal, memberIds)
        const id = yield* makeId("tem")
        const at = yield* now
        const organizationId = principal.organization.id
        const externalKey = input.externalKey ?? null
        if (externalKey !== null && (yield* teams.externalKeyInUse(organizationId, externalKey, null))) {
          return yield* externalKeyTaken(externalKey)
        }
        yield* teams.insert({
          id,
          organizationId,
          name: input.name,
          createdByMembershipId: actingMembershipId(principal),
          externalKey,
          scimConnectionId: null,
          createdAt: at,
          updatedAt: at
        })
        yield* teams.addMembers({ organizationId, id, memberIds, at })
        return yield* read(principal, id)
      })
    )
  })

  const list = Effect.fn("Teams.list")(function*(principal: Principal, query: TeamListQuery) {
    yield* authorize(principal, "teams.read")
    return yield* orUnavailable(teams.list(principal.organization.id, query))
  })

  const get = Effect.fn("Teams.get")(function*(principal: Principal, id: TeamId) {
    yield* authorize(principal, "teams.read")
    return yield* orUnavailable(read(principal, id))
  })

  const update = Effect.fn("Teams.update")((
    principal: Principal,
    id: TeamId,
    input: {
      readonly name?: string | undefined
      readonly memberIds?: ReadonlyArray<MembershipId> | undefined
      readonly externalKey?: string | null | undefined
    }
  ) =>
    change(principal, id, (team, at) =>
      Effect.gen(function*() {
        // The external key stays editable on a directory-managed team: it is what links a team to a group.
        if ((input.name !== undefined || input.memberIds !== undefined) && (yield* teams.managedBy(team)) !== null) {
          return yield* teamManagedByDirectory()
        }
        if (input.externalKey !== undefined) {
          if (input.externalKey !== null && (yield* teams.externalKeyInUse(team.organizationId, input.externalKey, team.id))) {
            return yield* externalKeyTaken(input.externalKey)
          }
          yield* teams.setExternalKey(team, input.externalKey)
        }
        if (input.name !== undefined) yield* teams.rename(team, input.name, at)
        if (input.memberIds !== undefined) {
          const memberIds = Arr.dedupe(input.memberIds)
          yield* requireActive(principal, memberIds)
          yield* teams.keepOnlyMembers({ ...team, memberIds })
          yield* teams.addMembers({ ...team, memberIds, at })
        }
      }), "allow"))

  const addMembers = Effect.fn("Teams.addMembers")((principal: Principal, id: TeamId, memberIds: ReadonlyArray<MembershipId>) =>
    change(principal, id, (team, at) => {
      const unique = Arr.dedupe(memberIds)
      return Effect.andThen(requireActive(principal, unique), teams.addMembers({ ...team, memberIds: unique, at }))
    }))

  /** Idempotent for a member who is not in the team; 404 only for an id that was never in the organization. */
  const removeMember = Effect.fn("Teams.removeMember")((principal: Principal, id: TeamId, memberId: MembershipId) =>
    Effect.asVoid(change(principal, id, (team) =>
      Effect.gen(function*() {
        if (Option.isNone(yield* memberships.find({ organizationId: team.organizationId, id: memberId }))) {
          return yield* memberNotFound(memberId)
        }
        yield* teams.removeMembers({ ...team, memberIds: [memberId] })
      }))))

  const remove = Effect.fn("Teams.remove")(function*(principal: Principal, id: TeamId) {
    yield* authorize(principal, "teams.manage")
    return yield* transaction(Effect.gen(function*() {
      const team = { organizationId: principal.organization.id, id }
      if (!(yield* teams.lock(team))) return yield* teamNotFound()
      if ((yield* teams.managedBy(team)) !== null) return yield* teamManagedByDirectory()
      yield* teams.remove(team)
    }))
  })

  return { create, list, get, update, addMembers, removeMember, remove } as const
})

export class Teams extends Context.Service<Teams>()("@orgplane/server/teams/Teams", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide([TeamsRepository.layer, Memberships.layer]))
}
