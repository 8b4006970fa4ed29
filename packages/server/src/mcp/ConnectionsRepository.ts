/**
 * Storage of external MCP connections (`mcp_connections`) and the per-member credentials of `per_member` ones
 * (`mcp_member_credentials`), read here only to say whether a member is connected.
 *
 * For the other MCP modules: `findRow(organizationId, id)` and `lockRow` answer the whole row, ciphertext columns
 * included (`McpConnectionRow`: the API key, the shared tokens, the OAuth client secret, the tool policy and what
 * readiness needs), and `findMemberCredential` a member's own credential row (`McpMemberCredentialRow`). Decrypt
 * with platform/Crypto.ts; never return or log what they hold.
 */
import {
  ConfigObjectId,
  Conflict,
  ExternalMcpConnectionId,
  McpAuthType,
  McpCredentialHealth,
  McpCredentialMode,
  McpRegistrationSource,
  MembershipId,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findAll, findOne } from "../platform/Statements.js"
import { credentialColumns } from "../platform/StoredCredential.js"

/** A row of `mcp_connections`, as stored (secrets encrypted). */
export class McpConnectionRow extends Model.Class<McpConnectionRow>("McpConnectionRow")({
  id: Model.GeneratedByApp(ExternalMcpConnectionId),
  organizationId: OrganizationId,
  name: Schema.String,
  url: Schema.String,
  authType: McpAuthType,
  credentialMode: McpCredentialMode,
  /** `apikey`: the key, sent as `Authorization: Bearer <key>`. */
  apiKeyCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  /** The shared OAuth credential (`oauth` + `shared`); `connectedAt` is, for `none`, the last successful `initialize`. */
  ...credentialColumns,
  oauthIssuer: Schema.NullOr(Schema.String),
  oauthRequestedScopes: Schema.Array(Schema.String),
  oauthClientId: Schema.NullOr(Schema.String),
  oauthClientSecretCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  oauthRegistrationSource: Schema.NullOr(McpRegistrationSource),
  oauthTokenEndpointAuthMethod: Schema.NullOr(Schema.String),
  oauthRedirectUri: Schema.NullOr(Schema.String),
  oauthMetadata: Schema.NullOr(Schema.Unknown),
  /** Set when the MCP server names another authorization server: tools stay blocked until an admin reconnects. */
  oauthIssuerReviewRequiredAt: Schema.NullOr(DateColumn),
  toolPolicyAllDisabled: Schema.Boolean,
  toolPolicyDisabledTools: Schema.Array(Schema.String),
  toolPolicyUpdatedByMembershipId: Schema.NullOr(MembershipId),
  toolPolicyUpdatedAt: Schema.NullOr(DateColumn),
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** A row of `mcp_member_credentials`: one member's own OAuth credential on a `per_member` connection. */
export class McpMemberCredentialRow extends Model.Class<McpMemberCredentialRow>("McpMemberCredentialRow")({
  organizationId: OrganizationId,
  mcpConnectionId: ExternalMcpConnectionId,
  membershipId: MembershipId,
  ...credentialColumns,
  updatedAt: DateColumn
}) {}

/** A connection row with what its readers need besides: whether a grant reaches the reader, whether any member connected. */
export const McpConnectionView = Schema.Struct({
  ...McpConnectionRow.fields,
  /** A grant (any role) reaches the reader (`Access.usable`). */
  usable: Schema.Boolean,
  /** `per_member`: some member has an access token. */
  anyMemberConnected: Schema.Boolean
})
export type McpConnectionView = typeof McpConnectionView.Type

/** The latest content of an `mcp` config object. */
const McpDefinition = Schema.Struct({ configObjectId: ConfigObjectId, title: Schema.String, payload: Schema.Unknown })

/** Oldest first, over `mcp_connections_list_idx`. */
const byCreation = Keyset.make<McpConnectionView>("mcp_connections", "asc", [
  { column: "c.created_at", value: (row) => row.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "c.id", value: (row) => row.id }
])

export const connectionExists = (name: string) =>
  new Conflict({ error: "mcp_connection_exists", message: `The organization already has an MCP connection named "${name.slice(0, 100)}".` })

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: ExternalMcpConnectionId })
type Scoped = typeof Scoped.Type

/** What the two read statements take besides the organization: SQL conditions the service builds from the principal. */
export interface Reader {
  /** Whether a grant reaches the reader (alias `c`). */
  readonly usable: Statement.Fragment
  /** Which rows the reader may see at all (alias `c`). */
  readonly visible: Statement.Fragment
}

/** The new URL's effects on an `oauth` connection: what was issued for the old server goes. */
export interface OAuthChanges {
  readonly clientId?: string | undefined
  readonly clientSecretCiphertext?: string | undefined
  readonly issuer?: string | undefined
  readonly requestedScopes?: ReadonlyArray<string> | undefined
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** A text[] parameter (the driver's arrays would be spread by the statement compiler). */
  const textArray = (values: ReadonlyArray<string>) => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`

  const anyMemberConnected = sql`EXISTS (SELECT 1 FROM mcp_member_credentials m
      WHERE m.organization_id = c.organization_id AND m.mcp_connection_id = c.id AND m.access_token_ciphertext IS NOT NULL)`

  const findRowStatement = findOne({
    Request: Scoped,
    Result: McpConnectionRow,
    execute: ({ id, organizationId }) => sql`SELECT * FROM mcp_connections WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  /** The whole row, ciphertexts included; none for a missing or another organization's id. */
  const findRow = (organizationId: OrganizationId, id: ExternalMcpConnectionId) => findRowStatement({ organizationId, id })

  const lockRowStatement = findOne({
    Request: Scoped,
    Result: McpConnectionRow,
    execute: ({ id, organizationId }) =>
      sql`SELECT * FROM mcp_connections WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`
  })

  /** `findRow`, with the row locked for the rest of the transaction. */
  const lockRow = (organizationId: OrganizationId, id: ExternalMcpConnectionId) => lockRowStatement({ organizationId, id })

  const memberCredentialStatement = findOne({
    Request: Schema.Struct({ ...Scoped.fields, membershipId: MembershipId }),
    Result: McpMemberCredentialRow,
    execute: ({ id, membershipId, organizationId }) =>
      sql`SELECT * FROM mcp_member_credentials
            WHERE organization_id = ${organizationId} AND mcp_connection_id = ${id} AND membership_id = ${membershipId}`
  })

  /** A member's own credential on a connection, if they ever connected. */
  const findMemberCredential = (organizationId: OrganizationId, id: ExternalMcpConnectionId, membershipId: MembershipId) =>
    memberCredentialStatement({ organizationId, id, membershipId })

  const memberCredentialsStatement = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, membershipId: MembershipId, ids: Schema.Array(Schema.String) }),
    Result: McpMemberCredentialRow,
    execute: ({ ids, membershipId, organizationId }) =>
      sql`SELECT * FROM mcp_member_credentials
            WHERE organization_id = ${organizationId} AND membership_id = ${membershipId}
              AND mcp_connection_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`
  })

  /** One member's credentials on several connections, in one statement. */
  const memberCredentials = (organizationId: OrganizationId, membershipId: MembershipId, ids: ReadonlyArray<ExternalMcpConnectionId>) =>
    ids.length === 0 ? Effect.succeed([]) : memberCredentialsStatement({ organizationId, membershipId, ids })

  const viewSelect = (reader: Reader) => sql`SELECT c.*, ${reader.usable} AS usable, ${anyMemberConnected} AS any_member_connected FROM mcp_connections c`

  /** The reader's conditions travel with the request: fragments, not values (the statement is built once). */
  const ReaderRequest = Schema.declare((value: unknown): value is Reader => typeof value === "object" && value !== null)

  const viewRowStatement = findOne({
    Request: Schema.Struct({ ...Scoped.fields, reader: ReaderRequest }),
    Result: McpConnectionView,
    execute: ({ id, organizationId, reader }) =>
      sql`${viewSelect(reader)} WHERE c.organization_id = ${organizationId} AND c.id = ${id} AND ${reader.visible}`
  })

  /** One connection as `reader` sees it; none when missing, another organization's, or not visible to the reader. */
  const viewRow = (organizationId: OrganizationId, id: ExternalMcpConnectionId, reader: Reader) => viewRowStatement({ organizationId, id, reader })

  const listStatement = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, page: Keyset.PageRequest, reader: ReaderRequest }),
    Result: McpConnectionView,
    execute: ({ organizationId, page, reader }) =>
      sql`${viewSelect(reader)} WHERE ${
          sql.and([sql`c.organization_id = ${organizationId}`, reader.visible, page.after])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /** A page of the connections `reader` sees, oldest first. */
  const list = (organizationId: OrganizationId, query: Keyset.PageQuery, reader: Reader) =>
    Keyset.page(byCreation, query, (page) => listStatement({ organizationId, page, reader }))

  const allStatement = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, reader: ReaderRequest }),
    Result: McpConnectionView,
    execute: ({ organizationId, reader }) =>
      sql`${viewSelect(reader)} WHERE c.organization_id = ${organizationId} AND ${reader.visible} ORDER BY c.created_at, c.id`
  })

  /** Every connection `reader` sees, oldest first (for matching by URL). */
  const all = (organizationId: OrganizationId, reader: Reader) => allStatement({ organizationId, reader })

  const rowsStatement = findAll({
    Request: OrganizationId,
    Result: McpConnectionRow,
    execute: (organizationId) => sql`SELECT * FROM mcp_connections WHERE organization_id = ${organizationId} ORDER BY lower(name), id`
  })

  /** Every connection's whole row, ciphertexts included, whoever reads (the organization's document checks authority). */
  const rows = (organizationId: OrganizationId) => rowsStatement(organizationId)

  const definitionsStatement = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, ids: Schema.Array(Schema.String) }),
    Result: McpDefinition,
    execute: ({ ids, organizationId }) =>
      sql`SELECT DISTINCT ON (v.config_object_id) v.config_object_id, o.title, v.normalized_payload_json AS payload
            FROM config_object_versions v
            JOIN config_objects o ON o.organization_id = v.organization_id AND o.id = v.config_object_id
            WHERE v.organization_id = ${organizationId} AND o.object_type = 'mcp' AND o.deleted_at IS NULL
              AND v.config_object_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))
            ORDER BY v.config_object_id, v.number DESC`
  })

  /** The latest content of these `mcp` config objects (deleted ones left out), in one statement. */
  const mcpDefinitions = (organizationId: OrganizationId, ids: ReadonlyArray<ConfigObjectId>) =>
    ids.length === 0 ? Effect.succeed([]) : definitionsStatement({ organizationId, ids })

  const Insert = Schema.Struct({
    ...Scoped.fields,
    name: Schema.String,
    url: Schema.String,
    authType: McpAuthType,
    credentialMode: McpCredentialMode,
    apiKeyCiphertext: Schema.NullOr(Schema.String),
    connectedAt: Schema.NullOr(DateColumn),
    credentialHealth: McpCredentialHealth,
    credentialCheckedAt: Schema.NullOr(DateColumn),
    createdByMembershipId: Schema.NullOr(MembershipId),
    createdAt: DateColumn,
    updatedAt: DateColumn
  })

  const insertRow = execute({ Request: Insert, execute: (row) => sql`INSERT INTO mcp_connections ${sql.insert(row)}` })

  /** A new connection; 409 `mcp_connection_exists` on a name the organization has (ignoring case). */
  const insert = (row: typeof Insert.Type) => insertRow(row).pipe(catchUniqueViolation(() => connectionExists(row.name)))

  /** Sets the columns given (camelCase names, undefined ones skipped) and `updated_at`. */
  const setColumns = (scoped: Scoped, at: Date, columns: Record<string, unknown>) => {
    const changes: Record<string, unknown> = { updatedAt: at }
    for (const [key, value] of Object.entries(columns)) if (value !== undefined) changes[key] = value
    return sql`UPDATE mcp_connections SET ${sql.update(changes)} WHERE organization_id = ${scoped.organizationId} AND id = ${scoped.id}`
  }

  /** Renames, moves or re-keys a connection; 409 on a name clash. */
  const update = (
    scoped: Scoped,
    at: Date,
    changes: {
      readonly name?: string | undefined
      readonly url?: string | undefined
      readonly apiKeyCiphertext?: string | undefined
      /** A successful live check: connected and healthy now. */
      readonly checkedAt?: Date | undefined
    }
  ) =>
    setColumns(scoped, at, {
      name: changes.name,
      url: changes.url,
      apiKeyCiphertext: changes.apiKeyCiphertext,
      ...(changes.checkedAt === undefined
        ? {}
        : { connectedAt: changes.checkedAt, credentialHealth: "ready", credentialHealthReason: null, credentialCheckedAt: changes.checkedAt })
    }).pipe(Effect.asVoid, catchUniqueViolation(() => connectionExists(changes.name ?? "")))

  /** The OAuth settings an admin gave (client, secret, issuer, scopes); undefined members stay. */
  const setOAuth = (scoped: Scoped, at: Date, changes: OAuthChanges) =>
    Effect.asVoid(sql`UPDATE mcp_connections SET ${
        sql.csv([
          sql`updated_at = ${at}`,
          ...(changes.clientId === undefined
            ? []
            : [sql`oauth_client_id = ${changes.clientId}`, sql`oauth_registration_source = 'pre_registered'`]),
          ...(changes.clientSecretCiphertext === undefined ? [] : [sql`oauth_client_secret_ciphertext = ${changes.clientSecretCiphertext}`]),
          ...(changes.issuer === undefined ? [] : [sql`oauth_issuer = ${changes.issuer}`]),
          ...(changes.requestedScopes === undefined ? [] : [sql`oauth_requested_scopes = ${textArray(changes.requestedScopes)}`])
        ])
      } WHERE organization_id = ${scoped.organizationId} AND id = ${scoped.id}`)

  /**
   * What a new URL invalidates on an `oauth` connection: the shared tokens, every member's credential, pending
   * authorizations, the discovered metadata and issuer review, and a client registered dynamically with the old
   * authorization server (a pre-registered or metadata-document client is the admin's and stays).
   */
  const forgetServer = Effect.fn("McpConnectionsRepository.forgetServer")(function*(scoped: Scoped, at: Date) {
    const { id, organizationId } = scoped
    yield* sql`UPDATE mcp_connections SET
            access_token_ciphertext = NULL, refresh_token_ciphertext = NULL, token_type = NULL, granted_scopes = '{}',
            token_expires_at = NULL, credential_version = credential_version + 1, credential_health = 'unknown',
            credential_health_reason = NULL, credential_checked_at = NULL, connected_at = NULL, oauth_metadata = NULL,
            oauth_issuer_review_required_at = NULL,
            oauth_client_id = CASE WHEN oauth_registration_source = 'dynamic' THEN NULL ELSE oauth_client_id END,
            oauth_client_secret_ciphertext = CASE WHEN oauth_registration_source = 'dynamic' THEN NULL ELSE oauth_client_secret_ciphertext END,
            oauth_token_endpoint_auth_method = CASE WHEN oauth_registration_source = 'dynamic' THEN NULL ELSE oauth_token_endpoint_auth_method END,
            oauth_registration_source = CASE WHEN oauth_registration_source = 'dynamic' THEN NULL ELSE oauth_registration_source END,
            updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`
    yield* sql`DELETE FROM mcp_member_credentials WHERE organization_id = ${organizationId} AND mcp_connection_id = ${id}`
    yield* sql`DELETE FROM mcp_oauth_authorizations WHERE organization_id = ${organizationId} AND mcp_connection_id = ${id}`
  })

  /** Whether a row was deleted (its grants, member credentials and pending authorizations go with it: FKs cascade). */
  const remove = (scoped: Scoped) =>
    Effect.map(
      sql`DELETE FROM mcp_connections WHERE organization_id = ${scoped.organizationId} AND id = ${scoped.id} RETURNING id`,
      (rows) => rows.length > 0
    )

  const setToolPolicy = (
    scoped: Scoped,
    at: Date,
    policy: { readonly allDisabled: boolean; readonly disabledTools: ReadonlyArray<string>; readonly updatedBy: MembershipId | null }
  ) =>
    Effect.asVoid(sql`UPDATE mcp_connections SET tool_policy_all_disabled = ${policy.allDisabled},
          tool_policy_disabled_tools = ${textArray(policy.disabledTools)},
          tool_policy_updated_by_membership_id = ${policy.updatedBy}, tool_policy_updated_at = ${at}, updated_at = ${at}
        WHERE organization_id = ${scoped.organizationId} AND id = ${scoped.id}`)

  return {
    findRow,
    lockRow,
    findMemberCredential,
    memberCredentials,
    viewRow,
    list,
    all,
    rows,
    mcpDefinitions,
    insert,
    update,
    setOAuth,
    forgetServer,
    remove,
    setToolPolicy
  } as const
})

export class ConnectionsRepository extends Context.Service<ConnectionsRepository>()("@orgplane/server/mcp/ConnectionsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
