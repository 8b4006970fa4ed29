/**
 * Reconcile a connection: what the directory said (its Users' `active`, deletions, its Groups and their members)
 * made true again in the organization where something drifted (a membership suspended or restored by hand, a team
 * missing or holding other members, a linked team that appeared since, a role the rules give). Answers what it
 * checked and each repair it made; runs in one transaction.
 *
 * DirectoryTeams is taken when the service is made (TeamSync needs it too); its `layer` leaves it to the caller.
 */
import type { OrganizationId, ScimConnectionId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { transaction } from "../platform/Sql.js"
import { DirectoryTeams } from "../teams/DirectoryTeams.js"
import { DirectoryMembers } from "./DirectoryMembers.js"
import { GroupsRepository, ScimGroupRow } from "./GroupsRepository.js"
import { type SyncConnection, TeamSync } from "./TeamSync.js"

export interface Repair {
  readonly resourceType: "User" | "Group"
  readonly resourceId: string
  readonly change: string
}

const make = Effect.gen(function*() {
  const groups = yield* GroupsRepository
  const sync = yield* TeamSync
  const members = yield* DirectoryMembers
  const teams = yield* DirectoryTeams

  /** The body of the reconcile transaction (the caller ends it and records the event). */
  const run = Effect.fn("Reconcile.run")(function*(connection: SyncConnection) {
    const scope = { organizationId: connection.organizationId, connectionId: connection.connectionId }
    const repaired: Array<Repair> = []
    const user = (resourceId: string, change: string) => repaired.push({ resourceType: "User", resourceId, change })

    const users = yield* groups.userStates(scope)
    for (const state of users) {
      if (state.deleted) {
        if (!state.removed) {
          yield* members.remove(connection.organizationId, state.membershipId)
          user(state.membershipId, "membership removed: the directory deleted the User")
        }
      } else if (state.active && state.suspended && !state.removed) {
        yield* members.restore(connection.organizationId, state.membershipId)
        user(state.membershipId, "membership restored: the User is active in the directory")
      } else if (!state.active && !state.suspended && !state.removed) {
        yield* members.suspend(connection.organizationId, state.membershipId)
        user(state.membershipId, "membership suspended: the User is inactive in the directory")
      }
    }

    const all = yield* groups.all(scope)
    for (const before of all) {
      const scoped = { ...scope, id: before.id }
      let teamId = before.teamId
      if (connection.groupMappingMode === "metadata_only" && teamId !== null) {
        yield* sync.groupDeleted(connection, before)
        teamId = null
        repaired.push({ resourceType: "Group", resourceId: before.id, change: "team released: the connection maps no teams" })
      } else if (connection.groupMappingMode !== "metadata_only") {
        const wanted = connection.groupMappingMode === "create_teams" && teamId !== null
          ? teamId
          : yield* sync.teamForGroup(connection, before)
        if (wanted !== teamId) {
          if (teamId !== null) yield* teams.release(connection.organizationId, teamId)
          teamId = wanted
          repaired.push({
            resourceType: "Group",
            resourceId: before.id,
            change: wanted === null ? "team unlinked: no team has the group's externalId" : `team ${wanted} now maps the group`
          })
        }
      }
      if (teamId !== before.teamId) yield* groups.setTeam({ ...scoped, teamId })
      if (teamId === null) continue
      const want = yield* groups.activeMemberIds(scoped)
      const have = new Set<string>(yield* groups.teamMemberIds(connection.organizationId, teamId))
      const wantSet = new Set<string>(want)
      const added = want.filter((id) => !have.has(id)).length
      const removed = [...have].filter((id) => !wantSet.has(id)).length
      if (added + removed > 0) {
        yield* sync.syncMembers(scope, new ScimGroupRow({ ...before, teamId }))
        repaired.push({
          resourceType: "Group",
          resourceId: before.id,
          change: `team members: ${added} added, ${removed} removed`
        })
      }
    }

    const live = users.filter((state) => !state.deleted && !state.removed).map((state) => state.membershipId)
    for (const role of yield* sync.applyRoleRules(connection, live)) {
      user(role.id, `role set to ${role.role} by the connection's group rules`)
    }
    return { checked: users.length + all.length, repaired }
  })

  /**
   * Reconciles the connection in one transaction (the management service authorizes the caller first). Fails with
   * None when the organization has no such connection.
   */
  const reconcile = Effect.fn("Reconcile.reconcile")((scope: { readonly organizationId: OrganizationId; readonly connectionId: ScimConnectionId }) =>
    transaction(Effect.flatMap(groups.connection(scope), Option.match({
      onNone: () => Effect.succeed(Option.none<{ readonly checked: number; readonly repaired: ReadonlyArray<Repair> }>()),
      onSome: (settings) => Effect.map(run({ ...scope, ...settings }), Option.some)
    }))))

  return { run, reconcile } as const
})

export class Reconcile extends Context.Service<Reconcile>()("@orgplane/server/scim/Reconcile", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      GroupsRepository.layer,
      TeamSync.layer,
      DirectoryMembers.layer
    ])
  )
}
