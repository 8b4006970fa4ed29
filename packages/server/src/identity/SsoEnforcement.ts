/**
 * SSO enforcement where identity decides: password sign-in, and which sessions an organization's routes admit. The
 * policy itself is managed by the sso area (`sso/Policy.ts`); authentication lives here, so the rule and the
 * statements it reads do too (sso reads them through this module).
 *
 * The rule, for an organization whose policy requires SSO, over the domains its active connections serve ("its
 * domains"): a session its own connections authenticated is admitted; a session another organization's SSO
 * authenticated is not (that organization's IdP does not vouch for people here); a password session is admitted for
 * a member whose email is outside its domains (guests, contractors) and for an owner while the policy keeps the
 * owners' password fallback (break-glass), and refused for everyone else.
 *
 * An API key is judged as the session it was made in (its maker's authentication, recorded on the key: `keyAdmission`):
 * a key made in the organization's own SSO session keeps working; one made with a password session (or before keys
 * recorded it) stops while enforcement covers its maker, and works again when it no longer does, except for
 * break-glass owners and members outside the domains, whose password sessions are admitted too. While enforcement
 * covers a member, only an SSO session makes their keys (`keyMakingRefusal`): a key does not.
 */
import { ApiKeyId, Forbidden, OrganizationId, type Role, SessionId, SsoConnectionId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
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
 * is looked up only where the stored policy requires SSO, unless `always` (a policy about to be set). `credential`: the
 * alias of the row that records how its holder authenticated, a session `s` or an API key `k` (its maker's session).
 */
export const assuranceColumns = (sql: SqlClient.SqlClient, organizationId: unknown, always = false, credential: "s" | "k" = "s") =>
  sql`${sql(credential)}.sso_connection_id, ${sql(credential)}.authenticated_organization_id, p.require_sso, p.owners_password_fallback,
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

/** `admission` for an API key, from what it recorded of its maker's session: the refusal says why the key stopped. */
export const keyAdmission = (
  organization: { readonly id: OrganizationId; readonly name: string },
  role: Role,
  assurance: SessionAssurance
): Option.Option<Forbidden> =>
  Option.map(admission(organization, role, assurance), () =>
    refusal(
      `This API key is suspended: ${organization.name} requires SSO for the member who made it, and the key was made outside its SSO (from a password session${
        assurance.ssoConnectionId === null ? "" : " or another organization's SSO"
      }). It works again if enforcement stops covering them; otherwise sign in through its SSO (POST /v1/sso/sign-in${
        assurance.managedBy === null ? "" : `, connection ${assurance.managedBy}`
      }), make a new key (POST /v1/api-keys) and revoke this one.`
    ))

/**
 * Whether an API key may make keys under SSO enforcement: only where its maker's password session would be admitted
 * (no enforcement, an email outside the domains, a break-glass owner). Elsewhere only an SSO session makes keys.
 */
export const keyMakingRefusal = (
  organization: { readonly id: OrganizationId; readonly name: string },
  role: Role,
  assurance: SessionAssurance
): Option.Option<Forbidden> =>
  Option.map(admission(organization, role, { ...assurance, ssoConnectionId: null, authenticatedOrganizationId: null }), () =>
    refusal(
      `${organization.name} requires SSO for your email's domain: only a session its SSO signed in makes API keys for you, not an API key (POST /v1/sso/sign-in${
        assurance.managedBy === null ? "" : `, connection ${assurance.managedBy}`
      }, then POST /v1/api-keys with that session).`
    ))

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

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * The enforcing organization of a domain (at most one active connection serves a domain), if its policy requires
   * SSO and it is not deleted (a deleted organization's sign-in stops: its domains no longer refuse passwords).
   */
  const forDomain = findOne({
    Request: Schema.String,
    Result: Enforced,
    execute: (domain) =>
      sql`SELECT cd.organization_id, cd.connection_id, p.owners_password_fallback
            FROM sso_connection_domains cd
            JOIN sso_policies p ON p.organization_id = cd.organization_id
            JOIN organizations o ON o.id = cd.organization_id AND o.deleted_at IS NULL
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

  /** What `admission` reads of an API key (how its maker authenticated), acting in its organization. */
  const forApiKey = findOne({
    Request: Schema.Struct({ apiKeyId: ApiKeyId, organizationId: OrganizationId }),
    Result: SessionAssurance,
    execute: ({ apiKeyId, organizationId }) =>
      sql`SELECT ${assuranceColumns(sql, organizationId, true, "k")}
            FROM api_keys k
            JOIN memberships m ON m.organization_id = k.organization_id AND m.id = k.membership_id
            JOIN users u ON u.id = m.user_id
            LEFT JOIN sso_policies p ON p.organization_id = k.organization_id
            WHERE k.organization_id = ${organizationId} AND k.id = ${apiKeyId}`
  })

  /** `forDomain` of an email's domain (an email without one is enforced by nobody). */
  const forEmail = Effect.fn("SsoEnforcement.forEmail")((email: string) => {
    const domain = domainOf(email)
    return domain === undefined ? Effect.succeedNone : forDomain(domain)
  })

  return { forDomain, forEmail, forSession, forApiKey } as const
})

export class SsoEnforcement extends Context.Service<SsoEnforcement>()("@orgplane/server/identity/SsoEnforcement", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/** `forSession`, or "nothing known" for a session that vanished meanwhile (authentication already found it). */
export const assuranceOrNone = (found: Option.Option<SessionAssurance>): SessionAssurance =>
  Option.getOrElse(found, () => ({ ssoConnectionId: null, authenticatedOrganizationId: null, requireSso: null, ownersPasswordFallback: null, managedBy: null }))
