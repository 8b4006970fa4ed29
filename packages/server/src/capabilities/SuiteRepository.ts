/**
 * Storage of the suites' OAuth clients, the members' delegated credentials and the pending authorizations
 * (migration 0014). Every statement names the organization; every write of a token is a compare-and-set on
 * `credential_version`, so a refresh never overwrites a newer token.
 */
import { MembershipId, OrganizationId, Suite, SuiteFeature } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, execute, findOne } from "../platform/Statements.js"
import { type NewTokens, StoredCredential } from "../platform/StoredCredential.js"

export const SuiteClientRow = Schema.Struct({
  organizationId: OrganizationId,
  suite: Suite,
  clientId: Schema.String,
  clientSecretCiphertext: Schema.NullOr(Schema.String),
  tenant: Schema.NullOr(Schema.String),
  features: Schema.Array(SuiteFeature),
  authorizationEndpoint: Schema.NullOr(Schema.String),
  tokenEndpoint: Schema.NullOr(Schema.String),
  apiBaseUrl: Schema.NullOr(Schema.String),
  createdAt: DateColumn,
  updatedAt: DateColumn,
  updatedByMembershipId: Schema.NullOr(MembershipId)
})
export type SuiteClientRow = typeof SuiteClientRow.Type

/** A member's credential: the token columns MCP credentials have (platform/StoredCredential.ts); a row always holds a token. */
export const SuiteCredential = StoredCredential.mapFields((fields) => ({
  ...fields,
  accessTokenCiphertext: Schema.String,
  credentialHealth: Schema.Literals(["ready", "reconnect_required"]),
  connectedAt: DateColumn
}))
export type SuiteCredential = typeof SuiteCredential.Type

/** Whose credential: one member's, for one suite. */
export const CredentialKey = Schema.Struct({ organizationId: OrganizationId, suite: Suite, membershipId: MembershipId })
export type CredentialKey = typeof CredentialKey.Type

export const SuiteAuthorizationRow = Schema.Struct({
  organizationId: OrganizationId,
  id: Schema.String,
  suite: Suite,
  membershipId: MembershipId,
  codeVerifierCiphertext: Schema.String,
  redirectUri: Schema.String,
  clientId: Schema.String,
  requestedScopes: Schema.Array(Schema.String),
  createdAt: DateColumn,
  expiresAt: DateColumn,
  usedAt: Schema.NullOr(DateColumn)
})
export type SuiteAuthorizationRow = typeof SuiteAuthorizationRow.Type

const ClientKey = Schema.Struct({ organizationId: OrganizationId, suite: Suite })
type ClientKey = typeof ClientKey.Type
const AuthorizationKey = Schema.Struct({ organizationId: OrganizationId, id: Schema.String })
type AuthorizationKey = typeof AuthorizationKey.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const textArray = (values: ReadonlyArray<string>) => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`

  const findClient = findOne({
    Request: ClientKey,
    Result: SuiteClientRow,
    execute: ({ organizationId, suite }) => sql`SELECT * FROM suite_clients WHERE organization_id = ${organizationId} AND suite = ${suite}`
  })

  const lockClient = findOne({
    Request: ClientKey,
    Result: SuiteClientRow,
    execute: ({ organizationId, suite }) =>
      sql`SELECT * FROM suite_clients WHERE organization_id = ${organizationId} AND suite = ${suite} FOR UPDATE`
  })

  const upsertClient = execute({
    Request: SuiteClientRow,
    execute: (row) =>
      sql`INSERT INTO suite_clients (organization_id, suite, client_id, client_secret_ciphertext, tenant, features,
              authorization_endpoint, token_endpoint, api_base_url, created_at, updated_at, updated_by_membership_id)
            VALUES (${row.organizationId}, ${row.suite}, ${row.clientId}, ${row.clientSecretCiphertext}, ${row.tenant},
              ${textArray(row.features)}, ${row.authorizationEndpoint}, ${row.tokenEndpoint}, ${row.apiBaseUrl},
              ${row.createdAt}, ${row.updatedAt}, ${row.updatedByMembershipId})
            ON CONFLICT (organization_id, suite) DO UPDATE SET client_id = EXCLUDED.client_id,
              client_secret_ciphertext = EXCLUDED.client_secret_ciphertext, tenant = EXCLUDED.tenant, features = EXCLUDED.features,
              authorization_endpoint = EXCLUDED.authorization_endpoint, token_endpoint = EXCLUDED.token_endpoint,
              api_base_url = EXCLUDED.api_base_url, updated_at = EXCLUDED.updated_at,
              updated_by_membership_id = EXCLUDED.updated_by_membership_id
            WHERE suite_clients.organization_id = ${row.organizationId}`
  })

  /** Removes the client; its credentials and authorizations go with it (ON DELETE CASCADE). */
  const deleteClient = (key: ClientKey) =>
    sql`DELETE FROM suite_clients WHERE organization_id = ${key.organizationId} AND suite = ${key.suite} RETURNING suite`.pipe(
      Effect.map((rows) => rows.length > 0)
    )

  /** Forgets every member's credential and pending authorization of a suite (its client changed). */
  const dropAllCredentials = (key: ClientKey) =>
    Effect.andThen(
      sql`DELETE FROM suite_credentials WHERE organization_id = ${key.organizationId} AND suite = ${key.suite}`,
      sql`DELETE FROM suite_authorizations WHERE organization_id = ${key.organizationId} AND suite = ${key.suite}`
    ).pipe(Effect.asVoid)

  const findCredential = findOne({
    Request: CredentialKey,
    Result: SuiteCredential,
    execute: ({ membershipId, organizationId, suite }) =>
      sql`SELECT access_token_ciphertext, refresh_token_ciphertext, token_type, granted_scopes, token_expires_at,
                   credential_version, credential_health, credential_health_reason, connected_at
            FROM suite_credentials
            WHERE organization_id = ${organizationId} AND suite = ${suite} AND membership_id = ${membershipId}`
  })

  /** Stores the tokens of a completed authorization: a new credential (the version moves on). */
  const storeCredential = (key: CredentialKey, tokens: NewTokens, at: Date) =>
    sql`INSERT INTO suite_credentials (organization_id, suite, membership_id, access_token_ciphertext, refresh_token_ciphertext,
            token_type, granted_scopes, token_expires_at, credential_version, credential_health, connected_at, updated_at)
          VALUES (${key.organizationId}, ${key.suite}, ${key.membershipId}, ${tokens.accessTokenCiphertext},
            ${tokens.refreshTokenCiphertext}, ${tokens.tokenType}, ${textArray(tokens.grantedScopes)}, ${tokens.tokenExpiresAt},
            1, 'ready', ${at}, ${at})
          ON CONFLICT (organization_id, suite, membership_id) DO UPDATE SET
            access_token_ciphertext = EXCLUDED.access_token_ciphertext, refresh_token_ciphertext = EXCLUDED.refresh_token_ciphertext,
            token_type = EXCLUDED.token_type, granted_scopes = EXCLUDED.granted_scopes, token_expires_at = EXCLUDED.token_expires_at,
            credential_version = suite_credentials.credential_version + 1, credential_health = 'ready',
            credential_health_reason = NULL, connected_at = EXCLUDED.connected_at, updated_at = EXCLUDED.updated_at
          WHERE suite_credentials.organization_id = ${key.organizationId}`.pipe(Effect.asVoid)

  /**
   * Writes refreshed tokens if the credential is still at `version`; false when another refresh (or a reconnect)
   * wrote first. A refresh that sent no new refresh token keeps the stored one.
   */
  const compareAndSet = (key: CredentialKey, version: number, tokens: NewTokens, at: Date) =>
    sql`UPDATE suite_credentials SET access_token_ciphertext = ${tokens.accessTokenCiphertext},
            refresh_token_ciphertext = COALESCE(${tokens.refreshTokenCiphertext}, refresh_token_ciphertext),
            token_type = ${tokens.tokenType},
            granted_scopes = ${textArray(tokens.grantedScopes)},
            token_expires_at = ${tokens.tokenExpiresAt}, credential_version = credential_version + 1,
            credential_health = 'ready', credential_health_reason = NULL, updated_at = ${at}
          WHERE organization_id = ${key.organizationId} AND suite = ${key.suite} AND membership_id = ${key.membershipId}
            AND credential_version = ${version}
          RETURNING credential_version`.pipe(Effect.map((rows) => rows.length > 0))

  /** Marks the credential `reconnect_required` if it is still at `version`; false when it changed meanwhile. */
  const markReconnectRequired = (key: CredentialKey, version: number, reason: string, at: Date) =>
    sql`UPDATE suite_credentials SET credential_health = 'reconnect_required', credential_health_reason = ${reason}, updated_at = ${at}
          WHERE organization_id = ${key.organizationId} AND suite = ${key.suite} AND membership_id = ${key.membershipId}
            AND credential_version = ${version}
          RETURNING membership_id`.pipe(Effect.map((rows) => rows.length > 0))

  const dropCredential = (key: CredentialKey) =>
    sql`DELETE FROM suite_credentials
          WHERE organization_id = ${key.organizationId} AND suite = ${key.suite} AND membership_id = ${key.membershipId}
          RETURNING membership_id`.pipe(Effect.map((rows) => rows.length > 0))

  /**
   * Forgets every suite (mail, calendar) credential and authorization of the member in the organization: the
   * directory (SCIM) deactivated or deleted them, or their account was deleted. Runs in the caller's transaction;
   * the scim and accounts areas call it (identity may not import capabilities/). Answers how many rows went.
   */
  const forgetMember = (organizationId: OrganizationId, membershipId: MembershipId) =>
    Effect.map(
      Effect.all([
        sql`DELETE FROM suite_credentials WHERE organization_id = ${organizationId} AND membership_id = ${membershipId} RETURNING 1`,
        sql`DELETE FROM suite_authorizations WHERE organization_id = ${organizationId} AND membership_id = ${membershipId} RETURNING 1`
      ]),
      ([credentials, authorizations]) => credentials.length + authorizations.length
    )

  /** Forgets a member's authorizations of a suite that expired: nothing can complete them any more. */
  const deleteExpiredAuthorizations = (key: CredentialKey, at: Date) =>
    sql`DELETE FROM suite_authorizations
          WHERE organization_id = ${key.organizationId} AND suite = ${key.suite} AND membership_id = ${key.membershipId}
            AND expires_at < ${at}`.pipe(Effect.asVoid)

  const insertAuthorization = execute({
    Request: SuiteAuthorizationRow,
    execute: (row) =>
      sql`INSERT INTO suite_authorizations (organization_id, id, suite, membership_id, code_verifier_ciphertext, redirect_uri,
              client_id, requested_scopes, created_at, expires_at, used_at)
            VALUES (${row.organizationId}, ${row.id}, ${row.suite}, ${row.membershipId}, ${row.codeVerifierCiphertext},
              ${row.redirectUri}, ${row.clientId}, ${textArray(row.requestedScopes)}, ${row.createdAt}, ${row.expiresAt}, NULL)`
  })

  const findAuthorization = findOne({
    Request: AuthorizationKey,
    Result: SuiteAuthorizationRow,
    // None once its organization is deleted: the callback then stores nothing for it.
    execute: ({ id, organizationId }) =>
      sql`SELECT a.* FROM suite_authorizations a JOIN organizations o ON o.id = a.organization_id AND o.deleted_at IS NULL
            WHERE a.organization_id = ${organizationId} AND a.id = ${id}`
  })

  /** Marks the authorization used; false when it was used (or removed) already. */
  const spendAuthorization = (key: AuthorizationKey, at: Date) =>
    sql`UPDATE suite_authorizations SET used_at = ${at}
          WHERE organization_id = ${key.organizationId} AND id = ${key.id} AND used_at IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  return {
    findClient,
    lockClient,
    upsertClient,
    deleteClient,
    dropAllCredentials,
    findCredential,
    storeCredential,
    compareAndSet,
    markReconnectRequired,
    dropCredential,
    forgetMember,
    deleteExpiredAuthorizations,
    insertAuthorization,
    findAuthorization,
    spendAuthorization
  } as const
})

export class SuiteRepository extends Context.Service<SuiteRepository>()("@orgplane/server/capabilities/SuiteRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
