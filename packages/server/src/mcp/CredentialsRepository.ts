/**
 * Storage of MCP connection credentials: the columns this area owns (the shared token columns and the `oauth_*`
 * client columns of `mcp_connections`, `mcp_member_credentials`, `mcp_oauth_authorizations`). The connection row
 * itself is read with ConnectionsRepository (`findRow`). Every write of a token is a compare-and-set on
 * `credential_version`, so a refresh never overwrites a newer one.
 */
import {
  ExternalMcpConnectionId,
  McpRegistrationSource,
  MembershipId,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { bindTokens, McpMemberTokens, McpSharedTokens, type TokenBindings } from "../platform/SecretColumns.js"
import { DateColumn, execute, findOne } from "../platform/Statements.js"
import { NewTokens, StoredCredential } from "../platform/StoredCredential.js"

/** Whose credential: the connection's shared one (`membershipId` null) or one member's. */
export const CredentialTarget = Schema.Struct({
  organizationId: OrganizationId,
  connectionId: ExternalMcpConnectionId,
  membershipId: Schema.NullOr(MembershipId)
})
export type CredentialTarget = typeof CredentialTarget.Type

/** Where a credential's tokens are bound: the connection's own row (shared), or the member's. */
export const tokenBindings = (target: CredentialTarget): TokenBindings =>
  target.membershipId === null
    ? bindTokens(McpSharedTokens, target.organizationId, target.connectionId)
    : bindTokens(McpMemberTokens, target.organizationId, target.connectionId, target.membershipId)

export const AuthorizationRow = Schema.Struct({
  organizationId: OrganizationId,
  id: Schema.String,
  mcpConnectionId: ExternalMcpConnectionId,
  membershipId: MembershipId,
  target: Schema.Literals(["shared", "member"]),
  codeVerifierCiphertext: Schema.String,
  redirectUri: Schema.String,
  oauthClientId: Schema.String,
  createdAt: DateColumn,
  expiresAt: DateColumn,
  usedAt: Schema.NullOr(DateColumn)
})
export type AuthorizationRow = typeof AuthorizationRow.Type

/** The OAuth client a connection uses, as registration or an admin left it. */
export const OAuthClientColumns = Schema.Struct({
  organizationId: OrganizationId,
  connectionId: ExternalMcpConnectionId,
  oauthClientId: Schema.String,
  oauthClientSecretCiphertext: Schema.NullOr(Schema.String),
  oauthRegistrationSource: McpRegistrationSource,
  oauthTokenEndpointAuthMethod: Schema.NullOr(Schema.String),
  oauthRedirectUri: Schema.String,
  oauthMetadata: Schema.Unknown,
  /** An admin connecting: ends an issuer review (they chose the authorization server now named). */
  endReview: Schema.Boolean,
  at: DateColumn
})
export type OAuthClientColumns = typeof OAuthClientColumns.Type

const Connection = Schema.Struct({ organizationId: OrganizationId, connectionId: ExternalMcpConnectionId })

const Member = Schema.Struct({ ...Connection.fields, membershipId: MembershipId })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findShared = findOne({
    Request: Connection,
    Result: StoredCredential,
    execute: ({ connectionId, organizationId }) =>
      sql`SELECT access_token_ciphertext, refresh_token_ciphertext, token_type, granted_scopes, token_expires_at,
                   credential_version, credential_health, credential_health_reason, connected_at
            FROM mcp_connections WHERE organization_id = ${organizationId} AND id = ${connectionId}`
  })

  const findMember = findOne({
    Request: Member,
    Result: StoredCredential,
    execute: ({ connectionId, membershipId, organizationId }) =>
      sql`SELECT access_token_ciphertext, refresh_token_ciphertext, token_type, granted_scopes, token_expires_at,
                   credential_version, credential_health, credential_health_reason, connected_at
            FROM mcp_member_credentials
            WHERE organization_id = ${organizationId} AND mcp_connection_id = ${connectionId} AND membership_id = ${membershipId}`
  })

  /** The credential of a target as it is now. */
  const find = (target: CredentialTarget): Effect.Effect<Option.Option<StoredCredential>, SqlError> =>
    target.membershipId === null
      ? findShared(target)
      : findMember({ ...target, membershipId: target.membershipId })

  /**
   * Writes refreshed tokens if the credential is still at `version`; false when another refresh (or a reconnect)
   * wrote first. A refresh that sent no new refresh token keeps the stored one.
   */
  const compareAndSet = (target: CredentialTarget, version: number, tokens: NewTokens, at: Date) => {
    const set = sql`access_token_ciphertext = ${tokens.accessTokenCiphertext},
              refresh_token_ciphertext = COALESCE(${tokens.refreshTokenCiphertext}, refresh_token_ciphertext),
              token_type = ${tokens.tokenType}, granted_scopes = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(tokens.grantedScopes)}::jsonb)),
              token_expires_at = ${tokens.tokenExpiresAt}, credential_version = credential_version + 1,
              credential_health = 'ready', credential_health_reason = NULL, credential_checked_at = ${at}`
    const statement = target.membershipId === null
      ? sql`UPDATE mcp_connections SET ${set}, updated_at = ${at}
              WHERE organization_id = ${target.organizationId} AND id = ${target.connectionId} AND credential_version = ${version}
              RETURNING credential_version`
      : sql`UPDATE mcp_member_credentials SET ${set}, updated_at = ${at}
              WHERE organization_id = ${target.organizationId} AND mcp_connection_id = ${target.connectionId}
                AND membership_id = ${target.membershipId} AND credential_version = ${version}
              RETURNING credential_version`
    return Effect.map(statement, (rows) => rows.length > 0)
  }

  /**
   * Marks the credential `reconnect_required` if it is still at `version` (the version stays: a refresh that
   * read the same version and got new tokens still writes them). False when it changed meanwhile.
   */
  const markReconnectRequired = (target: CredentialTarget, version: number, reason: string, at: Date) => {
    const statement = target.membershipId === null
      ? sql`UPDATE mcp_connections SET credential_health = 'reconnect_required', credential_health_reason = ${reason},
                credential_checked_at = ${at}, updated_at = ${at}
              WHERE organization_id = ${target.organizationId} AND id = ${target.connectionId} AND credential_version = ${version}
              RETURNING id`
      : sql`UPDATE mcp_member_credentials SET credential_health = 'reconnect_required', credential_health_reason = ${reason},
                credential_checked_at = ${at}, updated_at = ${at}
              WHERE organization_id = ${target.organizationId} AND mcp_connection_id = ${target.connectionId}
                AND membership_id = ${target.membershipId} AND credential_version = ${version}
              RETURNING membership_id`
    return Effect.map(statement, (rows) => rows.length > 0)
  }

  /**
   * Stores the tokens of a completed authorization (a new credential: the version moves on, health `ready`). A
   * shared credential connected again also ends an issuer review: the admin who connected chose the server.
   */
  const store = (target: CredentialTarget, tokens: NewTokens, at: Date) =>
    target.membershipId === null
      ? sql`UPDATE mcp_connections SET access_token_ciphertext = ${tokens.accessTokenCiphertext},
                refresh_token_ciphertext = ${tokens.refreshTokenCiphertext}, token_type = ${tokens.tokenType},
                granted_scopes = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(tokens.grantedScopes)}::jsonb)), token_expires_at = ${tokens.tokenExpiresAt},
                credential_version = credential_version + 1, credential_health = 'ready', credential_health_reason = NULL,
                credential_checked_at = ${at}, connected_at = ${at}, oauth_issuer_review_required_at = NULL, updated_at = ${at}
              WHERE organization_id = ${target.organizationId} AND id = ${target.connectionId}`.pipe(Effect.asVoid)
      : sql`INSERT INTO mcp_member_credentials (organization_id, mcp_connection_id, membership_id, access_token_ciphertext,
                refresh_token_ciphertext, token_type, granted_scopes, token_expires_at, credential_version, credential_health,
                credential_checked_at, connected_at, updated_at)
              VALUES (${target.organizationId}, ${target.connectionId}, ${target.membershipId}, ${tokens.accessTokenCiphertext},
                ${tokens.refreshTokenCiphertext}, ${tokens.tokenType}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(tokens.grantedScopes)}::jsonb)),
                ${tokens.tokenExpiresAt}, 1, 'ready', ${at}, ${at}, ${at})
              ON CONFLICT (organization_id, mcp_connection_id, membership_id) DO UPDATE SET
                access_token_ciphertext = EXCLUDED.access_token_ciphertext,
                refresh_token_ciphertext = EXCLUDED.refresh_token_ciphertext, token_type = EXCLUDED.token_type,
                granted_scopes = EXCLUDED.granted_scopes, token_expires_at = EXCLUDED.token_expires_at,
                credential_version = mcp_member_credentials.credential_version + 1, credential_health = 'ready',
                credential_health_reason = NULL, credential_checked_at = EXCLUDED.credential_checked_at,
                connected_at = EXCLUDED.connected_at, updated_at = EXCLUDED.updated_at
              WHERE mcp_member_credentials.organization_id = ${target.organizationId}`.pipe(Effect.asVoid)

  /** Drops the shared credential (disconnect); false when there was none. */
  const dropShared = (request: typeof Connection.Type, at: Date) =>
    sql`UPDATE mcp_connections SET access_token_ciphertext = NULL, refresh_token_ciphertext = NULL, token_type = NULL,
            granted_scopes = '{}', token_expires_at = NULL, credential_version = credential_version + 1,
            credential_health = 'unknown', credential_health_reason = NULL, credential_checked_at = NULL,
            connected_at = NULL, updated_at = ${at}
          WHERE organization_id = ${request.organizationId} AND id = ${request.connectionId}
            AND (access_token_ciphertext IS NOT NULL OR refresh_token_ciphertext IS NOT NULL OR credential_health <> 'unknown')
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  /** Drops a member's own credential; false when there was none. */
  const dropMember = (request: typeof Member.Type) =>
    sql`DELETE FROM mcp_member_credentials
          WHERE organization_id = ${request.organizationId} AND mcp_connection_id = ${request.connectionId}
            AND membership_id = ${request.membershipId}
          RETURNING membership_id`.pipe(Effect.map((rows) => rows.length > 0))

  /** Drops every member's credential of a per_member connection (an admin's disconnect); false when there was none. */
  const dropAllMembers = (request: typeof Connection.Type) =>
    sql`DELETE FROM mcp_member_credentials
          WHERE organization_id = ${request.organizationId} AND mcp_connection_id = ${request.connectionId}
          RETURNING membership_id`.pipe(Effect.map((rows) => rows.length > 0))

  /**
   * Forgets every credential of the member in the organization (their own credentials of per_member connections
   * and the authorizations they started for one): the directory (SCIM) deactivated or deleted them, or their account
   * was deleted. Runs in the caller's transaction; the scim and accounts areas call it (identity may not import
   * mcp/). Answers how many rows went.
   */
  const forgetMember = (organizationId: OrganizationId, membershipId: MembershipId) =>
    Effect.map(
      Effect.all([
        sql`DELETE FROM mcp_member_credentials WHERE organization_id = ${organizationId} AND membership_id = ${membershipId}
              RETURNING 1`,
        sql`DELETE FROM mcp_oauth_authorizations
              WHERE organization_id = ${organizationId} AND membership_id = ${membershipId} AND target = 'member' RETURNING 1`
      ]),
      ([credentials, authorizations]) => credentials.length + authorizations.length
    )

  /**
   * Records the OAuth client and the authorization server's metadata (its issuer included) a connection uses from
   * now on. `oauth_issuer` stays what an admin chose: a discovered issuer must not outlive a change of URL.
   */
  const setClient = execute({
    Request: OAuthClientColumns,
    execute: (row) =>
      sql`UPDATE mcp_connections SET oauth_client_id = ${row.oauthClientId},
              oauth_client_secret_ciphertext = ${row.oauthClientSecretCiphertext},
              oauth_registration_source = ${row.oauthRegistrationSource},
              oauth_token_endpoint_auth_method = ${row.oauthTokenEndpointAuthMethod},
              oauth_redirect_uri = ${row.oauthRedirectUri}, oauth_metadata = ${JSON.stringify(row.oauthMetadata)}::jsonb,
              oauth_issuer_review_required_at = CASE WHEN ${row.endReview} THEN NULL ELSE oauth_issuer_review_required_at END,
              updated_at = ${row.at}
            WHERE organization_id = ${row.organizationId} AND id = ${row.connectionId}`
  })

  const insertAuthorization = execute({
    Request: AuthorizationRow,
    execute: (row) => sql`INSERT INTO mcp_oauth_authorizations ${sql.insert(row)}`
  })

  /** The authorization, locked for the transaction that uses it up. */
  const lockAuthorization = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, id: Schema.String }),
    Result: AuthorizationRow,
    execute: ({ id, organizationId }) =>
      sql`SELECT * FROM mcp_oauth_authorizations WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`
  })

  /** A pending authorization, as its callback finds it: none once its organization is deleted (nothing more is stored for it). */
  const findAuthorization = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, id: Schema.String }),
    Result: AuthorizationRow,
    execute: ({ id, organizationId }) =>
      sql`SELECT a.* FROM mcp_oauth_authorizations a JOIN organizations o ON o.id = a.organization_id AND o.deleted_at IS NULL
            WHERE a.organization_id = ${organizationId} AND a.id = ${id}`
  })

  const markAuthorizationUsed = (request: { readonly organizationId: OrganizationId; readonly id: string }, at: Date) =>
    sql`UPDATE mcp_oauth_authorizations SET used_at = ${at}
          WHERE organization_id = ${request.organizationId} AND id = ${request.id} AND used_at IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  /** Blocks the connection's tools until an admin reviews its authorization server (and connects). */
  const requireIssuerReview = (request: typeof Connection.Type, at: Date) =>
    sql`UPDATE mcp_connections SET oauth_issuer_review_required_at = COALESCE(oauth_issuer_review_required_at, ${at}), updated_at = ${at}
          WHERE organization_id = ${request.organizationId} AND id = ${request.connectionId}`.pipe(Effect.asVoid)

  /** Forgets a connection's authorizations that expired (used or not): nothing can complete them any more. */
  const deleteExpiredAuthorizations = (request: typeof Connection.Type, at: Date) =>
    sql`DELETE FROM mcp_oauth_authorizations
          WHERE organization_id = ${request.organizationId} AND mcp_connection_id = ${request.connectionId} AND expires_at < ${at}`.pipe(
      Effect.asVoid
    )

  return {
    requireIssuerReview,
    deleteExpiredAuthorizations,
    find,
    compareAndSet,
    markReconnectRequired,
    store,
    dropShared,
    dropMember,
    dropAllMembers,
    forgetMember,
    setClient,
    insertAuthorization,
    lockAuthorization,
    findAuthorization,
    markAuthorizationUsed
  } as const
})

export class CredentialsRepository extends Context.Service<CredentialsRepository>()("@orgplane/server/mcp/CredentialsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
