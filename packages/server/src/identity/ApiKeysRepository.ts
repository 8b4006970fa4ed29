/**
 * Storage of organization API keys: only the key's hash is kept.
 */
import { type Action, Actions, ApiKey, ApiKeyId, ApiKeyScope, MembershipId, OrganizationId, SessionId, SsoConnectionId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute, findAll, findOne, trusted } from "../platform/Statements.js"
import { CallerColumns, callerColumns } from "./MembershipsRepository.js"
import { assuranceColumns, SessionAssurance } from "./SsoEnforcement.js"

/** Scopes as stored: the actions, space-separated (few, read on every request: no array type to vary between databases). */
export const ScopesColumn = Schema.String.pipe(Schema.decodeTo(Schema.Array(ApiKeyScope), {
  decode: SchemaGetter.transform((text) => parseScopes(text)),
  encode: SchemaGetter.transform((scopes) => scopes.join(" "))
}))

/** The stored scopes as actions (an action the table no longer has is dropped: the key cannot take it). */
export const parseScopes = (text: string): ReadonlyArray<Action> => {
  const known: ReadonlyArray<string> = Actions
  return text.split(" ").filter((scope): scope is Action => known.includes(scope))
}

export class ApiKeyRow extends Model.Class<ApiKeyRow>("ApiKeyRow")({
  id: Model.GeneratedByApp(ApiKeyId),
  organizationId: OrganizationId,
  /** The member the key acts as (and who created it). */
  membershipId: MembershipId,
  name: ApiKey.fields.name,
  prefix: ApiKey.fields.prefix,
  keyHash: Model.Sensitive(Schema.String),
  createdAt: DateColumn,
  expiresAt: Schema.NullOr(DateColumn),
  lastUsedAt: Schema.NullOr(DateColumn),
  /**
   * How the maker authenticated when making it (copied from their session, or from the key they made it with): the
   * SSO connection and the organization it authenticated; both null outside an SSO session (SsoEnforcement.ts).
   */
  ssoConnectionId: Schema.NullOr(SsoConnectionId),
  authenticatedOrganizationId: Schema.NullOr(OrganizationId),
  /** The actions it may take, space-separated (`ScopesColumn`); null for a key made before scopes (its maker's whole role). */
  scopes: Schema.NullOr(ScopesColumn),
  /** The key it was made with; revoking that key revokes this one. */
  parentApiKeyId: Schema.NullOr(ApiKeyId)
}) {}

/** The API's key from a row (decoded, so valid: the class does not check it again). */
const toApiKey = (row: Omit<ApiKeyRow, "keyHash" | "organizationId" | "ssoConnectionId" | "authenticatedOrganizationId">) =>
  new ApiKey({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdByOrgMembershipId: row.membershipId,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    scopes: row.scopes,
    parentApiKeyId: row.parentApiKeyId
  }, { disableChecks: true })

/** Newest first. */
const newestFirst = Keyset.make<ApiKey>("api-keys", "desc", [{ column: "id", value: (key) => key.id }])

const ResolvedKey = Schema.Struct({
  apiKeyId: ApiKeyId,
  keyOrganizationId: OrganizationId,
  lastUsedAt: Schema.NullOr(DateColumn),
  /** Stored text (`parseScopes`). */
  scopes: Schema.NullOr(Schema.String),
  ...CallerColumns.fields,
  ...SessionAssurance.fields
})

/** How a credential's holder authenticated: what a key made with it records. */
const MakerAssurance = Schema.Struct({ ssoConnectionId: Schema.NullOr(SsoConnectionId), authenticatedOrganizationId: Schema.NullOr(OrganizationId) })

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: ApiKeyId })

const makeApiKeysRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = execute({ Request: ApiKeyRow.insert, execute: (row) => sql`INSERT INTO api_keys ${sql.insert(row)}` })
  const insert = (row: Omit<typeof ApiKeyRow.insert.Type, "lastUsedAt">) =>
    Effect.as(insertRow({ ...row, lastUsedAt: null }), toApiKey({ ...row, lastUsedAt: null }))

  // The caller's and SSO's columns, read on every request with a key, built once (they name no value).
  const resolvedColumns = sql`${callerColumns(sql)},
                   ${assuranceColumns(sql, sql`k.organization_id`, false, "k")}`

  /**
   * Authentication in one statement: the unexpired key with this hash, with the membership it acts as (while
   * its member is still in the organization and not suspended, and its person's account is not disabled: disabling
   * keeps the keys, refused until it is enabled again), the organization, and what SSO enforcement reads of
   * the key (how its maker authenticated, and the organization's policy).
   */
  const resolve = findOne({
    Request: Schema.Struct({ keyHash: Schema.String, at: DateColumn }),
    // Read on every authenticated request: taken as the statement's columns type it, without checking each id and
    // date again (`trusted`, as for long lists); `ResolvedKey` says what they are.
    Result: trusted<typeof ResolvedKey.Type>(),
    execute: ({ at, keyHash }) =>
      sql`SELECT k.id AS api_key_id, k.organization_id AS key_organization_id, k.last_used_at, k.scopes, ${resolvedColumns}
            FROM api_keys k
            JOIN memberships m ON m.organization_id = k.organization_id AND m.id = k.membership_id
                               AND m.removed_at IS NULL AND m.suspended_at IS NULL AND m.user_id IS NOT NULL
            JOIN users u ON u.id = m.user_id AND u.disabled_at IS NULL AND u.deleted_at IS NULL
            JOIN organizations o ON o.id = k.organization_id AND o.deleted_at IS NULL
            LEFT JOIN sso_policies p ON p.organization_id = k.organization_id
            WHERE k.key_hash = ${keyHash} AND (k.expires_at IS NULL OR k.expires_at > ${at})`
  })

  /**
   * What became of a key `resolve` found no caller for (the 401's reason): none with its hash (never made, or revoked:
   * revoking deletes), expired at `at`, or a key that acts for no one (its member, account or organization gone).
   */
  const fate = findOne({
    Request: Schema.Struct({ keyHash: Schema.String, at: DateColumn }),
    Result: Schema.Struct({ expired: Schema.Boolean }),
    execute: ({ at, keyHash }) =>
      sql`SELECT (k.expires_at IS NOT NULL AND k.expires_at <= ${at}) AS expired FROM api_keys k WHERE k.key_hash = ${keyHash}`
  })

  /** How the holder of a session authenticated, as a key made with it records it. */
  const sessionAssurance = findOne({
    Request: SessionId,
    Result: MakerAssurance,
    execute: (id) => sql`SELECT sso_connection_id, authenticated_organization_id FROM sessions WHERE id = ${id}`
  })

  const touch = execute({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE api_keys SET last_used_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  const listRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, page: Keyset.PageRequest }),
    Result: ApiKeyRow,
    execute: ({ organizationId, page }) =>
      sql`SELECT * FROM api_keys WHERE organization_id = ${organizationId} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const list = (organizationId: OrganizationId, query: Keyset.PageQuery) =>
    Keyset.page(newestFirst, query, (page) => Effect.map(listRows({ organizationId, page }), (rows) => rows.map(toApiKey)))

  /**
   * Deletes the key and the keys made with it, and theirs: their ids; none when the organization
   * has no such key. (The foreign key cascades too; deleting them here names each, for the check at commit.)
   */
  const revoke = findAll({
    Request: Scoped,
    Result: Schema.Struct({ id: ApiKeyId }),
    execute: ({ id, organizationId }) =>
      sql`WITH RECURSIVE made (id) AS (
              SELECT id FROM api_keys WHERE organization_id = ${organizationId} AND id = ${id}
              UNION SELECT k.id FROM api_keys k JOIN made ON k.parent_api_key_id = made.id WHERE k.organization_id = ${organizationId}
            )
            DELETE FROM api_keys WHERE organization_id = ${organizationId} AND id IN (SELECT id FROM made)
            RETURNING id`
  })

  /** Deletes every key the person's memberships in the organization created: their ids. */
  const revokeForPerson = (input: { readonly organizationId: OrganizationId; readonly userId: UserId }) =>
    sql<{ id: ApiKeyId }>`DELETE FROM api_keys WHERE organization_id = ${input.organizationId}
          AND membership_id IN (SELECT id FROM memberships WHERE organization_id = ${input.organizationId} AND user_id = ${input.userId})
          RETURNING id`.pipe(Effect.map((rows) => rows.map((row) => row.id)))

  /**
   * The keys the person's memberships made, in every organization they ever joined (a deleted one's included: it may
   * be restored), newest first: what a password change or a reset reports.
   */
  const listForAccount = (userId: UserId) =>
    sql<{
      id: ApiKeyId
      organizationId: OrganizationId
      name: string
      prefix: string
      createdAt: Date
      expiresAt: Date | null
      lastUsedAt: Date | null
    }>`SELECT id, organization_id, name, prefix, created_at, expires_at, last_used_at FROM api_keys
          WHERE (organization_id, membership_id) IN (SELECT organization_id, id FROM memberships WHERE user_id = ${userId})
          ORDER BY id DESC`

  /**
   * Deletes every key the person's memberships made, in every organization they ever joined (a deleted one's too, so
   * restoring it brings none back), and the keys made with them: the ids of the person's own.
   */
  const revokeForAccount = (userId: UserId) =>
    sql<{ id: ApiKeyId }>`DELETE FROM api_keys
          WHERE (organization_id, membership_id) IN (SELECT organization_id, id FROM memberships WHERE user_id = ${userId})
          RETURNING id`.pipe(Effect.map((rows) => rows.map((row) => row.id)))

  /** The member's keys that still work at `at` (expired ones no longer count against the quota). */
  const countUnexpired = (input: { readonly organizationId: OrganizationId; readonly membershipId: MembershipId; readonly at: Date }) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM api_keys
          WHERE organization_id = ${input.organizationId} AND membership_id = ${input.membershipId}
            AND (expires_at IS NULL OR expires_at > ${input.at})`.pipe(Effect.map((rows) => rows[0]?.count ?? 0))

  /**
   * Keys of other organizations whose makers authenticated through the purged organization's SSO forget it (their
   * `authenticated_organization_id` would otherwise delete them with its row, by its foreign key): they count as
   * made outside SSO from then on, which is how SSO enforcement already treated another organization's SSO. How many.
   */
  const forgetAuthenticatingOrganization = Effect.fn("ApiKeysRepository.forgetAuthenticatingOrganization")(function*(organizationId: OrganizationId) {
    const others = yield* sql<{ organizationId: OrganizationId }>`
          /* instance-wide: the organizations holding keys made in the purged organization's SSO sessions (identity/OrganizationPurge.ts) */
          SELECT DISTINCT organization_id FROM api_keys
          WHERE authenticated_organization_id = ${organizationId} AND organization_id <> ${organizationId}`
    let forgotten = 0
    for (const other of others) {
      const rows = yield* sql<{ id: ApiKeyId }>`UPDATE api_keys SET authenticated_organization_id = NULL, sso_connection_id = NULL
              WHERE organization_id = ${other.organizationId} AND authenticated_organization_id = ${organizationId}
              RETURNING id`
      forgotten += rows.length
    }
    return forgotten
  })

  return {
    insert,
    resolve,
    fate,
    sessionAssurance,
    touch,
    list,
    revoke,
    revokeForPerson,
    listForAccount,
    revokeForAccount,
    countUnexpired,
    forgetAuthenticatingOrganization
  } as const
})

export class ApiKeysRepository extends Context.Service<ApiKeysRepository>()("@orgplane/server/identity/ApiKeysRepository", { make: makeApiKeysRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}
