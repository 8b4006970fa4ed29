/** Storage of organization API keys: only the key's hash is kept. */
import { SqlClient } from "@effect/sql"
import { ApiKey, type ApiKeyId, type MembershipId, type OrganizationId, type UserId } from "@orgplane/schema"
import { Effect } from "effect"
import type { PageRequest } from "../platform/Cursor.js"
import { first } from "../platform/Sql.js"

interface ApiKeyRow {
  readonly id: ApiKeyId
  readonly organizationId: OrganizationId
  readonly membershipId: MembershipId
  readonly name: string
  readonly prefix: string
  readonly createdAt: Date
  readonly expiresAt: Date | null
  readonly lastUsedAt: Date | null
}

export interface ApiKeyPrincipal {
  readonly apiKeyId: ApiKeyId
  readonly organizationId: OrganizationId
  readonly membershipId: MembershipId
  readonly userId: UserId
  readonly lastUsedAt: Date | null
}

const toApiKey = (row: ApiKeyRow) =>
  new ApiKey({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdByOrgMembershipId: row.membershipId,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt
  })

export class ApiKeysRepository extends Effect.Service<ApiKeysRepository>()("@orgplane/server/ApiKeysRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (row: Omit<ApiKeyRow, "lastUsedAt"> & { readonly keyHash: string }) =>
      sql`INSERT INTO api_keys ${sql.insert(row)}`.pipe(Effect.as(toApiKey({ ...row, lastUsedAt: null })), Effect.orDie)

    /** The key with this hash, if it is unexpired at `at` and its member is still in the organization. */
    const findPrincipal = (keyHash: string, at: Date) =>
      sql<ApiKeyPrincipal>`
        SELECT k.id AS api_key_id, k.organization_id, k.membership_id, m.user_id, k.last_used_at
        FROM api_keys k JOIN memberships m ON m.id = k.membership_id
        WHERE k.key_hash = ${keyHash}
          AND (k.expires_at IS NULL OR k.expires_at > ${at})
          AND m.removed_at IS NULL AND m.user_id IS NOT NULL`.pipe(Effect.map(first), Effect.orDie)

    const touch = (id: ApiKeyId, at: Date) =>
      sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /** Newest first, keyset over (organization_id, id). */
    const list = (organizationId: OrganizationId, page: PageRequest) =>
      sql<ApiKeyRow>`
        SELECT id, organization_id, membership_id, name, prefix, created_at, expires_at, last_used_at FROM api_keys
        WHERE organization_id = ${organizationId}
          ${page.after ? sql`AND id < ${page.after[0]}` : sql``}
        ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.map((rows) => rows.map(toApiKey)), Effect.orDie)

    const remove = (organizationId: OrganizationId, id: ApiKeyId) =>
      sql<{ id: ApiKeyId }>`DELETE FROM api_keys WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    return { insert, findPrincipal, touch, list, remove } as const
  })
}) {}
