/**
 * platform/Migrator.ts and the migrations: a fresh database (the embedded one, or Postgres with DATABASE_URL) migrates
 * to the saved schema, `fixtures/database-schema.json` (the migrations applied, and `information_schema.columns`,
 * `pg_indexes` and `pg_constraint` of the public schema, one row a line), so a change of the schema is never made by
 * accident: when a migration changes it on purpose, write the file again with
 * `pnpm test packages/server/test/Migrator.test.ts --update=all` and review its diff. The migrations 0.1.0 shipped
 * (`fixtures/0.1.0/migrations.json`) come first, with the ids and names its databases recorded them under.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs"
import { migrations } from "../src/migrations/index.js"
import { migrate, runScript } from "../src/platform/Migrator.js"
import * as TestDatabase from "./support/TestDatabase.js"
import * as TestServer from "./support/TestServer.js"

type Row = ReadonlyArray<string | number | null>
interface SchemaDump {
  readonly migrations: ReadonlyArray<Row>
  readonly columns: ReadonlyArray<Row>
  readonly indexes: ReadonlyArray<Row>
  readonly constraints: ReadonlyArray<Row>
}

/** The migrations 0.1.0 shipped, `[id, name]`, as the databases it migrated record them. */
const migrations010: ReadonlyArray<Row> = JSON.parse(Fs.readFileSync(new URL("./fixtures/0.1.0/migrations.json", import.meta.url), "utf8"))

/** The dump as the saved file has it: one row a line, so a diff names what a migration changed. */
const format = (dump: SchemaDump) =>
  `{\n${
    (["migrations", "columns", "indexes", "constraints"] as const).map((key) =>
      `  ${JSON.stringify(key)}: [\n${dump[key].map((row) => `    ${JSON.stringify(row)}`).join(",\n")}\n  ]`
    ).join(",\n")
  }\n}\n`

/**
 * The same dump as the fixture's, of the database `sql` reaches (one JSON text: no column names to rename). Not-null
 * constraints are left out of `pg_constraint`'s: PGlite's Postgres (18) lists them there, Postgres 15 does not; the
 * columns' `is_nullable` says them on both.
 */
const dump = Effect.fn("MigratorTest.dump")(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ readonly dump: string }>`SELECT jsonb_build_object(
    'columns', (SELECT jsonb_agg(jsonb_build_array(table_name, column_name, ordinal_position, data_type, is_nullable, column_default) ORDER BY table_name, ordinal_position)
                FROM information_schema.columns WHERE table_schema = 'public'),
    'indexes', (SELECT jsonb_agg(jsonb_build_array(tablename, indexname, indexdef) ORDER BY tablename, indexname)
                FROM pg_indexes WHERE schemaname = 'public'),
    'constraints', (SELECT jsonb_agg(jsonb_build_array(c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)) ORDER BY c.conrelid::regclass::text, c.conname)
                FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' AND c.contype <> 'n'),
    'migrations', (SELECT jsonb_agg(jsonb_build_array(id, name) ORDER BY id) FROM orgplane_migrations)
  )::text AS dump`
  const parsed: SchemaDump = JSON.parse(row!.dump)
  return parsed
})

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 120_000, excludeTestServices: true })(`migrations on ${TestDatabase.kind}`, (it) => {
  it.effect("a fresh database migrates to the saved schema, 0.1.0's migrations first under their ids and names", () =>
    Effect.gen(function*() {
      const applied = yield* migrate(migrations)
      expect(applied.slice(0, migrations010.length).map(({ id, name }) => [id, name])).toEqual(migrations010)
      const migrated = yield* dump()
      expect(migrated.migrations).toEqual(applied.map(({ id, name }) => [id, name]))
      yield* Effect.promise(() =>
        expect(format(migrated)).toMatchFileSnapshot(
          "./fixtures/database-schema.json",
          "the schema a fresh database migrates to is not the saved one: if a migration changed it on purpose, run `pnpm test packages/server/test/Migrator.test.ts --update=all` and review the diff"
        )
      )
    }))

  it.effect("a second run applies nothing", () =>
    Effect.gen(function*() {
      expect(yield* migrate(migrations)).toEqual([])
    }))

  it.effect("a script runs its statements in the transaction; a failing statement fails it with its SQLSTATE", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* runScript(sql, `
CREATE TABLE test_script_a (id int PRIMARY KEY); -- a comment; with a semicolon
CREATE TABLE test_script_b (note text DEFAULT 'a;b');
CREATE INDEX test_script_b_idx ON test_script_b (note);
`)
      expect(yield* sql`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename LIKE 'test_script_%'`).toEqual([{ n: 2 }])
      const failed = yield* Effect.flip(sql.withTransaction(runScript(sql, `CREATE TABLE test_script_c (id int); CREATE TABLE test_script_a (id int);`)))
      expect(failed.reason.cause).toMatchObject({ code: "42P07" })
      expect(yield* sql`SELECT to_regclass('test_script_c') IS NULL AS rolled_back`).toEqual([{ rolledBack: true }])
      const refused = yield* Effect.exit(runScript(sql, "SELECT 1 $orgplane_script$"))
      expect(refused._tag).toBe("Failure")
    }))
})

// On the embedded database the three runs share its one connection: each waits for the others' whole runs (46
// migrations each on a loaded machine: more than the pool's 5 seconds), which Postgres's several connections do not.
layer(Layer.unwrap(TestDatabase.layer({ connectTimeout: "2 minutes" })), { timeout: 120_000, excludeTestServices: true })(`servers starting together on ${TestDatabase.kind}`, (it) => {
  it.effect("apply each migration once: one run applies them all, the others find nothing left", () =>
    Effect.gen(function*() {
      const runs = yield* Effect.all([migrate(migrations), migrate(migrations), migrate(migrations)], { concurrency: 3 })
      expect(runs.map((applied) => applied.length).sort((a, b) => a - b)).toEqual([0, 0, migrations.length])
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM orgplane_migrations`).toEqual([{ n: migrations.length }])
    }))
})

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 120_000, excludeTestServices: true })(`migration 0018 on ${TestDatabase.kind}`, (it) => {
  it.effect("moves an organization's single SSO connection of 0009 into the connections of 0018, with its domain", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate(migrations.filter((migration) => migration.id < 18))
      const at = new Date("2030-01-01T00:00:00Z")
      yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ('org_1', 'Acme', 'team', ${at}, ${at})`
      yield* sql`INSERT INTO sso_connections (organization_id, protocol, domain, saml_entity_id, saml_sso_url, saml_certificate,
        verification_token, domain_verified_at, created_at, updated_at)
        VALUES ('org_1', 'saml', 'acme.example', 'https://idp.example/entity', 'https://idp.example/sso', 'CERT', 'token', ${at}, ${at}, ${at})`
      expect((yield* migrate(migrations)).map(({ id }) => id)).toEqual(migrations.filter((migration) => migration.id >= 18).map(({ id }) => id))
      expect(yield* sql`SELECT organization_id, domain, verification_token, verified_at FROM sso_domains`).toEqual([
        { organizationId: "org_1", domain: "acme.example", verificationToken: "token", verifiedAt: at }
      ])
      const [connection] = yield* sql<{ readonly id: string; readonly saml: unknown; readonly mapping: unknown }>`
        SELECT id, kind, name, state, config_revision, saml::text AS saml, mapping::text AS mapping, oidc FROM sso_connections`
      expect(connection).toMatchObject({ kind: "saml", name: "SAML", state: "draft", configRevision: 1, oidc: null })
      expect(connection!.id).toMatch(/^ssc_[0-9a-z]{26}$/)
      expect(JSON.parse(String(connection!.saml))).toMatchObject({ entityId: "https://idp.example/entity", certificates: ["CERT"] })
      expect(JSON.parse(String(connection!.mapping))).toMatchObject({ givenName: "givenName", familyName: "surname" })
      expect(yield* sql`SELECT domain, active FROM sso_connection_domains`).toEqual([{ domain: "acme.example", active: false }])
      expect(yield* sql`SELECT to_regclass('sso_connections_0009') IS NULL AS dropped`).toEqual([{ dropped: true }])
    }))
})

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 120_000, excludeTestServices: true })(`migration 0043 on ${TestDatabase.kind}`, (it) => {
  it.effect("takes role changes and the operator's lists from keys made without scopes, and gives keys that named invitations.manage the admins' invitations", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate(migrations.filter((migration) => migration.id < 43))
      const at = new Date("2030-01-01T00:00:00Z")
      yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ('org_1', 'Acme', 'team', ${at}, ${at})`
      yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ('usr_1', 'ada@example.com', 'Ada', 'x', ${at}, ${at})`
      yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at) VALUES ('om_1', 'org_1', 'usr_1', 'owner', ${at}, ${at})`
      // The default 0.1.0 and 0.2.0 gave a key made without scopes (an owner's and an admin's alike).
      const madeWithoutScopes = "members.read teams.read catalog.read catalog.create connectors.read templates.read templates.create desktopPolicies.readEffective memory.use members.leave members.readDirectory members.manageDirectory members.changeRole members.remove teams.manage invitations.manage marketplaces.create catalog.grantOrgWide connectors.manage desktopPolicies.manage audit.read organizations.read organizations.update admin.readMetrics admin.readUsers admin.readOrganizations workers.read workers.register workers.manage workers.readActivity workers.manageAny telemetry.ingest mcp.read mcp.connectOwn mcp.manage mcp.resolve mcp.callTools capabilities.use llmProviders.use llmProviders.create capabilities.manage"
      const keys: ReadonlyArray<readonly [string, string | null]> = [
        ["apk_default", madeWithoutScopes],
        ["apk_invites", "members.read invitations.manage"],
        ["apk_roles", "members.read members.changeRole"],
        ["apk_everything", `${madeWithoutScopes} apiKeys.manage`],
        ["apk_before_scopes", null]
      ]
      for (const [id, scopes] of keys) {
        yield* sql`INSERT INTO api_keys (id, organization_id, membership_id, name, prefix, key_hash, created_at, scopes)
          VALUES (${id}, 'org_1', 'om_1', ${id}, 'opk_x', ${id}, ${at}, ${scopes})`
      }
      yield* migrate(migrations)
      const rows = yield* sql<{ readonly id: string; readonly scopes: string | null }>`SELECT id, scopes FROM api_keys WHERE organization_id = 'org_1' ORDER BY id`
      const scopesOf = new Map(rows.map((row) => [row.id, row.scopes]))
      expect(scopesOf.get("apk_default")).toBe(
        madeWithoutScopes.replace(" members.changeRole", "").replace(" admin.readUsers admin.readOrganizations", "")
      )
      expect(scopesOf.get("apk_invites")).toBe("members.read invitations.manage invitations.inviteAdmins")
      expect(scopesOf.get("apk_roles")).toBe("members.read members.changeRole")
      expect(scopesOf.get("apk_everything")).toBe(
        `${madeWithoutScopes.replace("invitations.manage", "invitations.manage invitations.inviteAdmins")} apiKeys.manage`
      )
      expect(scopesOf.get("apk_before_scopes")).toBeNull()
    }))
})

layer(Layer.unwrap(TestDatabase.layer()), { timeout: 120_000, excludeTestServices: true })(`migration 0047 on ${TestDatabase.kind}`, (it) => {
  it.effect("marks every invitation made before as shown, and withdraws the proofs of an address that accepting one recorded", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrate(migrations.filter((migration) => migration.id < 47))
      const at = new Date("2030-01-01T00:00:00Z")
      yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ('org_1', 'Acme', 'team', ${at}, ${at})`
      for (const [user, email] of [["usr_1", "owner@example.com"], ["usr_2", "invited@example.com"], ["usr_3", "scim@example.com"]]) {
        yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES (${user}, ${email}, ${user}, 'x', ${at}, ${at})`
      }
      // The creator's proof, an accepted invitation's, and a directory's for a member who joined without one.
      for (const [membership, user, role] of [["om_1", "usr_1", "owner"], ["om_2", "usr_2", "member"], ["om_3", "usr_3", "member"]]) {
        yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at, email_verified_at)
          VALUES (${membership}, 'org_1', ${user}, ${role}, ${at}, ${at}, ${at})`
      }
      yield* sql`INSERT INTO invitations (id, organization_id, email, role, token_hash, status, created_by_membership_id, accepted_by_membership_id, created_at, updated_at, expires_at)
        VALUES ('inv_1', 'org_1', 'invited@example.com', 'member', 'h1', 'accepted', 'om_1', 'om_2', ${at}, ${at}, ${at}),
               ('inv_2', 'org_1', 'later@example.com', 'member', 'h2', 'pending', 'om_1', NULL, ${at}, ${at}, ${at})`
      yield* migrate(migrations)
      expect(yield* sql`SELECT id, delivery FROM invitations WHERE organization_id = 'org_1' ORDER BY id`).toEqual([
        { id: "inv_1", delivery: "shown" },
        { id: "inv_2", delivery: "shown" }
      ])
      const proven = yield* sql<{ readonly id: string }>`SELECT id FROM memberships WHERE organization_id = 'org_1' AND email_verified_at IS NOT NULL ORDER BY id`
      expect(proven.map((row) => row.id)).toEqual(["om_1", "om_3"])
    }))
})

describe(`the server on ${TestDatabase.kind}`, () => {
  it.live("migrates a fresh database at start", () =>
    Effect.gen(function*() {
      // One pool, the server's and the test's (the embedded database takes one connection).
      const pool = yield* Layer.build(yield* TestDatabase.layer())
      const server = yield* TestServer.start({ database: Layer.succeedContext(pool) })
      expect((yield* TestServer.get(server.url, "/ready")).status).toBe(200)
      const sql = Context.get(pool, SqlClient.SqlClient)
      expect(yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM orgplane_migrations`).toEqual([{ n: migrations.length }])
    }).pipe(Effect.scoped), 120_000)
})
