/**
 * A fresh database for each test server: on the Postgres at
 * `DATABASE_URL` when set (a new database, dropped afterwards), else embedded (PGlite loaded from a dumped template,
 * behind its unix socket).
 *
 * Empty, or `migrated`: a migrated one is copied from a template migrated once, not migrated again for each test
 * server (the migrations take seconds on PGlite, and far longer on a loaded machine). On PGlite the template is
 * platform/EmbeddedTemplate.ts's, the dump `--data memory` starts from, kept in the test run's cache folder
 * (vitest.config.ts) and made by the first file that needs it; on Postgres it is a database of its own,
 * `orgplane_test_template_<fingerprint>`, that fresh databases are created from (`CREATE DATABASE … TEMPLATE`).
 * Both are named after the migrations' code, so a changed migration makes a new template. An embedded database a
 * server is done with is restored to the template and kept for the next server of the process (`restore`).
 */
import { PGlite } from "@electric-sql/pglite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Statement from "effect/sql/Statement"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { migrations, migrationsUrl } from "../../src/migrations/index.js"
import * as Database from "../../src/platform/Database.js"
import * as EmbeddedTemplate from "../../src/platform/EmbeddedTemplate.js"
import { migrate } from "../../src/platform/Migrator.js"
import * as DatabaseProxy from "./DatabaseProxy.js"

/** The Postgres the tests run on, or undefined for the embedded database. */
export const postgresUrl = (() => {
  const url = process.env["DATABASE_URL"]?.trim()
  return url === undefined || url === "" ? undefined : url
})()

export const kind = postgresUrl === undefined ? "PGlite" : "Postgres"

/** Whether the tests run on Postgres. */
export const onPostgres = postgresUrl !== undefined

/**
 * The empty template's file in the test run's cache folder: named after PGlite's version and Database.ts's code
 * (its initdb arguments), so a change to either makes another.
 */
const EMPTY_PREFIX = "empty-"
const emptyTemplateFile = Effect.flatMap(Effect.orDie(EmbeddedTemplate.cacheDir), (dir) =>
  Effect.map(
    EmbeddedTemplate.templateFile(dir, new URL("../../src/platform/Database.ts", import.meta.url).href),
    (file) => Path.join(dir, EMPTY_PREFIX + Path.basename(file))
  ))

/**
 * An empty database in memory dumped once, as `--data memory`'s template is: loading it takes a fraction of initdb's
 * time (0.4 s of CPU, initdb and the dump 3.4 s). Saved in the cache folder, so only the first file of a run that
 * needs it, not each, runs initdb; the empty templates of other PGlite versions or initdb arguments are removed.
 */
let template: Promise<File | Blob> | undefined
const emptyTemplate = () =>
  template ??= Effect.runPromise(Effect.gen(function*() {
    const file = yield* emptyTemplateFile
    const saved = yield* EmbeddedTemplate.read(file)
    if (Option.isSome(saved)) return saved.value
    const dump = yield* Effect.promise(async () => {
      const db = await PGlite.create({ initDbStartParams: [...Database.memoryInitdb] })
      const dump = await EmbeddedTemplate.dumpOf(db)
      await db.close()
      return dump
    })
    yield* EmbeddedTemplate.save(file, dump)
    yield* Effect.promise(async () => {
      const dir = Path.dirname(file)
      for (const name of await Fs.promises.readdir(dir)) {
        if (name.startsWith(EMPTY_PREFIX) && name.endsWith(".tar") && Path.join(dir, name) !== file) {
          await Fs.promises.rm(Path.join(dir, name), { force: true })
        }
      }
    })
    return dump
  }))

/** The embedded template's file for the current migrations: its name is their fingerprint. */
const templateFile = Effect.flatMap(Effect.orDie(EmbeddedTemplate.cacheDir), (dir) => EmbeddedTemplate.templateFile(dir, migrationsUrl))

/** The migrated embedded template: the saved one, or one made now (migrated from the empty one) and saved. */
let migratedTemplate: Promise<Blob> | undefined
export const embeddedMigrated = () =>
  migratedTemplate ??= Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const file = yield* templateFile
    const saved = yield* EmbeddedTemplate.read(file)
    if (Option.isSome(saved)) return saved.value
    const { db, socketDir } = yield* Effect.orDie(Database.embedded({ dataDir: "memory", loadDataDir: yield* Effect.promise(emptyTemplate) }))
    yield* Effect.orDie(Effect.provide(migrate(migrations), Database.layerSocket(socketDir)))
    const dump = yield* Effect.promise(() => EmbeddedTemplate.dumpOf(db))
    yield* EmbeddedTemplate.save(file, dump)
    return dump
  })))

const withDatabase = (url: string, name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString()

const TEMPLATE_PREFIX = "orgplane_test_template_"

/**
 * The name of the migrated template database on the Postgres at `url`, made if missing: migrated under a name of
 * its own, then renamed (so a concurrent file never copies a half-migrated one; the loser of a race drops its copy).
 * Templates of other migration sets are dropped.
 */
const postgresTemplate = Effect.fn("TestDatabase.postgresTemplate")(function*(url: string) {
  const name = TEMPLATE_PREFIX + Path.basename(yield* templateFile, ".tar").slice(-20)
  const admin = yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 }))
  const sql = Context.get(admin, SqlClient.SqlClient)
  const existing = yield* Effect.orDie(sql<{ datname: string }>`SELECT datname FROM pg_database WHERE datname LIKE ${TEMPLATE_PREFIX + "%"}`)
  if (existing.some(({ datname }) => datname === name)) return name
  const building = `orgplane_test_building_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  yield* Effect.orDie(sql.unsafe(`CREATE DATABASE ${building}`))
  yield* Effect.orDie(Effect.provide(migrate(migrations), Database.layerUrl(Redacted.make(withDatabase(url, building)), { maxConnections: 1 })))
  // The migration's connection may still be closing on the server's side: the rename waits for it. Another file
  // may have made the template meanwhile: then this copy goes.
  const made = sql<{ datname: string }>`SELECT datname FROM pg_database WHERE datname = ${name}`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))
  for (let attempt = 0;; attempt++) {
    if (yield* made) {
      yield* Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`))
      break
    }
    const renamed = yield* Effect.exit(sql.unsafe(`ALTER DATABASE ${building} RENAME TO ${name}`))
    if (renamed._tag === "Success") break
    if (attempt === 50) return yield* Effect.die(renamed.cause)
    yield* Effect.sleep("100 millis")
  }
  for (const { datname } of existing) {
    if (datname.startsWith(TEMPLATE_PREFIX) && datname !== name) yield* Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${datname}`))
  }
  return name
}, Effect.scoped)

/** A new database on the Postgres at `url` (a copy of the migrated template when `migrated`), dropped (its connections ended) when the scope closes. */
export const freshPostgres = Effect.fn("TestDatabase.freshPostgres")(function*(url: string, options: { readonly migrated?: boolean } = {}) {
  const template = options.migrated === true ? yield* postgresTemplate(url) : undefined
  const name = `orgplane_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = yield* Layer.build(Database.layerUrl(Redacted.make(url), { maxConnections: 1 }))
  const sql = Context.get(admin, SqlClient.SqlClient)
  yield* Effect.orDie(sql.unsafe(template === undefined ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`))
  yield* Effect.addFinalizer(() => Effect.ignore(sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
  return withDatabase(url, name)
})

export interface Options extends Database.Timeouts {
  /** A database already migrated to the current schema (copied from a template), not an empty one. */
  readonly migrated?: boolean
}

/**
 * A migrated embedded database a test server is done with, kept for the next one: loading the template costs about
 * a second of CPU, bringing a used database back to it (`restore`) 40 to 100 ms.
 */
interface Engine {
  readonly socketDir: string
  /** Waits until the engine's socket holds no connection (the last user's is closed), so the next may connect. */
  readonly quiet: Effect.Effect<void>
  readonly close: Effect.Effect<void>
  /** What the engine is restored to. */
  readonly template: TemplateRelations
  /** The engine's DDL count (`ddlCount`) when its catalog was last found to be the template's. */
  checked: string
}

interface TemplateRelations {
  /** The tables `restore` empties: all but the migrations'. */
  readonly tables: ReadonlyArray<string>
  readonly relations: ReadonlySet<string>
  /** `catalogOf` and `globalsOf` the template. */
  readonly catalog: string
  readonly globals: string
}

/** Engines back in the template's state, ready for the next server of this process; a few at most. */
const idle: Array<Engine> = []
const keptIdle = 2

/** The template's relations in `public`, and its shape (`shapeOf`), read from the first engine before its use. */
let templateRelations: Promise<TemplateRelations> | undefined

/** A pool of one connection on an engine's socket. */
const connect = (socketDir: string) =>
  Effect.map(
    Layer.build(Database.layerSocket(socketDir, { connectTimeout: "2 seconds", statementTimeout: "10 seconds" })),
    (context) => Context.get(context, SqlClient.SqlClient)
  )

/**
 * Waits, for ten seconds at most, until `connections` answers zero: on the process's timers, not on the Clock of
 * the test or server releasing the engine (a TestClock would never let it wake up).
 */
const whenQuiet = (connections: () => number) =>
  Effect.promise(async () => {
    for (let attempt = 0; connections() > 0; attempt++) {
      if (attempt === 1000) throw new Error("an embedded test database kept a connection open for 10 seconds")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })

/**
 * Everything a test server could change that `restore` does not put back, in two parts: the catalog's (`catalogOf`:
 * the relations of every schema with their columns, defaults and kinds, constraints, indexes, triggers, functions,
 * types, schemas, extensions; partitions aside, kept, see `relationsOf`: their columns, constraints and indexes are
 * their table's), and the rest (`globalsOf`: settings of a database or role, roles, event triggers, the migrations
 * recorded). Both equal to the template's, the engine is the template again. The catalog's costs about 70 ms of an
 * engine's time and is read only when the engine's DDL count moved (`ddlCount`); the rest, a millisecond, always.
 */
const catalogOf = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ shape: string }>`
      WITH partitions AS (SELECT oid FROM pg_class WHERE relispartition UNION ALL SELECT reltoastrelid FROM pg_class WHERE relispartition AND reltoastrelid <> 0)
      SELECT md5(string_agg(item, E'\n' ORDER BY item)) AS shape FROM (
        SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || coalesce((
          SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text || ' ' ||
            coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS item
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%' AND NOT c.relispartition
        UNION ALL SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
          FROM pg_constraint WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
            AND conrelid NOT IN (SELECT oid FROM partitions)
        UNION ALL SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index
          WHERE indrelid >= 16384 AND indrelid NOT IN (SELECT oid FROM partitions)
        UNION ALL SELECT 'trigger ' || pg_get_triggerdef(oid) FROM pg_trigger
          WHERE NOT tgisinternal AND tgrelid NOT IN (SELECT oid FROM partitions)
        UNION ALL SELECT 'function ' || oid::regprocedure::text || ' ' || md5(prosrc) FROM pg_proc WHERE oid >= 16384
        UNION ALL SELECT 'type ' || t.oid::regtype::text FROM pg_type t
          WHERE t.oid >= 16384 AND t.typrelid NOT IN (SELECT oid FROM partitions)
            AND NOT EXISTS (SELECT FROM pg_type e WHERE e.oid = t.typelem AND e.typrelid IN (SELECT oid FROM partitions))
        UNION ALL SELECT 'schema ' || nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\_temp%' AND nspname NOT LIKE 'pg\_toast\_temp%'
        UNION ALL SELECT 'extension ' || extname || ' ' || extversion FROM pg_extension
      ) items`,
    (rows) => rows[0]?.shape ?? ""
  )

/** What the catalog's DDL count cannot see (`catalogOf`): settings, roles and event triggers are not DDL to it. */
const globalsOf = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ shape: string }>`
      SELECT md5(string_agg(item, E'\n' ORDER BY item)) AS shape FROM (
        SELECT 'setting ' || coalesce(setdatabase::text, '') || ' ' || coalesce(setrole::text, '') || ' ' || setconfig::text AS item FROM pg_db_role_setting
        UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper::text FROM pg_roles
        UNION ALL SELECT 'event trigger ' || evtname || ' ' || evtevent || ' ' || evtenabled::text || ' ' || evtfoid::regproc::text FROM pg_event_trigger
        UNION ALL SELECT 'migration ' || m::text FROM orgplane_migrations m
      ) items`,
    (rows) => rows[0]?.shape ?? ""
  )

/**
 * An engine's DDL count: event triggers in a schema of the tests' own (`orgplane_test`, on every engine before the
 * template's shape is read, so it is part of it) count each statement that creates, alters or drops an object of
 * the catalog, but those a server's start and `restore` make as a matter of course: the durable engine's tables
 * (`public.orgplane_cluster_*`, dropped by `restore` and made again by the next server), the months' partitions
 * (`public.<table>_pYYYYMM`, left out of the shape) and their TOAST tables. A sequence counts, so a statement rolled
 * back counts too. While the count stands where the last check left it, the catalog is as it was then.
 */
const countDdl = [
  "CREATE SCHEMA orgplane_test",
  "CREATE SEQUENCE orgplane_test.ddl",
  `CREATE FUNCTION orgplane_test.counts(schema_name text, identity text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT schema_name IS DISTINCT FROM 'pg_toast'
      AND identity !~ '(^|for | on )public\.(orgplane_cluster_|[a-z_]+_p[0-9]{6}([_.[]|$))' $$`,
  `CREATE FUNCTION orgplane_test.on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN
    IF EXISTS (SELECT FROM pg_event_trigger_ddl_commands() c WHERE orgplane_test.counts(c.schema_name, c.object_identity)) THEN
      PERFORM nextval('orgplane_test.ddl');
    END IF;
  END $$`,
  `CREATE FUNCTION orgplane_test.on_drop() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN
    IF EXISTS (SELECT FROM pg_event_trigger_dropped_objects() o WHERE orgplane_test.counts(o.schema_name, o.object_identity)) THEN
      PERFORM nextval('orgplane_test.ddl');
    END IF;
  END $$`,
  "CREATE EVENT TRIGGER orgplane_test_ddl ON ddl_command_end EXECUTE FUNCTION orgplane_test.on_ddl()",
  "CREATE EVENT TRIGGER orgplane_test_drop ON sql_drop EXECUTE FUNCTION orgplane_test.on_drop()"
]

const ddlCount = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ count: string }>`SELECT last_value::text || ' ' || is_called::text AS count FROM orgplane_test.ddl`,
    (rows) => rows[0]?.count ?? ""
  )

/**
 * The relations of `public` by name and kind, but partitions: a month's partitions of the template's tables, which a
 * server makes as it starts, are kept for the next server (emptied with their table), so that it makes none.
 */
const relationsOf = (sql: SqlClient.SqlClient) =>
  sql<{ name: string; kind: string }>`
    SELECT c.relname AS name, c.relkind::text AS kind FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND NOT c.relispartition`

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`

const dropStatement: Record<string, string> = { r: "TABLE", p: "TABLE", f: "FOREIGN TABLE", v: "VIEW", m: "MATERIALIZED VIEW", S: "SEQUENCE" }

/**
 * Brings a used engine back to the template: the session's state discarded (an open transaction, prepared
 * statements, locks, listeners, settings), what the last server created dropped (the cluster's tables), every table
 * emptied but the migrations'; the months' partitions a server makes as it starts are kept, emptied with their table.
 * Answers whether the engine's shape is the template's again; one whose schema a test changed otherwise is not reused.
 */
const restore = Effect.fn("TestDatabase.restore")(function*(engine: Engine) {
  const { socketDir, quiet, template: { tables, relations, catalog, globals } } = engine
  yield* quiet
  const sql = yield* connect(socketDir)
  yield* sql.unsafe("ROLLBACK")
  yield* sql.unsafe("DISCARD ALL")
  const extra = (yield* relationsOf(sql)).filter(({ name }) => !relations.has(name))
  for (const { name, kind } of extra) yield* sql.unsafe(`DROP ${dropStatement[kind]} IF EXISTS ${quoted(name)} CASCADE`)
  // Only the tables holding rows are emptied: by DELETE with the foreign keys' triggers off (every table that holds
  // rows is emptied, so none is left naming a deleted row), then VACUUM. On PGlite a TRUNCATE, which makes each
  // table's and index's files anew, costs about ten times as much (after a staffed organization: 113 ms of CPU).
  // VACUUM leaves an emptied table's statistics saying it is empty (reltuples 0), which the planner trusts: a test
  // that then loads 10,000 rows in one transaction was planned with nested loops (a statement of 16 s). A table's
  // statistics are put back to the template's, unknown (-1), as TRUNCATE leaves them; the catalog is updated in
  // place, the superuser's way, since Postgres has no statement for it.
  const filled = yield* sql.unsafe<{ name: string }>(
    tables.map((table) => `SELECT '${table.replaceAll("'", "''")}' AS name WHERE EXISTS (SELECT FROM ${quoted(table)})`).join(" UNION ALL ")
  )
  if (filled.length > 0) {
    yield* sql.unsafe("SET session_replication_role = replica")
    for (const { name } of filled) yield* sql.unsafe(`DELETE FROM ${quoted(name)}`)
    yield* sql.unsafe("RESET session_replication_role")
    yield* sql.unsafe(`VACUUM ${filled.map(({ name }) => quoted(name)).join(", ")}`)
    yield* sql.unsafe(
      `UPDATE pg_class SET relpages = 0, reltuples = -1, relallvisible = 0
       WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND (relpages, reltuples, relallvisible) <> (0, -1, 0)`
    )
  }
  if ((yield* globalsOf(sql)) !== globals) return false
  const count = yield* ddlCount(sql)
  if (count === engine.checked) return true
  if ((yield* catalogOf(sql)) !== catalog) return false
  engine.checked = count
  return true
}, Effect.scoped)

/** A migrated embedded database: one another server is done with, or one loaded from the template now. */
const migratedEngine = Effect.gen(function*() {
  const kept = idle.pop()
  if (kept !== undefined) return kept
  const loadDataDir = yield* Effect.promise(embeddedMigrated)
  const scope = yield* Scope.make()
  const { socketDir, connections } = yield* Effect.orDie(Scope.provide(Database.embedded({ dataDir: "memory", loadDataDir }), scope))
  const quiet = whenQuiet(connections)
  // An engine still kept when the worker exits leaves no socket folder behind.
  const removeFolder = () => Fs.rmSync(socketDir, { recursive: true, force: true })
  process.once("exit", removeFolder)
  yield* Scope.addFinalizer(scope, Effect.sync(() => process.off("exit", removeFolder)))
  // The test's own statements, not a server's: not recorded for the tenancy check.
  const checked = yield* Effect.scoped(Effect.gen(function*() {
    const sql = yield* Effect.orDie(connect(socketDir))
    for (const statement of countDdl) yield* Effect.orDie(sql.unsafe(statement))
    return yield* Effect.orDie(ddlCount(sql))
  })).pipe(Effect.provideService(Statement.CurrentTransformer, undefined))
  yield* quiet
  const read = templateRelations ??= Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* Effect.orDie(connect(socketDir))
    const found = yield* Effect.orDie(relationsOf(sql))
    return {
      tables: found.filter(({ kind, name }) => (kind === "r" || kind === "p") && name !== "orgplane_migrations").map(({ name }) => name),
      relations: new Set(found.map(({ name }) => name)),
      catalog: yield* Effect.orDie(catalogOf(sql)),
      globals: yield* Effect.orDie(globalsOf(sql))
    }
  })))
  const template = yield* Effect.promise(() => read)
  yield* quiet
  const engine: Engine = { socketDir, quiet, close: Scope.close(scope, Exit.void), template, checked }
  return engine
})

/** Gives an engine back: restored to the template, it waits for the next server; otherwise it is closed. */
const giveBack = (engine: Engine) =>
  Effect.gen(function*() {
    // The test's own statements, not the server's: not recorded for the tenancy check.
    const restored = yield* Effect.exit(Effect.andThen(restore(engine), (same) => Effect.as(engine.quiet, same)).pipe(
      Effect.provideService(Statement.CurrentTransformer, undefined)
    ))
    if (restored._tag === "Success" && restored.value && idle.length < keptIdle) idle.push(engine)
    else yield* engine.close
  })

/** Where a fresh database listens, for the scope: its URL (Postgres) or its socket folder (embedded), and its target. */
export const fresh = Effect.fn("TestDatabase.fresh")(function*(options: Options) {
  if (postgresUrl !== undefined) {
    const url = new URL(yield* freshPostgres(postgresUrl, options))
    return { url: url.toString(), target: { host: url.hostname, port: Number(url.port || 5432) } satisfies DatabaseProxy.Target }
  }
  if (options.migrated === true) {
    const engine = yield* Effect.acquireRelease(migratedEngine, giveBack)
    return { socketDir: engine.socketDir, target: { path: Database.socketPath(engine.socketDir) } satisfies DatabaseProxy.Target }
  }
  const { socketDir } = yield* Effect.orDie(Database.embedded({ dataDir: "memory", loadDataDir: yield* Effect.promise(emptyTemplate) }))
  return { socketDir, target: { path: Database.socketPath(socketDir) } satisfies DatabaseProxy.Target }
})

/** A fresh database's layer, reached the way the server reaches it (a URL's pool, or the embedded socket's). */
export const layer = Effect.fn("TestDatabase.layer")(function*(options: Options = {}) {
  const { migrated: _, ...timeouts } = options
  const database = yield* fresh(options)
  return "url" in database
    ? Database.layerUrl(Redacted.make(database.url), { maxConnections: 4, ...timeouts })
    : Database.layerSocket(database.socketDir, timeouts)
})

/** A fresh database behind a proxy the test can pause, and its layer through the proxy. */
export const behindProxy = Effect.fn("TestDatabase.behindProxy")(function*(options: Options = {}) {
  const { migrated: _, ...timeouts } = options
  const database = yield* fresh(options)
  const proxy = yield* DatabaseProxy.scoped(database.target)
  const via = "url" in database
    ? Object.assign(new URL(database.url), { hostname: "127.0.0.1", port: String(proxy.port) }).toString()
    : `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
  // The embedded database has one session: more connections would interleave.
  const layer = Database.layerUrl(Redacted.make(via), { maxConnections: "url" in database ? 4 : 1, ...timeouts })
  return { proxy, layer }
})
