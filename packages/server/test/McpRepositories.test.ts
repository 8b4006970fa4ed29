/**
 * The MCP area's data layer on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * connections written and read back whole (ciphertext columns included), as a reader sees them, paged with cursors;
 * the name unique per organization ignoring case; the OAuth settings, a new server's forgetting and the tool policy;
 * shared and member credentials stored, refreshed by compare-and-set, marked, dropped and forgotten; pending
 * authorizations; and another organization's rows never found nor changed (tenancy).
 */
import { expect, layer } from "@effect/vitest"
import { ConfigObjectId, ExternalMcpConnectionId, MembershipId, type OrganizationId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { ConnectionsRepository, type Reader } from "../src/mcp/ConnectionsRepository.js"
import { type CredentialTarget, CredentialsRepository } from "../src/mcp/CredentialsRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)
const connectionId = () => Schema.decodeUnknownSync(ExternalMcpConnectionId)(Db.newId("emc"))
const asMembership = (id: string) => Schema.decodeUnknownSync(MembershipId)(id)

/** An organization with an admin and a member. */
const organization = Effect.gen(function*() {
  const organizationId = yield* Db.insertOrganization()
  const admin = asMembership(yield* Db.insertMembership(organizationId, yield* Db.insertUser(`admin-${Db.newId("x")}@acme.test`), "admin"))
  const member = asMembership(yield* Db.insertMembership(organizationId, yield* Db.insertUser(`member-${Db.newId("x")}@acme.test`), "member"))
  return { organizationId, admin, member }
})

const newConnection = (organizationId: OrganizationId, overrides: {
  readonly name?: string
  readonly authType?: "none" | "apikey" | "oauth"
  readonly credentialMode?: "shared" | "per_member"
  readonly createdAt?: Date
  readonly createdBy?: MembershipId | null
} = {}) => ({
  id: connectionId(),
  organizationId,
  name: overrides.name ?? "Docs",
  url: "https://mcp.example.com/mcp",
  authType: overrides.authType ?? "oauth",
  credentialMode: overrides.credentialMode ?? "shared",
  apiKeyCiphertext: null,
  connectedAt: null,
  credentialHealth: "unknown" as const,
  credentialCheckedAt: null,
  createdByMembershipId: overrides.createdBy ?? null,
  createdAt: overrides.createdAt ?? Db.at,
  updatedAt: overrides.createdAt ?? Db.at
})

/** A reader who sees every row and is reached by a grant on none. */
const everything = (sql: SqlClient.SqlClient): Reader => ({ usable: sql`false`, visible: sql`true` })

const tokens = (access: string, refresh: string | null = null) => ({
  accessTokenCiphertext: access,
  refreshTokenCiphertext: refresh,
  tokenType: "Bearer",
  grantedScopes: ["read", "write"],
  tokenExpiresAt: later(3_600_000)
})

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`MCP repositories on ${TestDatabase.kind}`, (it) => {
  it.effect("ConnectionsRepository: insert, find and lock whole rows; a name is unique per organization ignoring case", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const { admin, organizationId } = yield* organization
      const row = newConnection(organizationId, { createdBy: admin })
      yield* repository.insert(row)
      const found = Option.getOrThrow(yield* repository.findRow(organizationId, row.id))
      expect(found).toMatchObject({
        id: row.id,
        organizationId,
        name: "Docs",
        url: "https://mcp.example.com/mcp",
        authType: "oauth",
        credentialMode: "shared",
        apiKeyCiphertext: null,
        accessTokenCiphertext: null,
        grantedScopes: [],
        credentialVersion: 0,
        credentialHealth: "unknown",
        oauthRequestedScopes: [],
        oauthMetadata: null,
        toolPolicyAllDisabled: false,
        toolPolicyDisabledTools: [],
        createdByMembershipId: admin,
        createdAt: Db.at,
        updatedAt: Db.at
      })
      expect(yield* repository.lockRow(organizationId, row.id)).toEqual(Option.some(found))
      const clash = yield* Effect.flip(repository.insert(newConnection(organizationId, { name: "DOCS" })))
      expect(clash).toMatchObject({ error: "mcp_connection_exists", message: 'The organization already has an MCP connection named "DOCS".' })
      // Another organization may use the name, and finds nothing of this one's.
      const other = yield* organization
      yield* repository.insert(newConnection(other.organizationId, { name: "Docs" }))
      expect(yield* repository.findRow(other.organizationId, row.id)).toEqual(Option.none())
      expect(yield* repository.lockRow(other.organizationId, row.id)).toEqual(Option.none())
    }))

  it.effect("ConnectionsRepository: views with the reader's conditions, listed oldest first in pages, and all of them", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const credentials = yield* CredentialsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { member, organizationId } = yield* organization
      const rows = [
        newConnection(organizationId, { name: "One", createdAt: later(1) }),
        newConnection(organizationId, { name: "Two", createdAt: later(2), credentialMode: "per_member" }),
        newConnection(organizationId, { name: "Three", createdAt: later(3) })
      ]
      for (const row of rows) yield* repository.insert(row)
      const reader = everything(sql)
      const view = Option.getOrThrow(yield* repository.viewRow(organizationId, rows[1]!.id, reader))
      expect(view).toMatchObject({ id: rows[1]!.id, name: "Two", usable: false, anyMemberConnected: false })
      yield* credentials.store({ organizationId, connectionId: rows[1]!.id, membershipId: member }, tokens("a1"), later(10))
      expect(Option.getOrThrow(yield* repository.viewRow(organizationId, rows[1]!.id, { usable: sql`true`, visible: sql`true` })))
        .toMatchObject({ usable: true, anyMemberConnected: true })
      // What the reader may not see is not found.
      expect(yield* repository.viewRow(organizationId, rows[1]!.id, { usable: sql`true`, visible: sql`c.name <> 'Two'` })).toEqual(Option.none())

      const first = yield* repository.list(organizationId, { limit: 2 }, reader)
      expect(first.items.map((item) => item.name)).toEqual(["One", "Two"])
      expect(first.nextCursor).not.toBeNull()
      const second = yield* repository.list(organizationId, { limit: 2, cursor: first.nextCursor! }, reader)
      expect(second.items.map((item) => item.name)).toEqual(["Three"])
      expect(second.nextCursor).toBeNull()
      expect((yield* repository.all(organizationId, reader)).map((item) => item.name)).toEqual(["One", "Two", "Three"])
      expect((yield* repository.all(organizationId, { usable: sql`false`, visible: sql`c.name LIKE 'T%'` })).map((item) => item.name))
        .toEqual(["Two", "Three"])

      const other = yield* organization
      expect(yield* repository.viewRow(other.organizationId, rows[0]!.id, reader)).toEqual(Option.none())
      expect((yield* repository.list(other.organizationId, {}, reader)).items).toEqual([])
      expect(yield* repository.all(other.organizationId, reader)).toEqual([])
      expect(yield* repository.memberCredentials(organizationId, member, [])).toEqual([])
      expect((yield* repository.memberCredentials(organizationId, member, [rows[0]!.id, rows[1]!.id])).map((row) => row.mcpConnectionId))
        .toEqual([rows[1]!.id])
      expect(Option.getOrThrow(yield* repository.findMemberCredential(organizationId, rows[1]!.id, member)))
        .toMatchObject({ organizationId, mcpConnectionId: rows[1]!.id, membershipId: member, accessTokenCiphertext: "a1", credentialVersion: 1 })
      expect(yield* repository.findMemberCredential(other.organizationId, rows[1]!.id, member)).toEqual(Option.none())
    }))

  it.effect("ConnectionsRepository: the latest content of mcp config objects, deleted ones and other types left out", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { organizationId } = yield* organization
      const object = (type: string, title: string, deleted = false) =>
        Effect.gen(function*() {
          const id = Schema.decodeUnknownSync(ConfigObjectId)(Db.newId("cob"))
          yield* sql`INSERT INTO config_objects (id, organization_id, object_type, source_mode, status, title, description, search_text, created_at, updated_at, deleted_at)
            VALUES (${id}, ${organizationId}, ${type}, 'cloud', ${deleted ? "deleted" : "active"}, ${title}, '', '', ${Db.at}, ${Db.at}, ${deleted ? Db.at : null})`
          return id
        })
      const version = (id: ConfigObjectId, number: number, payload: unknown) =>
        sql`INSERT INTO config_object_versions (id, organization_id, config_object_id, number, schema_version, parser_mode, normalized_payload_json, created_via, is_deleted_version, created_at)
          VALUES (${Db.newId("cov")}, ${organizationId}, ${id}, ${number}, '1', 'json', ${JSON.stringify(payload)}::json, 'cloud', false, ${Db.at})`
      const docs = yield* object("mcp", "Docs")
      yield* version(docs, 1, { url: "https://old.example/mcp" })
      yield* version(docs, 2, { url: "https://new.example/mcp" })
      const skill = yield* object("skill", "A skill")
      yield* version(skill, 1, { text: "x" })
      const gone = yield* object("mcp", "Gone", true)
      yield* version(gone, 1, { url: "https://gone.example/mcp" })
      expect(yield* repository.mcpDefinitions(organizationId, [])).toEqual([])
      expect(yield* repository.mcpDefinitions(organizationId, [docs, skill, gone]))
        .toEqual([{ configObjectId: docs, title: "Docs", payload: { url: "https://new.example/mcp" } }])
      const other = yield* organization
      expect(yield* repository.mcpDefinitions(other.organizationId, [docs])).toEqual([])
    }))

  it.effect("ConnectionsRepository: update, OAuth settings, a new server forgotten, the tool policy, removal", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const credentials = yield* CredentialsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { admin, member, organizationId } = yield* organization
      const row = newConnection(organizationId, { credentialMode: "per_member" })
      yield* repository.insert(row)
      yield* repository.insert(newConnection(organizationId, { name: "Taken" }))
      const scoped = { organizationId, id: row.id }

      yield* repository.update(scoped, later(1), { name: "Renamed", url: "https://mcp.example.com/v2", checkedAt: later(1) })
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id))).toMatchObject({
        name: "Renamed",
        url: "https://mcp.example.com/v2",
        connectedAt: later(1),
        credentialHealth: "ready",
        credentialCheckedAt: later(1),
        updatedAt: later(1)
      })
      const clash = yield* Effect.flip(repository.update(scoped, later(2), { name: "taken" }))
      expect(clash).toMatchObject({ error: "mcp_connection_exists" })

      yield* repository.setOAuth(scoped, later(3), { clientId: "client-1", clientSecretCiphertext: "secret", issuer: "https://as.example", requestedScopes: ["a", "b c"] })
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id))).toMatchObject({
        oauthClientId: "client-1",
        oauthRegistrationSource: "pre_registered",
        oauthClientSecretCiphertext: "secret",
        oauthIssuer: "https://as.example",
        oauthRequestedScopes: ["a", "b c"],
        updatedAt: later(3)
      })
      yield* repository.setOAuth(scoped, later(4), { requestedScopes: [] })
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id))).toMatchObject({ oauthClientId: "client-1", oauthRequestedScopes: [] })

      // A dynamically registered client goes with the server; a member's credential and pending authorizations too.
      yield* credentials.setClient({
        organizationId,
        connectionId: row.id,
        oauthClientId: "dynamic-1",
        oauthClientSecretCiphertext: null,
        oauthRegistrationSource: "dynamic",
        oauthTokenEndpointAuthMethod: "none",
        oauthRedirectUri: "https://orgplane.example/cb",
        oauthMetadata: { issuer: "https://as.example", token_endpoint: "https://as.example/token" },
        endReview: false,
        at: later(5)
      })
      yield* credentials.store({ organizationId, connectionId: row.id, membershipId: member }, tokens("m1"), later(5))
      yield* credentials.insertAuthorization({
        organizationId,
        id: "auth-1",
        mcpConnectionId: row.id,
        membershipId: admin,
        target: "member",
        codeVerifierCiphertext: "v",
        redirectUri: "https://orgplane.example/cb",
        oauthClientId: "dynamic-1",
        createdAt: later(5),
        expiresAt: later(600_000),
        usedAt: null
      })
      yield* repository.forgetServer(scoped, later(6))
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id))).toMatchObject({
        oauthClientId: null,
        oauthRegistrationSource: null,
        oauthTokenEndpointAuthMethod: null,
        oauthMetadata: null,
        credentialVersion: 1,
        connectedAt: null,
        credentialHealth: "unknown",
        updatedAt: later(6)
      })
      expect(yield* repository.findMemberCredential(organizationId, row.id, member)).toEqual(Option.none())
      expect(yield* credentials.findAuthorization({ organizationId, id: "auth-1" })).toEqual(Option.none())

      yield* repository.setToolPolicy(scoped, later(7), { allDisabled: true, disabledTools: ["delete_item", "x y"], updatedBy: admin })
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id))).toMatchObject({
        toolPolicyAllDisabled: true,
        toolPolicyDisabledTools: ["delete_item", "x y"],
        toolPolicyUpdatedByMembershipId: admin,
        toolPolicyUpdatedAt: later(7)
      })

      // Another organization's id changes nothing.
      const other = yield* organization
      const elsewhere = { organizationId: other.organizationId, id: row.id }
      yield* repository.update(elsewhere, later(8), { name: "Hijacked" })
      yield* repository.setToolPolicy(elsewhere, later(8), { allDisabled: false, disabledTools: [], updatedBy: null })
      expect(yield* repository.remove(elsewhere)).toBe(false)
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id))).toMatchObject({ name: "Renamed", toolPolicyAllDisabled: true })

      yield* credentials.store({ organizationId, connectionId: row.id, membershipId: member }, tokens("m2"), later(9))
      expect(yield* repository.remove(scoped)).toBe(true)
      expect(yield* repository.remove(scoped)).toBe(false)
      expect(yield* repository.findRow(organizationId, row.id)).toEqual(Option.none())
      const left = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM mcp_member_credentials WHERE organization_id = ${organizationId} AND mcp_connection_id = ${row.id}`
      expect(left[0]?.count).toBe(0)
    }))

  it.effect("CredentialsRepository: a shared credential stored, refreshed by compare-and-set, marked, dropped", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const credentials = yield* CredentialsRepository.make
      const { organizationId } = yield* organization
      const row = newConnection(organizationId)
      yield* repository.insert(row)
      const target: CredentialTarget = { organizationId, connectionId: row.id, membershipId: null }
      expect(Option.getOrThrow(yield* credentials.find(target))).toEqual({
        accessTokenCiphertext: null,
        refreshTokenCiphertext: null,
        tokenType: null,
        grantedScopes: [],
        tokenExpiresAt: null,
        credentialVersion: 0,
        credentialHealth: "unknown",
        credentialHealthReason: null,
        connectedAt: null
      })
      expect(yield* credentials.dropShared({ organizationId, connectionId: row.id }, later(1))).toBe(false)

      yield* credentials.requireIssuerReview({ organizationId, connectionId: row.id }, later(1))
      yield* credentials.requireIssuerReview({ organizationId, connectionId: row.id }, later(2))
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id)).oauthIssuerReviewRequiredAt).toEqual(later(1))
      yield* credentials.store(target, tokens("a1", "r1"), later(3))
      const stored = Option.getOrThrow(yield* credentials.find(target))
      expect(stored).toMatchObject({ accessTokenCiphertext: "a1", refreshTokenCiphertext: "r1", tokenType: "Bearer", grantedScopes: ["read", "write"], credentialVersion: 1, credentialHealth: "ready", connectedAt: later(3) })
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id)).oauthIssuerReviewRequiredAt).toBeNull()

      // A refresh without a new refresh token keeps the stored one; a stale version writes nothing.
      expect(yield* credentials.compareAndSet(target, 1, tokens("a2"), later(4))).toBe(true)
      expect(Option.getOrThrow(yield* credentials.find(target))).toMatchObject({ accessTokenCiphertext: "a2", refreshTokenCiphertext: "r1", credentialVersion: 2 })
      expect(yield* credentials.compareAndSet(target, 1, tokens("stale"), later(5))).toBe(false)
      expect(yield* credentials.markReconnectRequired(target, 1, "old", later(5))).toBe(false)
      expect(yield* credentials.markReconnectRequired(target, 2, "invalid_grant", later(5))).toBe(true)
      expect(Option.getOrThrow(yield* credentials.find(target))).toMatchObject({ credentialVersion: 2, credentialHealth: "reconnect_required", credentialHealthReason: "invalid_grant" })

      const other = yield* organization
      const elsewhere: CredentialTarget = { organizationId: other.organizationId, connectionId: row.id, membershipId: null }
      expect(yield* credentials.find(elsewhere)).toEqual(Option.none())
      expect(yield* credentials.compareAndSet(elsewhere, 2, tokens("x"), later(6))).toBe(false)
      expect(yield* credentials.dropShared({ organizationId: other.organizationId, connectionId: row.id }, later(6))).toBe(false)

      expect(yield* credentials.dropShared({ organizationId, connectionId: row.id }, later(7))).toBe(true)
      expect(Option.getOrThrow(yield* credentials.find(target))).toMatchObject({ accessTokenCiphertext: null, refreshTokenCiphertext: null, credentialVersion: 3, credentialHealth: "unknown", connectedAt: null })
    }))

  it.effect("CredentialsRepository: members' credentials stored, refreshed, dropped one by one or all, forgotten with their authorizations", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const credentials = yield* CredentialsRepository.make
      const { admin, member, organizationId } = yield* organization
      const row = newConnection(organizationId, { credentialMode: "per_member" })
      yield* repository.insert(row)
      const mine: CredentialTarget = { organizationId, connectionId: row.id, membershipId: member }
      const theirs: CredentialTarget = { organizationId, connectionId: row.id, membershipId: admin }
      expect(yield* credentials.find(mine)).toEqual(Option.none())
      yield* credentials.store(mine, tokens("m1", "mr1"), later(1))
      yield* credentials.store(mine, tokens("m2", "mr2"), later(2))
      expect(Option.getOrThrow(yield* credentials.find(mine))).toMatchObject({ accessTokenCiphertext: "m2", refreshTokenCiphertext: "mr2", credentialVersion: 2, credentialHealth: "ready", connectedAt: later(2) })
      expect(yield* credentials.compareAndSet(mine, 2, tokens("m3"), later(3))).toBe(true)
      expect(Option.getOrThrow(yield* credentials.find(mine))).toMatchObject({ accessTokenCiphertext: "m3", refreshTokenCiphertext: "mr2", credentialVersion: 3 })
      expect(yield* credentials.markReconnectRequired(mine, 3, "refused", later(4))).toBe(true)
      // The shared columns are untouched by a member's credential.
      expect(Option.getOrThrow(yield* credentials.find({ ...mine, membershipId: null }))).toMatchObject({ accessTokenCiphertext: null, credentialVersion: 0 })

      expect(yield* credentials.dropMember({ organizationId, connectionId: row.id, membershipId: member })).toBe(true)
      expect(yield* credentials.dropMember({ organizationId, connectionId: row.id, membershipId: member })).toBe(false)
      yield* credentials.store(mine, tokens("m4"), later(5))
      yield* credentials.store(theirs, tokens("t1"), later(5))
      const other = yield* organization
      expect(yield* credentials.dropAllMembers({ organizationId: other.organizationId, connectionId: row.id })).toBe(false)
      expect(yield* credentials.dropAllMembers({ organizationId, connectionId: row.id })).toBe(true)
      expect(yield* credentials.dropAllMembers({ organizationId, connectionId: row.id })).toBe(false)

      yield* credentials.store(mine, tokens("m5"), later(6))
      const authorization = (id: string, membershipId: MembershipId, target: "shared" | "member") => ({
        organizationId,
        id,
        mcpConnectionId: row.id,
        membershipId,
        target,
        codeVerifierCiphertext: "v",
        redirectUri: "https://orgplane.example/cb",
        oauthClientId: "client",
        createdAt: later(6),
        expiresAt: later(600_000),
        usedAt: null
      })
      yield* credentials.insertAuthorization(authorization("a-member", member, "member"))
      yield* credentials.insertAuthorization(authorization("a-shared", member, "shared"))
      expect(yield* credentials.forgetMember(other.organizationId, member)).toBe(0)
      expect(yield* credentials.forgetMember(organizationId, member)).toBe(2)
      expect(yield* credentials.find(mine)).toEqual(Option.none())
      expect(yield* credentials.findAuthorization({ organizationId, id: "a-member" })).toEqual(Option.none())
      expect(Option.isSome(yield* credentials.findAuthorization({ organizationId, id: "a-shared" }))).toBe(true)
    }))

  it.effect("CredentialsRepository: the OAuth client, pending authorizations used once, expired ones forgotten", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectionsRepository.make
      const credentials = yield* CredentialsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { admin, organizationId } = yield* organization
      const row = newConnection(organizationId)
      yield* repository.insert(row)
      yield* credentials.requireIssuerReview({ organizationId, connectionId: row.id }, later(1))
      const client = {
        organizationId,
        connectionId: row.id,
        oauthClientId: "client-1",
        oauthClientSecretCiphertext: "secret",
        oauthRegistrationSource: "client_metadata" as const,
        oauthTokenEndpointAuthMethod: "client_secret_post",
        oauthRedirectUri: "https://orgplane.example/cb",
        oauthMetadata: { issuer: "https://as.example", token_endpoint: "https://as.example/token", scopes_supported: ["a"] },
        endReview: false,
        at: later(2)
      }
      yield* credentials.setClient(client)
      const kept = Option.getOrThrow(yield* repository.findRow(organizationId, row.id))
      expect(kept).toMatchObject({
        oauthClientId: "client-1",
        oauthClientSecretCiphertext: "secret",
        oauthRegistrationSource: "client_metadata",
        oauthTokenEndpointAuthMethod: "client_secret_post",
        oauthRedirectUri: "https://orgplane.example/cb",
        oauthIssuerReviewRequiredAt: later(1),
        updatedAt: later(2)
      })
      // The SQL client reads JSON members' names in camelCase (Credentials.metadataOf turns them back).
      expect(kept.oauthMetadata).toEqual({ issuer: "https://as.example", tokenEndpoint: "https://as.example/token", scopesSupported: ["a"] })
      yield* credentials.setClient({ ...client, endReview: true, at: later(3) })
      expect(Option.getOrThrow(yield* repository.findRow(organizationId, row.id)).oauthIssuerReviewRequiredAt).toBeNull()

      const authorization = {
        organizationId,
        id: "auth-1",
        mcpConnectionId: row.id,
        membershipId: admin,
        target: "shared" as const,
        codeVerifierCiphertext: "verifier",
        redirectUri: "https://orgplane.example/cb",
        oauthClientId: "client-1",
        createdAt: later(4),
        expiresAt: later(600_000),
        usedAt: null
      }
      yield* credentials.insertAuthorization(authorization)
      yield* credentials.insertAuthorization({ ...authorization, id: "auth-old", expiresAt: later(5) })
      expect(Option.getOrThrow(yield* credentials.findAuthorization({ organizationId, id: "auth-1" }))).toEqual(authorization)
      expect(Option.getOrThrow(yield* credentials.lockAuthorization({ organizationId, id: "auth-1" }))).toEqual(authorization)
      const other = yield* organization
      expect(yield* credentials.findAuthorization({ organizationId: other.organizationId, id: "auth-1" })).toEqual(Option.none())
      expect(yield* credentials.lockAuthorization({ organizationId: other.organizationId, id: "auth-1" })).toEqual(Option.none())
      expect(yield* credentials.markAuthorizationUsed({ organizationId: other.organizationId, id: "auth-1" }, later(6))).toBe(false)
      expect(yield* credentials.markAuthorizationUsed({ organizationId, id: "auth-1" }, later(6))).toBe(true)
      expect(yield* credentials.markAuthorizationUsed({ organizationId, id: "auth-1" }, later(7))).toBe(false)
      expect(Option.getOrThrow(yield* credentials.findAuthorization({ organizationId, id: "auth-1" })).usedAt).toEqual(later(6))

      yield* credentials.deleteExpiredAuthorizations({ organizationId: other.organizationId, connectionId: row.id }, later(10))
      expect(Option.isSome(yield* credentials.findAuthorization({ organizationId, id: "auth-old" }))).toBe(true)
      yield* credentials.deleteExpiredAuthorizations({ organizationId, connectionId: row.id }, later(10))
      expect(yield* credentials.findAuthorization({ organizationId, id: "auth-old" })).toEqual(Option.none())
      expect(Option.isSome(yield* credentials.findAuthorization({ organizationId, id: "auth-1" }))).toBe(true)

      // A deleted organization's pending authorization is not found by its callback.
      yield* sql`UPDATE organizations SET deleted_at = ${later(11)}, purge_after = ${later(11)}, deleted_by = 'usr_x' WHERE id = ${organizationId}`
      expect(yield* credentials.findAuthorization({ organizationId, id: "auth-1" })).toEqual(Option.none())
      expect(Option.isSome(yield* credentials.lockAuthorization({ organizationId, id: "auth-1" }))).toBe(true)
    }))
})
