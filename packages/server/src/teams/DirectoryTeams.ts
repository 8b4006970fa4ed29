/**
 * The teams a directory (a SCIM connection) owns or links, for the scim area's TeamSync, inside the caller's
 * transaction: created with the connection set (`teams.scim_connection_id`: manual edits are refused while it is),
 * found by their external key, their members set at once (set-based: two statements whatever their number),
 * renamed, claimed and released. Team names stay unique: a name the organization has gets `" (SCIM)"` (then
 * `" (SCIM 2)"`, ...).
 */
import type { MembershipId, OrganizationId, ScimConnectionId, TeamId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { IdGenerator, makeId } from "../platform/Ids.js"
import { now } from "../platform/Time.js"

/** The longest team name (the API's `TeamName`). */
const MAX_NAME = 255

/** The names tried for a directory's team, in order: the group's, then with `" (SCIM)"`, `" (SCIM 2)"`, ... */
export const candidateNames = (name: string, count = 20): ReadonlyArray<string> => {
  const base = name.trim().replace(/\s+/g, " ") || "Directory group"
  return Array.from({ length: count }, (_, i) => {
    const suffix = i === 0 ? "" : i === 1 ? " (SCIM)" : ` (SCIM ${i})`
    return `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`
  })
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* IdGenerator

  /** The first candidate name no other team of the organization has (compared as the unique index does). */
  const freeName = (organizationId: OrganizationId, name: string, except: TeamId | null) =>
    Effect.gen(function*() {
      const candidates = candidateNames(name)
      const taken = new Set((yield* sql<{ name: string }>`
          SELECT lower(t.name) AS name FROM teams t
          WHERE t.organization_id = ${organizationId} AND lower(t.name) = ANY(${candidates.map((c) => c.toLowerCase())}::text[])
            AND t.id IS DISTINCT FROM ${except}`).map((row) => row.name))
      return candidates.find((candidate) => !taken.has(candidate.toLowerCase())) ??
        `${name.slice(0, MAX_NAME - 32)} (SCIM ${Date.now().toString(36)})`
    })

  /** A team owned by the connection, named `name` (or `"<name> (SCIM)"` when the organization has that name). */
  const create = (input: {
    readonly organizationId: OrganizationId
    readonly connectionId: ScimConnectionId
    readonly name: string
  }): Effect.Effect<TeamId, SqlError> =>
    Effect.gen(function*() {
      const id = yield* Effect.provideService(makeId("tem"), IdGenerator, ids)
      const at = yield* now
      const chosen = yield* freeName(input.organizationId, input.name, null)
      yield* sql`INSERT INTO teams (id, organization_id, name, created_by_membership_id, created_at, updated_at, scim_connection_id)
                 VALUES (${id}, ${input.organizationId}, ${chosen}, NULL, ${at}, ${at}, ${input.connectionId})`
      return id
    })

  const findByExternalKey = (organizationId: OrganizationId, key: string): Effect.Effect<Option.Option<TeamId>, SqlError> =>
    Effect.map(
      sql<{ id: TeamId }>`SELECT t.id FROM teams t WHERE t.organization_id = ${organizationId} AND t.external_key = ${key}`,
      (rows) => Option.fromNullishOr(rows[0]?.id)
    )

  /** The team's members become exactly these (set-based: two statements whatever their number). */
  const setMembers = (organizationId: OrganizationId, teamId: TeamId, memberIds: ReadonlyArray<MembershipId>): Effect.Effect<void, SqlError> =>
    Effect.gen(function*() {
      const at = yield* now
      yield* sql`DELETE FROM team_members
                 WHERE organization_id = ${organizationId} AND team_id = ${teamId}
                   AND membership_id NOT IN (SELECT k FROM unnest(${memberIds}::text[]) AS k)`
      if (memberIds.length > 0) {
        yield* sql`INSERT INTO team_members (organization_id, team_id, membership_id, created_at)
                   SELECT ${organizationId}, ${teamId}, m, ${at} FROM unnest(${memberIds}::text[]) AS m
                   ON CONFLICT DO NOTHING`
      }
      yield* sql`UPDATE teams SET updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${teamId}`
    })

  const rename = (organizationId: OrganizationId, teamId: TeamId, name: string): Effect.Effect<void, SqlError> =>
    Effect.gen(function*() {
      const at = yield* now
      const chosen = yield* freeName(organizationId, name, teamId)
      yield* sql`UPDATE teams SET name = ${chosen}, updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${teamId}`
    })

  /** An existing team (linked by its external key) becomes the connection's: manual edits refused while linked. */
  const claim = (organizationId: OrganizationId, teamId: TeamId, connectionId: ScimConnectionId): Effect.Effect<void, SqlError> =>
    Effect.asVoid(sql`UPDATE teams SET scim_connection_id = ${connectionId} WHERE organization_id = ${organizationId} AND id = ${teamId}`)

  /** The team is no longer the directory's: an ordinary team, manual edits allowed again. */
  const release = (organizationId: OrganizationId, teamId: TeamId): Effect.Effect<void, SqlError> =>
    Effect.asVoid(sql`UPDATE teams SET scim_connection_id = NULL WHERE organization_id = ${organizationId} AND id = ${teamId}`)

  return { create, findByExternalKey, setMembers, rename, claim, release } as const
})

export class DirectoryTeams extends Context.Service<DirectoryTeams>()("@orgplane/server/teams/DirectoryTeams", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
