/**
 * A fresh migrated database for the identity area's repositories, with a cursor key, and helpers that write the
 * rows the repositories read (people, memberships, SSO connections and policies) with plain SQL.
 */
import { OrganizationId, type SsoConnectionId, UserId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { typeid } from "typeid-js"
import { migrations } from "../../src/migrations/index.js"
import { CursorKey } from "../../src/platform/Keyset.js"
import { migrate } from "../../src/platform/Migrator.js"
import * as TestDatabase from "./TestDatabase.js"

/** A migrated fresh database and a cursor key. */
export const layer = Layer.provideMerge(
  Layer.effectDiscard(migrate(migrations)),
  Layer.merge(Layer.unwrap(TestDatabase.layer({ migrated: true })), Layer.succeed(CursorKey, NodeCrypto.randomBytes(32)))
)

export const newId = (prefix: string) => typeid(prefix).toString()
export const organizationId = () => Schema.decodeUnknownSync(OrganizationId)(newId("org"))
export const userId = () => Schema.decodeUnknownSync(UserId)(newId("usr"))

export const at = new Date("2030-01-01T00:00:00Z")

/** An organization row, as plain SQL writes it. */
export const insertOrganization = Effect.fn("IdentityDatabase.insertOrganization")(function*(
  options: { readonly name?: string; readonly provisional?: boolean; readonly createdAt?: Date } = {}
) {
  const sql = yield* SqlClient.SqlClient
  const id = organizationId()
  const created = options.createdAt ?? at
  yield* sql`INSERT INTO organizations (id, name, plan, provisional, created_at, updated_at)
    VALUES (${id}, ${options.name ?? "Acme"}, 'team', ${options.provisional ?? false}, ${created}, ${created})`
  return id
})

/** A person. */
export const insertUser = Effect.fn("IdentityDatabase.insertUser")(function*(email: string) {
  const sql = yield* SqlClient.SqlClient
  const id = userId()
  yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
    VALUES (${id}, ${email}, ${email.split("@")[0] ?? "someone"}, 'x', ${at}, ${at})`
  return id
})

/** An active membership of `userId` (null: the bootstrap's placeholder owner). */
export const insertMembership = Effect.fn("IdentityDatabase.insertMembership")(function*(
  organizationId: string,
  userId: string | null,
  role: "owner" | "admin" | "member"
) {
  const sql = yield* SqlClient.SqlClient
  const id = newId("om")
  yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
    VALUES (${id}, ${organizationId}, ${userId}, ${role}, ${at}, ${at})`
  return id
})

/** An OIDC connection of the organization serving `domain` (active or not), and its policy. */
export const insertSso = Effect.fn("IdentityDatabase.insertSso")(function*(options: {
  readonly organizationId: string
  readonly domain: string
  readonly active?: boolean
  readonly policy?: { readonly requireSso: boolean; readonly ownersPasswordFallback: boolean }
}) {
  const sql = yield* SqlClient.SqlClient
  const id = newId("ssc") as SsoConnectionId
  const active = options.active ?? true
  yield* sql`INSERT INTO sso_domains (organization_id, domain, verified_at, created_at, updated_at)
    VALUES (${options.organizationId}, ${options.domain}, ${at}, ${at}, ${at})`
  yield* sql`INSERT INTO sso_connections (id, organization_id, kind, name, state, jit, mapping, oidc, config_revision, created_at, updated_at)
    VALUES (${id}, ${options.organizationId}, 'oidc', 'IdP', ${active ? "active" : "draft"}, '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, 1, ${at}, ${at})`
  yield* sql`INSERT INTO sso_connection_domains (organization_id, connection_id, domain, active)
    VALUES (${options.organizationId}, ${id}, ${options.domain}, ${active})`
  if (options.policy !== undefined) {
    yield* sql`INSERT INTO sso_policies (organization_id, require_sso, owners_password_fallback, updated_at)
      VALUES (${options.organizationId}, ${options.policy.requireSso}, ${options.policy.ownersPasswordFallback}, ${at})`
  }
  return id
})
