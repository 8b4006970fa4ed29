/**
 * SSO enforcement where identity decides: password sign-in, and which sessions an organization's routes admit. The
 * policy itself is managed by the sso area (`sso/Policy.ts`); authentication lives here, so the rule and the
 * statements it reads do too (sso reads them through this module).
 *
 * The rule, for an organization whose policy requires SSO, over the domains its active connections serve ("its
 * domains"): a session its own connections authenticated is admitted; a session another organization's SSO
 * authenticated is not (that organization's IdP does not vouch for people here); a password session is admitted for
 * a member whose email is outside its domains (guests, contractors) and for an owner while the policy keeps the
 * owners' password fallback (break-glass), and refused for everyone else. API keys are not sessions: never refused.
 */
import { SqlClient } from "@effect/sql"
import { Forbidden, OrganizationId, type Role, SessionId, SsoConnectionId } from "@orgplane/schema"
import { Effect, Option, Schema } from "effect"
import { findOne } from "../platform/Statements.js"

/** The domain of an email as SSO routes it: after the last `@`, lower-case (`undefined` without an `@`). */
export const domainOf = (email: string) => {
  const at = email.lastIndexOf("@")
  return at < 1 ? undefined : email.slice(at + 1).trim().toLowerCase()
}

/** What the rule reads of a session and of the organization it acts in (`managedBy`: the active connection serving the person's email domain). */
export const SessionAssurance = Schema.Struct({
  ssoConnectionId: Schema.NullOr(SsoConnectionId),
  authenticatedOrganizationId: Schema.NullOr(OrganizationId),
  requireSso: Schema.NullOr(Schema.Boolean),
  ownersPasswordFallback: Schema.NullOr(Schema.Boolean),
  managedBy: Schema.NullOr(SsoConnectionId)
})
export type SessionAssurance = typeof SessionAssurance.Type

/** The active connection of `organizationId` serving the email domain of the person `u` (null: none), as a subquery. */
const managedBy = (sql: SqlClient.SqlClient, organizationId: unknown) =>
  sql`(SELECT cd.connection_id FROM sso_connection_domains cd
       WHERE cd.organization_id = ${organizationId} AND cd.active AND cd.domain = lower(substring(u.email from '@([^@]*)$'))
       LIMIT 1)`

/**
 * The columns `admission` reads, for a session `s` of a person `u` acting in the organization `organizationId`
 * (an SQL expression): its policy joined as `p` by the caller (`LEFT JOIN sso_policies p ON p.organization_id = …`).
 * The email's domain is taken as `domainOf` takes it: after the last `@`, lower-case. `managed_by`
 * is looked up only where the stored policy requires SSO, unless `always` (a policy about to be set).
 */
export const assuranceColumns = (sql: SqlClient.SqlClient, organizationId: unknown, always = false) =>
  sql`s.sso_connection_id, s.authenticated_organization_id, p.require_sso, p.owners_password_fallback,
      ${always ? managedBy(sql, organizationId) : sql`CASE WHEN p.require_sso THEN ${managedBy(sql, organizationId)} END`} AS managed_by`

const refusal = (message: string) => new Forbidden({ reason: "sso_session_required", message })

/**
 * Whether an organization admits a session: `None` when it does, else the 403 `sso_session_required` naming the way
 * in. `policy` overrides the stored one (a policy about to be set, checked against the session that sets it).
 */
export const admission = (
  organization: { readonly id: OrganizationId; readonly name: string },
  role: Role,
  assurance: SessionAssurance,
  policy: { readonly requireSso: boolean; readonly ownersPasswordFallback: boolean } | null = assurance.requireSso === null
    ? null
    : { requireSso: assurance.requireSso, ownersPasswordFallback: assurance.ownersPasswordFallback ?? true }
): Option.Option<Forbidden> => {
  if (policy === null || !policy.requireSso) return Option.none()
  if (assurance.authenticatedOrganizationId === organization.id) return Option.none()
  if (assurance.ssoConnectionId !== null) {
    return Option.some(refusal(
      `${organization.name} requires SSO and accepts only sessions its own SSO authenticated, not another organization's: ${
        assurance.managedBy === null
          ? "sign in with your password (POST /v1/auth/sign-in) to act in it"
          : `sign in through its SSO (POST /v1/sso/sign-in with your email; connection ${assurance.managedBy})`
      }, or switch to another organization (POST /v1/me/active-organization).`
    ))
  }
  if (assurance.managedBy === null) return Option.none()
  if (role === "owner" && policy.ownersPasswordFallback) return Option.none()
  return Option.some(refusal(
    `${organization.name} requires SSO for your email's domain: sign in through its SSO (POST /v1/sso/sign-in with your email; connection ${assurance.managedBy}), or switch to another organization (POST /v1/me/active-organization).`
  ))
}

/** An email a shell takes as one word unquoted, so the command in the message can be copied as it is. */
const SHELL_SAFE_EMAIL = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$/

/** Password sign-in (or sign-up) refused for an email of an enforcing organization's domain: names both ways in. */
export const ssoRequired = (connectionId: SsoConnectionId, email: string) =>
  new Forbidden({
    reason: "sso_required",
    message: `This email's organization requires SSO: sign in through it with \`orgplane auth login --sso --email ${
      SHELL_SAFE_EMAIL.test(email) ? email : "<your email>"
    }\`, or POST /v1/sso/sign-in (connection ${connectionId}).`
  })

const Enforced = Schema.Struct({
  organizationId: OrganizationId,
  connectionId: SsoConnectionId,
  ownersPasswordFallback: Schema.Boolean
})

export class SsoEnforcement extends Effect.Service<SsoEnforcement>()("@orgplane/server/identity/SsoEnforcement", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The enforcing organization of a domain (at most one active connection serves a domain), if its policy requires SSO. */
    const forDomain = findOne({
      Request: Schema.String,
      Result: Enforced,
      execute: (domain) =>
        sql`SELECT cd.organization_id, cd.connection_id, p.owners_password_fallback
            FROM sso_connection_domains cd
            JOIN sso_policies p ON p.organization_id = cd.organization_id
            WHERE cd.domain = ${domain} AND cd.active AND p.require_sso`
    })

    /** What `admission` reads of a session, acting in `organizationId` (for a switch of organization, or a new policy). */
    const forSession = findOne({
      Request: Schema.Struct({ sessionId: SessionId, organizationId: OrganizationId }),
      Result: SessionAssurance,
      execute: ({ organizationId, sessionId }) =>
        sql`SELECT ${assuranceColumns(sql, organizationId, true)}
            FROM sessions s
            JOIN users u ON u.id = s.user_id
            LEFT JOIN sso_policies p ON p.organization_id = ${organizationId}
            WHERE s.id = ${sessionId}`
    })

    /** `forDomain` of an email's domain (an email without one is enforced by nobody). */
    const forEmail = (email: string) => {
      const domain = domainOf(email)
      return domain === undefined ? Effect.succeedNone : forDomain(domain)
    }

    return { forDomain, forEmail, forSession } as const
  })
}) {}

/** `forSession`, or "nothing known" for a session that vanished meanwhile (authentication already found it). */
export const assuranceOrNone = (found: Option.Option<SessionAssurance>): SessionAssurance =>
  Option.getOrElse(found, () => ({ ssoConnectionId: null, authenticatedOrganizationId: null, requireSso: null, ownersPasswordFallback: null, managedBy: null }))
