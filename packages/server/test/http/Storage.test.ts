import * as SqlClient from "effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Database, migrate, migrations } from "../../src/index.js"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { ApiKeysRepository } from "../../src/identity/ApiKeysRepository.js"
import { migrationsUrl } from "../../src/migrations/index.js"

/** A fresh database (embedded or DATABASE_URL), without the migrations applied. */
const EmptyDatabase = Layer.unwrap(TestDatabase.layer())

describe("migrations", () => {
  it.layer(EmptyDatabase, { timeout: 60_000 })((it) => {
    it.effect("apply once, in order, and are a no-op the second time", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const first = yield* migrate(migrations)
        expect(first.map((m) => m.id)).toEqual(migrations.map((m) => m.id))
        const second = yield* migrate(migrations)
        expect(second).toEqual([])
        const applied = yield* sql<{ id: number }>`SELECT id FROM orgplane_migrations ORDER BY id`
        expect(applied.map((row) => row.id)).toEqual(migrations.map((m) => m.id))
      }))

    it.effect.runIf(TestDatabase.onPostgres)("started concurrently, apply each migration exactly once (needs real concurrency: Postgres only)", () =>
      Effect.gen(function*() {
        const extra = { id: 999_001, name: "probe", up: Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql`CREATE TABLE probe (id int)`) }
        const results = yield* Effect.all([1, 2, 3].map(() => migrate([...migrations, extra])), { concurrency: "unbounded" })
        expect(results.flat().filter((m) => m.id === extra.id)).toHaveLength(1)
      }))
  })
})

describe("API key principals", () => {
  it.layer(Layer.unwrap(TestDatabase.layer({ migrated: true })), { timeout: 60_000 })((it) => {
    it.effect("stop resolving once their member is removed from the organization", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const at = new Date("2026-01-01T00:00:00Z")
        yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
                   VALUES ('usr_01m7xsj9sje4fs7gbhktxsgnwg', 'k@example.com', 'K', 'x', ${at}, ${at})`
        yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at)
                   VALUES ('org_01m7xsja0me4fs7gc4ed0s22av', 'O', 'free', ${at}, ${at})`
        yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
                   VALUES ('om_01m7xsja0se4fs7gcbg0w73xhy', 'org_01m7xsja0me4fs7gc4ed0s22av', 'usr_01m7xsj9sje4fs7gbhktxsgnwg', 'admin', ${at}, ${at})`
        const repository = yield* ApiKeysRepository
        yield* repository.insert({
          id: "apk_01m7xsja1pe4fs7gcqehxq2c36" as never,
          organizationId: "org_01m7xsja0me4fs7gc4ed0s22av" as never,
          membershipId: "om_01m7xsja0se4fs7gcbg0w73xhy" as never,
          name: "k",
          prefix: "opk_x",
          keyHash: "hash",
          createdAt: at,
          expiresAt: null,
          ssoConnectionId: null,
          authenticatedOrganizationId: null,
          scopes: null,
          parentApiKeyId: null
        })
        const resolved = yield* repository.resolve({ keyHash: "hash", at })
        expect(Option.map(resolved, (key) => [key.userEmail, key.organizationId, key.role])).toEqual(
          Option.some(["k@example.com", "org_01m7xsja0me4fs7gc4ed0s22av", "admin"])
        )
        yield* sql`UPDATE memberships SET removed_at = ${at}
                   WHERE organization_id = 'org_01m7xsja0me4fs7gc4ed0s22av' AND id = 'om_01m7xsja0se4fs7gcbg0w73xhy'`
        expect(Option.isNone(yield* repository.resolve({ keyHash: "hash", at }))).toBe(true)
      }).pipe(Effect.provide(ApiKeysRepository.layer)))
  })
})

/** A data folder as the server opens one: a new folder loaded from the run's folder template, made by its first use. */
const folder = (dataDir: string) => Database.layerFolder({ migrationsUrl, migrate: migrate(migrations) }, dataDir)

describe("the embedded database", () => {
  it("keeps everything written across a restart", async () => {
    const dataDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-restart-"))
    try {
      const first = await TestServer.start({ database: folder(dataDir) })
      const owner = await Http.owner(first.url, "Durable")
      const { key } = await Http.apiKey(first.url, owner.token, undefined, "k")
      await first.close()

      const second = await TestServer.start({ database: folder(dataDir) })
      try {
        const me = await calls(second.url).users.me({ token: owner.token })
        expect(me.status).toBe(200)
        const { organization } = ok(me, 200)
        if (organization === null) throw new Error(`GET /v1/me after the restart names no active organization: ${me.text}`)
        expect(organization.name).toBe("Durable")
        expect((await Http.request(second.url, "GET", "/v1/me", { apiKey: key })).status).toBe(200)
        const signIn = await Http.request(second.url, "POST", "/v1/auth/sign-in", { body: { email: owner.email, password: owner.password } })
        expect(signIn.status).toBe(200)
      } finally {
        await second.close()
      }
    } finally {
      await Fs.rm(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})
