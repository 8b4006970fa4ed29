/**
 * The database: Postgres through `@effect/sql-pg`, either at `DATABASE_URL` or the embedded PGlite engine served on
 * a private unix socket, so one driver and one SQL dialect serve both.
 *
 * PGlite has a single session: the socket server and the pool both keep exactly one connection (with more,
 * protocol messages of different connections interleave and queries get each other's rows).
 *
 * Both prepare their statements (the driver's statement cache): PGlite would otherwise parse and plan the
 * authentication's joins on every request. Its session outlives a connection; the driver names a connection's
 * statements uniquely (a random prefix per connection), so a new connection never meets a broken one's under the
 * same name.
 *
 * Partial port (issue 46). Effect 4's `@effect/sql-pg` is its own Postgres client (no `pg`): it prepares, names
 * statements uniquely and retires a connection whose interrupted query did not end cleanly, which the Effect 3
 * module's `pg` subclasses did by hand. Left in packages/server/src/platform/Database.ts: the client-side query
 * timeout (`pg`'s `query_timeout`, the statement timeout plus one second, closing the connection: the native driver
 * has no such setting, so a server that answers nothing holds a statement until the caller's own deadline, as
 * `/ready`'s); the bound on waiting for a pooled connection (`connectTimeout` bounds opening one only); deallocating
 * what a broken connection prepared (`DEALLOCATE ALL`, no connect hook).
 *
 * Known, to settle before the areas rely on concurrency (measured 2026-11-26 with `@effect/sql-pg` 4.0.5, `effect`
 * 4.1.0): the pool opens connections for its first burst of concurrent statements only. Three statements waiting on a
 * table lock opened three connections; four more statements issued after them, plain or in transactions, opened none
 * and queued behind the three (`maxConnections` 8). With `minConnections` equal to `maxConnections` all seven ran on
 * connections of their own. `effect/Pool` alone (`makeWithTTL`, a slow acquire, `use` or `get` in either burst) grows
 * as it should, so the cause is in `PgPool`'s use of it.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Str from "effect/String"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { ServerConfig } from "./Config.js"
import * as DataFolderLock from "./DataFolderLock.js"
import * as EmbeddedTemplate from "./EmbeddedTemplate.js"

/**
 * `transform`, remembering its answers: the SQL client renames every column of every row it reads (a page of 50
 * members is 450 renames of the same 9 names). At most `limit` names are remembered; JSON columns' keys are renamed
 * too, and those are the data's.
 */
const remembered = (transform: (name: string) => string, limit = 10_000) => {
  const names = new Map<string, string>()
  return (name: string) => {
    let found = names.get(name)
    if (found === undefined) {
      found = transform(name)
      if (names.size < limit) names.set(name, found)
    }
    return found
  }
}

const naming = {
  transformResultNames: remembered(Str.snakeToCamel),
  transformQueryNames: remembered(Str.camelToSnake)
}

export interface Timeouts {
  /** Longest wait for a new connection (default 5 seconds); the wait for a pooled one is not bounded yet (see above). */
  readonly connectTimeout?: Duration.Input | undefined
  /** Longest a statement may run on the server (default 10 seconds); the client does not give up on its own yet (see above). */
  readonly statementTimeout?: Duration.Input | undefined
}

/**
 * Statements a connection prepares at most. Our statements are a bounded set of templates; past this many (a
 * statement built with a varying number of parameters), the least recently used is closed.
 */
const maxPreparedStatements = 1000

/**
 * How many connections the server's pool may open: 1 for the embedded database. The durable engine reads it to
 * choose between the in-process runner and a cluster runner (which keeps one connection for its shard locks).
 */
export class PoolSize extends Context.Service<PoolSize, number>()("@orgplane/server/platform/Database") {}

/** Where a pool connects: a Postgres URL, or a unix socket's path (the embedded database's). */
type Target = { readonly url: Redacted.Redacted } | { readonly path: string; readonly database: string; readonly username: string }

/**
 * The pool, with the timeouts: the statement timeout is the session's `statement_timeout`, sent as each connection
 * starts. Fails the layer when the database cannot be reached at start-up (the driver's pool connects lazily).
 */
const layerPool = (
  target: Target,
  options: Timeouts & {
    readonly maxConnections: number
    readonly idleTimeout?: Duration.Input | undefined
  }
) => {
  const statementMillis = Duration.toMillis(Duration.fromInputUnsafe(options.statementTimeout ?? Duration.seconds(10)))
  return PgClient.layerFrom(
    Effect.tap(
      PgClient.make({
        ...target,
        maxConnections: options.maxConnections,
        ...(options.idleTimeout === undefined ? {} : { idleTimeout: options.idleTimeout }),
        applicationName: "orgplane",
        connectTimeout: options.connectTimeout ?? Duration.seconds(5),
        startupParameters: { statement_timeout: String(statementMillis) },
        keepAlive: Duration.seconds(10),
        preparedStatementCacheSize: maxPreparedStatements,
        ...naming
      }),
      (sql) => sql`SELECT 1`
    )
  ).pipe(Layer.merge(Layer.succeed(PoolSize, options.maxConnections)))
}

/** Postgres at a URL. */
export const layerUrl = (url: Redacted.Redacted, options: Timeouts & { readonly maxConnections?: number | undefined } = {}) =>
  layerPool({ url }, {
    maxConnections: options.maxConnections ?? 10,
    connectTimeout: options.connectTimeout,
    statementTimeout: options.statementTimeout
  })

export interface EmbeddedOptions extends Timeouts {
  /** A folder to persist to, or `"memory"`. */
  readonly dataDir: string
  /** Start from a dumped data folder (a template) instead of running initdb: much faster, for tests. */
  readonly loadDataDir?: Blob | File | undefined
}

export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{
  readonly message: string
  readonly cause: unknown
}> {}

/**
 * Opens PGlite and serves it on a private unix socket for the duration of the scope. A data folder is held by this
 * process meanwhile (platform/DataFolderLock.ts): one that another process holds fails with `DataFolderInUse`
 * before PGlite reads or writes it.
 */
export const embedded = Effect.fn("Database.embedded")(function*(options: EmbeddedOptions) {
  const persistent = options.dataDir !== "memory"
  if (persistent) {
    yield* Effect.promise(() => Fs.mkdir(options.dataDir, { recursive: true }))
    yield* DataFolderLock.hold(Path.resolve(options.dataDir))
  }
  const db = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        PGlite.create({
          ...(persistent ? { dataDir: Path.resolve(options.dataDir) } : {}),
          ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {})
        }),
      catch: (cause) => new EmbeddedDatabaseError({ message: `Could not open the embedded database in ${options.dataDir}`, cause })
    }),
    (db) => Effect.ignore(Effect.promise(() => db.close()))
  )
  const socketDir = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-pg-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const server = new PGLiteSocketServer({ db, path: socketPath(socketDir), maxConnections: 1 })
        await server.start()
        return server
      },
      catch: (cause) => new EmbeddedDatabaseError({ message: "Could not start the embedded database socket", cause })
    }),
    (server) => Effect.ignore(Effect.promise(() => server.stop()))
  )
  return { db, socketDir }
})

/** The socket file of an embedded database's socket folder (the name Postgres clients look for). */
export const socketPath = (socketDir: string) => Path.join(socketDir, ".s.PGSQL.5432")

/** The pool on an embedded database's socket: one connection (see the module comment). */
export const layerSocket = (socketDir: string, timeouts: Timeouts = {}) =>
  layerPool({ path: socketPath(socketDir), database: "postgres", username: "postgres" }, {
    maxConnections: 1,
    // Keep the single connection: reconnecting costs more than the idle socket.
    idleTimeout: Duration.hours(1),
    connectTimeout: timeouts.connectTimeout,
    statementTimeout: timeouts.statementTimeout
  })

/** The embedded database as a PgClient (one connection; see the module comment). */
export const layerEmbedded = (options: EmbeddedOptions) =>
  Layer.unwrap(Effect.map(embedded(options), ({ socketDir }) => layerSocket(socketDir, options)))

/** How `--data memory` gets a migrated database without migrating at every start (platform/EmbeddedTemplate.ts). */
export interface MemoryTemplate {
  /** The `import.meta.url` of the module listing the migrations: the template is keyed by their code. */
  readonly migrationsUrl: string
  /** Brings a fresh database to the current schema, to be dumped as the template. */
  readonly migrate: Effect.Effect<unknown, SqlError, SqlClient.SqlClient>
}

/**
 * A fresh in-memory embedded database, loaded from the saved template of this migration set; without one (or with
 * one that does not load), a new database is migrated here and dumped as the template before anything else
 * writes to it.
 */
export const layerMemory = (template: MemoryTemplate, timeouts: Timeouts = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const file = yield* EmbeddedTemplate.templateFile(yield* EmbeddedTemplate.cacheDir, template.migrationsUrl)
    const saved = yield* EmbeddedTemplate.read(file)
    if (Option.isSome(saved)) {
      const loaded = yield* Effect.result(embedded({ dataDir: "memory", loadDataDir: saved.value }))
      if (loaded._tag === "Success") return layerSocket(loaded.success.socketDir, timeouts)
      yield* Effect.logWarning(`The embedded database's template ${file} did not load; making it again`, loaded.failure)
      yield* EmbeddedTemplate.remove(file)
    }
    const { db, socketDir } = yield* embedded({ dataDir: "memory" })
    const pool = yield* Layer.build(layerSocket(socketDir, timeouts))
    yield* Effect.provide(template.migrate, pool)
    yield* EmbeddedTemplate.save(file, yield* Effect.promise(() => db.dumpDataDir("none")))
    return Layer.succeedContext(pool)
  }))

/**
 * Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder; `memoryTemplate`
 * makes `memory` start from a migrated template.
 */
export const layerWith = (options: { readonly memoryTemplate?: MemoryTemplate | undefined } = {}) =>
  Layer.unwrap(
    Effect.map(ServerConfig, (settings) => {
      const timeouts = { connectTimeout: settings.dbConnectTimeout, statementTimeout: settings.dbStatementTimeout }
      if (settings.databaseUrl !== undefined) return layerUrl(settings.databaseUrl, { maxConnections: settings.dbPoolSize, ...timeouts })
      if (settings.dataDir === "memory" && options.memoryTemplate !== undefined) return layerMemory(options.memoryTemplate, timeouts)
      return layerEmbedded({ dataDir: settings.dataDir, ...timeouts })
    })
  )

/** Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder. */
export const layer = layerWith()
