/** Teams: created and changed by owners and admins, read by every member. */
import {
  type MembershipId,
  NotFound,
  type OrganizationId,
  type TeamId,
  type TeamListQuery
} from "@orgplane/schema"
import { Array, Effect, Option } from "effect"
import { type MemberContext, requireRole } from "../platform/Auth.js"
import * as Cursor from "../platform/Cursor.js"
import { makeId } from "../platform/Ids.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Members, memberNotFound } from "./Members.js"
import { MembersRepository } from "./MembersRepository.js"
import { TeamsRepository } from "./TeamsRepository.js"

const teamNotFound = () => new NotFound({ error: "team_not_found", message: "Team not found." })

export class Teams extends Effect.Service<Teams>()("@orgplane/server/Teams", {
  effect: Effect.gen(function*() {
    const teams = yield* TeamsRepository
    const members = yield* Members
    const membersRepository = yield* MembersRepository

    const read = (organizationId: OrganizationId, id: TeamId) =>
      Effect.flatMap(teams.find(organizationId, id), Option.match({
        onNone: () => Effect.fail(teamNotFound()),
        onSome: (team) => Effect.succeed({ team })
      }))

    /** An admin's change to one existing team, in a transaction holding the team's lock; answers the new team. */
    const change = <E, R>(caller: MemberContext, id: TeamId, apply: (at: Date) => Effect.Effect<unknown, E, R>) =>
      Effect.zipRight(
        requireRole(caller, "admin"),
        transaction(
          Effect.gen(function*() {
            if (!(yield* teams.lock(caller.organization.id, id))) return yield* teamNotFound()
            const at = yield* now
            yield* apply(at)
            yield* teams.touch(id, at)
            return yield* read(caller.organization.id, id)
          })
        )
      )

    const create = (caller: MemberContext, input: { readonly name: string; readonly memberIds?: ReadonlyArray<MembershipId> | undefined }) =>
      Effect.zipRight(
        requireRole(caller, "admin"),
        transaction(
          Effect.gen(function*() {
            const memberIds = Array.dedupe(input.memberIds ?? [])
            yield* members.requireActive(caller, memberIds)
            const id = yield* makeId<TeamId>("tem")
            const at = yield* now
            yield* teams.insert({
              id,
              organizationId: caller.organization.id,
              name: input.name,
              createdByMembershipId: caller.membership.id,
              createdAt: at
            })
            yield* teams.addMembers(id, memberIds, at)
            return yield* read(caller.organization.id, id)
          })
        )
      )

    const list = (caller: MemberContext, query: TeamListQuery) =>
      Effect.gen(function*() {
        const page = yield* Cursor.request(query, 2)
        const rows = yield* teams.list(caller.organization.id, query, page)
        return Cursor.page(rows, page.limit, (team) => [team.name, team.id])
      })

    const get = (caller: MemberContext, id: TeamId) => read(caller.organization.id, id)

    const update = (
      caller: MemberContext,
      id: TeamId,
      input: { readonly name?: string | undefined; readonly memberIds?: ReadonlyArray<MembershipId> | undefined }
    ) =>
      change(caller, id, (at) =>
        Effect.gen(function*() {
          if (input.name !== undefined) yield* teams.rename(id, input.name, at)
          if (input.memberIds !== undefined) {
            const memberIds = Array.dedupe(input.memberIds)
            yield* members.requireActive(caller, memberIds)
            yield* teams.removeMembers(id, { keep: memberIds })
            yield* teams.addMembers(id, memberIds, at)
          }
        }))

    const addMembers = (caller: MemberContext, id: TeamId, memberIds: ReadonlyArray<MembershipId>) =>
      change(caller, id, (at) => {
        const unique = Array.dedupe(memberIds)
        return Effect.zipRight(members.requireActive(caller, unique), teams.addMembers(id, unique, at))
      })

    /** Idempotent for a member who is not in the team; 404 only for an id that was never in the organization. */
    const removeMember = (caller: MemberContext, id: TeamId, memberId: MembershipId) =>
      Effect.asVoid(change(caller, id, () =>
        Effect.gen(function*() {
          if (Option.isNone(yield* membersRepository.find(caller.organization.id, memberId))) {
            return yield* memberNotFound(memberId)
          }
          yield* teams.removeMembers(id, { only: [memberId] })
        })))

    const remove = (caller: MemberContext, id: TeamId) =>
      Effect.zipRight(
        requireRole(caller, "admin"),
        Effect.flatMap(teams.remove(caller.organization.id, id), (removed) => removed ? Effect.void : Effect.fail(teamNotFound()))
      )

    return { create, list, get, update, addMembers, removeMember, remove } as const
  }),
  dependencies: [TeamsRepository.Default, Members.Default, MembersRepository.Default]
}) {}
