/**
 * scim/ProtocolAuthentication.ts over real HTTP on a fresh migrated database: an endpoint behind the
 * `ScimAuthentication` middleware answers the client a token of the path's connection stands for; no token, an
 * unknown, revoked or expired one, or another connection's, is a SCIM 401 with the RFC 7644 §2 challenge; an
 * organization off the enterprise plan a SCIM 403. The token's last use is written; `ScimTokenStanding` reads it again.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { CurrentScimClient, OrganizationId, ScimAuthentication, ScimConnectionId, ScimTokenId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { createServer } from "node:http"
import { ScimTokenStanding } from "../src/platform/Authority.js"
import { Crypto, make as makeCrypto } from "../src/platform/Crypto.js"
import * as ProtocolAuthentication from "../src/scim/ProtocolAuthentication.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const Client = Schema.Struct({ organizationId: Schema.String, connectionId: Schema.String, tokenId: Schema.String })

class ProbeApi extends HttpApiGroup.make("probe")
  .add(HttpApiEndpoint.get("me", "/scim/v2/:connectionId/Me", { params: Schema.Struct({ connectionId: Schema.String }), success: Client }))
  .middleware(ScimAuthentication)
{}

const Api = HttpApi.make("scim-probe").add(ProbeApi)

const ProbeLive = HttpApiBuilder.group(Api, "probe", (handlers) => handlers.handle("me", () => CurrentScimClient.useSync((client) => client)))

const hash = (token: string) => NodeCrypto.createHash("sha256").update(token).digest("hex")

/** The server's URL, and the middleware's `ScimTokenStanding`, on the test's database. */
class Served extends Context.Service<Served, { readonly url: string; readonly standing: ScimTokenStanding["Service"] }>()("test/ScimProtocolAuthentication/Served") {}

const served = Layer.effect(
  Served,
  Effect.gen(function*() {
    const storage = Layer.mergeAll(Layer.succeedContext(yield* Effect.context<SqlClient.SqlClient>()), Layer.effect(Crypto, makeCrypto({ passwordCost: 10, keys: [] })))
    const authentication = ProtocolAuthentication.layer.pipe(Layer.provide(storage))
    const app = HttpApiBuilder.layer(Api).pipe(Layer.provide(ProbeLive), Layer.provide(authentication))
    const context = yield* Layer.build(
      Layer.merge(
        HttpRouter.serve(app, { disableLogger: true }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))),
        authentication
      )
    )
    return {
      url: HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, ""),
      standing: Context.get(context, ScimTokenStanding)
    }
  })
).pipe(Layer.provideMerge(Db.layer))

interface Answer {
  readonly status: number
  readonly challenge: string | null
  readonly body: unknown
}

const get = (url: string, connectionId: string, authorization?: string) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(`${url}/scim/v2/${connectionId}/Me`, { headers: authorization === undefined ? {} : { authorization } })
    const text = await response.text()
    return { status: response.status, challenge: response.headers.get("www-authenticate"), body: text === "" ? undefined : JSON.parse(text) }
  })

/** An organization (enterprise unless said) with a connection and a token of it: the token's value and ids. */
const setUp = Effect.fn("ScimProtocolAuthentication.setUp")(function*(options: { readonly plan?: string; readonly expiresAt?: Date | null; readonly revoked?: boolean } = {}) {
  const sql = yield* SqlClient.SqlClient
  const organizationId = Schema.decodeUnknownSync(OrganizationId)(yield* Db.insertOrganization())
  yield* sql`UPDATE organizations SET plan = ${options.plan ?? "enterprise"} WHERE id = ${organizationId}`
  const connectionId = Schema.decodeUnknownSync(ScimConnectionId)(Db.newId("scc"))
  yield* sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, created_at, updated_at)
    VALUES (${connectionId}, ${organizationId}, ${connectionId}, 'metadata_only', 'member', ${Db.at}, ${Db.at})`
  const tokenId = Schema.decodeUnknownSync(ScimTokenId)(Db.newId("sct"))
  const token = `scim_${NodeCrypto.randomBytes(16).toString("hex")}`
  yield* sql`INSERT INTO scim_tokens (id, organization_id, connection_id, name, token_hash, created_at, expires_at, revoked_at)
    VALUES (${tokenId}, ${organizationId}, ${connectionId}, 'directory', ${hash(token)}, ${Db.at}, ${options.expiresAt ?? null},
            ${options.revoked === true ? Db.at : null})`
  return { organizationId, connectionId, tokenId, token }
})

const unauthorizedBody = { schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "401", detail: "A valid SCIM token of this connection is required." }
const challenge = "Bearer realm=\"orgplane SCIM\""
const refused = "Bearer realm=\"orgplane SCIM\", error=\"invalid_token\""

layer(served, { timeout: 120_000, excludeTestServices: true })(`SCIM protocol authentication on ${TestDatabase.kind}`, (it) => {
  it.effect("a token of the path's connection is its client; its last use is written", () =>
    Effect.gen(function*() {
      const { url } = yield* Served
      const sql = yield* SqlClient.SqlClient
      const { connectionId, organizationId, token, tokenId } = yield* setUp({ expiresAt: new Date(Date.now() + 3_600_000) })
      expect(yield* get(url, connectionId, `Bearer ${token}`)).toEqual({ status: 200, challenge: null, body: { organizationId, connectionId, tokenId } })
      expect((yield* get(url, connectionId, `bearer  ${token} `)).status).toBe(200)
      // Written off the request path: wait for it.
      let lastUsed: Date | null = null
      for (let attempt = 0; attempt < 100 && lastUsed === null; attempt++) {
        const [row] = yield* sql<{ lastUsedAt: Date | null }>`SELECT last_used_at FROM scim_tokens WHERE organization_id = ${organizationId} AND id = ${tokenId}`
        lastUsed = row?.lastUsedAt ?? null
        if (lastUsed === null) yield* Effect.sleep("50 millis")
      }
      expect(lastUsed).toBeInstanceOf(Date)
    }))

  it.effect("no token, an unknown, revoked or expired one, another connection's: a SCIM 401 with its challenge", () =>
    Effect.gen(function*() {
      const { url } = yield* Served
      const live = yield* setUp()
      const other = yield* setUp()
      expect(yield* get(url, live.connectionId)).toEqual({ status: 401, challenge, body: unauthorizedBody })
      expect(yield* get(url, live.connectionId, `Basic ${live.token}`)).toEqual({ status: 401, challenge, body: unauthorizedBody })
      expect(yield* get(url, live.connectionId, "Bearer scim_unknown")).toEqual({ status: 401, challenge: refused, body: unauthorizedBody })
      expect(yield* get(url, other.connectionId, `Bearer ${live.token}`)).toEqual({ status: 401, challenge: refused, body: unauthorizedBody })
      const revoked = yield* setUp({ revoked: true })
      expect(yield* get(url, revoked.connectionId, `Bearer ${revoked.token}`)).toEqual({ status: 401, challenge: refused, body: unauthorizedBody })
      const expired = yield* setUp({ expiresAt: new Date(Date.now() - 1000) })
      expect(yield* get(url, expired.connectionId, `Bearer ${expired.token}`)).toEqual({ status: 401, challenge: refused, body: unauthorizedBody })
    }))

  it.effect("an organization off the enterprise plan: a SCIM 403", () =>
    Effect.gen(function*() {
      const { url } = yield* Served
      const team = yield* setUp({ plan: "team" })
      expect(yield* get(url, team.connectionId, `Bearer ${team.token}`)).toEqual({
        status: 403,
        challenge: null,
        body: {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
          status: "403",
          detail: "The organization's plan no longer includes directory provisioning (SCIM): it needs the enterprise plan."
        }
      })
    }))

  it.effect("ScimTokenStanding: a live token stands until it is revoked or expires", () =>
    Effect.gen(function*() {
      const { standing } = yield* Served
      const sql = yield* SqlClient.SqlClient
      const { connectionId, organizationId, tokenId } = yield* setUp({ expiresAt: new Date(Date.now() + 3_600_000) })
      const client = { organizationId, connectionId, tokenId }
      expect(yield* sql.withTransaction(standing(client, new Date()))).toBe(true)
      expect(yield* standing(client, new Date(Date.now() + 7_200_000))).toBe(false)
      expect(yield* standing({ ...client, connectionId: Schema.decodeUnknownSync(ScimConnectionId)(Db.newId("scc")) }, new Date())).toBe(false)
      yield* sql`UPDATE scim_tokens SET revoked_at = ${new Date()} WHERE organization_id = ${organizationId} AND id = ${tokenId}`
      expect(yield* standing(client, new Date())).toBe(false)
    }))
})
