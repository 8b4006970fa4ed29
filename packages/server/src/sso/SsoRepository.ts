/** Storage of SSO connections: one row per organization, with its domain verification state. */
import { SqlClient } from "@effect/sql"
import { Conflict, MembershipId, OrganizationId, SsoProtocol } from "@orgplane/schema"
import { Effect, Schema } from "effect"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findOne } from "../platform/Statements.js"

export const SsoConnectionRow = Schema.Struct({
  organizationId: OrganizationId,
  protocol: SsoProtocol,
  domain: Schema.String,
  oidcIssuer: Schema.NullOr(Schema.String),
  oidcClientId: Schema.NullOr(Schema.String),
  oidcClientSecretCiphertext: Schema.NullOr(Schema.String),
  samlEntityId: Schema.NullOr(Schema.String),
  samlSsoUrl: Schema.NullOr(Schema.String),
  samlCertificate: Schema.NullOr(Schema.String),
  verificationToken: Schema.NullOr(Schema.String),
  verificationExpiresAt: Schema.NullOr(DateColumn),
  domainVerifiedAt: Schema.NullOr(DateColumn),
  updatedByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn
})
export type SsoConnectionRow = typeof SsoConnectionRow.Type

const Scoped = Schema.Struct({ organizationId: OrganizationId })

export const domainTaken = (domain: string) =>
  new Conflict({ error: "sso_domain_taken", message: `Another organization has already verified ${domain}.` })

export class SsoRepository extends Effect.Service<SsoRepository>()("@orgplane/server/sso/SsoRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = findOne({
      Request: Scoped,
      Result: SsoConnectionRow,
      execute: ({ organizationId }) => sql`SELECT * FROM sso_connections WHERE organization_id = ${organizationId}`
    })

    /** The row locked for the rest of the transaction. */
    const lock = findOne({
      Request: Scoped,
      Result: SsoConnectionRow,
      execute: ({ organizationId }) => sql`SELECT * FROM sso_connections WHERE organization_id = ${organizationId} FOR UPDATE`
    })

    /**
     * Creates or replaces the connection. A new domain drops the verification and any pending verification request;
     * the same domain keeps both.
     */
    const upsert = execute({
      Request: SsoConnectionRow,
      execute: (row) =>
        sql`INSERT INTO sso_connections ${sql.insert(row)}
            ON CONFLICT (organization_id) DO UPDATE SET
              protocol = EXCLUDED.protocol,
              oidc_issuer = EXCLUDED.oidc_issuer,
              oidc_client_id = EXCLUDED.oidc_client_id,
              oidc_client_secret_ciphertext = EXCLUDED.oidc_client_secret_ciphertext,
              saml_entity_id = EXCLUDED.saml_entity_id,
              saml_sso_url = EXCLUDED.saml_sso_url,
              saml_certificate = EXCLUDED.saml_certificate,
              verification_token = CASE WHEN sso_connections.domain = EXCLUDED.domain THEN sso_connections.verification_token END,
              verification_expires_at = CASE WHEN sso_connections.domain = EXCLUDED.domain THEN sso_connections.verification_expires_at END,
              domain_verified_at = CASE WHEN sso_connections.domain = EXCLUDED.domain THEN sso_connections.domain_verified_at END,
              domain = EXCLUDED.domain,
              updated_by_membership_id = EXCLUDED.updated_by_membership_id,
              updated_at = EXCLUDED.updated_at
            WHERE sso_connections.organization_id = ${row.organizationId}`
    })

    const setVerificationRequest = execute({
      Request: Schema.Struct({ ...Scoped.fields, token: Schema.String, expiresAt: DateColumn, at: DateColumn }),
      execute: ({ at, expiresAt, organizationId, token }) =>
        sql`UPDATE sso_connections SET verification_token = ${token}, verification_expires_at = ${expiresAt}, updated_at = ${at}
            WHERE organization_id = ${organizationId}`
    })

    const markVerifiedRow = execute({
      Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
      execute: ({ at, organizationId }) =>
        sql`UPDATE sso_connections SET domain_verified_at = ${at}, updated_at = ${at} WHERE organization_id = ${organizationId}`
    })
    const markVerified = (request: { readonly organizationId: OrganizationId; readonly at: Date }, domain: string) =>
      markVerifiedRow(request).pipe(catchUniqueViolation(() => domainTaken(domain)))

    /** Deletes the connection; false when the organization has none. */
    const remove = ({ organizationId }: typeof Scoped.Type) =>
      sql`DELETE FROM sso_connections WHERE organization_id = ${organizationId} RETURNING organization_id`.pipe(
        Effect.map((rows) => rows.length > 0)
      )

    return { find, lock, upsert, setVerificationRequest, markVerified, remove } as const
  })
}) {}
