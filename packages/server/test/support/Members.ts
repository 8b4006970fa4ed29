/**
 * Callers for the tests of platform/Principal.ts, Authority.ts and AuditRecorder.ts, which run without the identity
 * area: organizations, people, memberships, sessions and API keys inserted with SQL into a migrated database, and the
 * `MemberContext` the member middleware would resolve for each (as the request starts; the tests then change the
 * rows under it). `standing` is a copy of the identity area's MemberStanding statement
 * (identity/MembershipsRepository.ts's `standing`), so these tests need none of that area's layers.
 */
import {
  ApiKeyId,
  type Action,
  type MemberContext,
  Membership,
  MembershipId,
  Organization,
  OrganizationId,
  type Plan,
  type Role,
  ScimConnectionId,
  ScimTokenId,
  SessionId,
  User,
  UserId,
  WorkerId,
  WorkerTokenId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { typeid } from "typeid-js"

export const at = new Date("2026-01-01T00:00:00Z")

const newId = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, prefix: string): S["Type"] =>
  Schema.decodeUnknownSync(schema)(typeid(prefix).toString())

export const organizationId = () => newId(OrganizationId, "org")
export const membershipId = () => newId(MembershipId, "om")
export const sessionId = () => newId(SessionId, "ses")
export const apiKeyId = () => newId(ApiKeyId, "apk")
export const userId = () => newId(UserId, "usr")

export const organization = (plan: Plan = "free") =>
  new Organization({ id: organizationId(), name: "Acme", plan, provisional: false, createdAt: at })

/** A member of `organization` as the member middleware resolves one (no row behind it: see `seed`). */
export const member = (
  organization: Organization,
  role: Role,
  options: { readonly apiKey?: { readonly scopes: ReadonlyArray<Action> | null }; readonly authenticatedAt?: Date } = {}
): MemberContext => {
  const user = new User({ id: userId(), email: `${role}.${Math.random().toString(36).slice(2, 8)}@acme.example`, name: `Ada ${role}`, createdAt: at })
  return {
    _tag: "Member",
    organization,
    membership: new Membership({ id: membershipId(), organizationId: organization.id, userId: user.id, role, createdAt: at }),
    user,
    credential: options.apiKey === undefined
      ? { _tag: "Session", sessionId: sessionId(), ssoConnectionId: null, authenticatedAt: options.authenticatedAt ?? new Date() }
      : { _tag: "ApiKey", apiKeyId: apiKeyId(), scopes: options.apiKey.scopes }
  }
}

/** Inserts the organization (once) and each member's person, membership and credential, as they are resolved. */
export const seed = Effect.fn("Members.seed")(function*(...members: ReadonlyArray<MemberContext>) {
  const sql = yield* SqlClient.SqlClient
  const far = new Date(Date.now() + 86_400_000)
  for (const caller of members) {
    const { organization } = caller
    yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at)
               VALUES (${organization.id}, ${organization.name}, ${organization.plan}, ${at}, ${at}) ON CONFLICT DO NOTHING`
    yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
               VALUES (${caller.user.id}, ${caller.user.email}, ${caller.user.name}, 'x', ${at}, ${at})`
    yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
               VALUES (${caller.membership.id}, ${organization.id}, ${caller.user.id}, ${caller.membership.role}, ${at}, ${at})`
    const credential = caller.credential
    if (credential._tag === "Session") {
      yield* sql`INSERT INTO sessions (id, user_id, token_hash, active_organization_id, created_at, expires_at)
                 VALUES (${credential.sessionId}, ${caller.user.id}, ${credential.sessionId}, ${organization.id}, ${at}, ${far})`
    } else {
      yield* sql`INSERT INTO api_keys (id, organization_id, membership_id, name, prefix, key_hash, created_at, scopes)
                 VALUES (${credential.apiKeyId}, ${organization.id}, ${caller.membership.id}, 'key', 'opk_x', ${credential.apiKeyId}, ${at},
                   ${credential.scopes === null ? null : credential.scopes.join(" ")})`
    }
  }
})

/**
 * identity/MembershipsRepository.ts's `standing`: the membership's role while neither removed nor suspended, and
 * whether the credential still works (its person's account neither disabled nor deleted), each read FOR SHARE (FOR
 * KEY SHARE for a key, whose revocation deletes it).
 */
export const standing = (sql: SqlClient.SqlClient) => (caller: MemberContext, now: Date) => {
  const credential = caller.credential
  const credentialNow = credential._tag === "ApiKey"
    ? sql`EXISTS (SELECT 1 FROM api_keys k
                    WHERE k.organization_id = ${caller.organization.id} AND k.id = ${credential.apiKeyId}
                      AND k.membership_id = ${caller.membership.id} AND (k.expires_at IS NULL OR k.expires_at > ${now})
                    FOR KEY SHARE) AS credential`
    : sql`EXISTS (SELECT 1 FROM sessions s
                    WHERE s.id = ${credential.sessionId} AND s.revoked_at IS NULL AND s.expires_at > ${now}
                    FOR SHARE) AS credential`
  return Effect.map(
    sql<{ readonly role: Role | null; readonly person: boolean; readonly credential: boolean }>`SELECT
        (SELECT m.role FROM memberships m
           WHERE m.organization_id = ${caller.organization.id} AND m.id = ${caller.membership.id} AND m.removed_at IS NULL AND m.suspended_at IS NULL
           FOR SHARE) AS role,
        EXISTS (SELECT 1 FROM users u WHERE u.id = ${caller.user.id} AND u.disabled_at IS NULL AND u.deleted_at IS NULL FOR SHARE) AS person,
        ${credentialNow}`,
    (rows): { readonly role: Role | null; readonly credential: boolean } => {
      const row = rows[0]
      return row === undefined ? { role: null, credential: false } : { role: row.role, credential: row.person && row.credential }
    }
  )
}

export const scimClient = (organization: Organization) => ({
  organizationId: organization.id,
  connectionId: newId(ScimConnectionId, "scc"),
  tokenId: newId(ScimTokenId, "sct")
})

export const workerCaller = (organization: Organization) => ({
  organizationId: organization.id,
  workerId: newId(WorkerId, "wrk"),
  tokenId: newId(WorkerTokenId, "wkt")
})
