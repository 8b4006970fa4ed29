/**
 * The database: Postgres through `@effect/sql-pg`, either at `DATABASE_URL` or the embedded PGlite engine served on
 * a private unix socket, so one driver and one SQL dialect serve both.
 *
 * PGlite has a single session: the socket server and the pool both keep exactly one connection (with more,
 * protocol messages of different connections interleave and queries get each other's rows).
 *
 * Both prepare their statements (PreparingClient): PGlite would otherwise parse and plan the authentication's joins
 * on every request. Its session outlives a connection, so the embedded pool's new connection first deallocates what
 * a broken one left.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Context, Duration, Effect, Layer, Option, Redacted, String as Str } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Pg from "pg"
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
  /** Longest wait for a connection, new or from the pool (default 5 seconds). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Longest a statement may run on the server (default 10 seconds); the client gives up one second later. */
  readonly statementTimeout?: Duration.DurationInput | undefined
}

/**
 * How much longer than the statement timeout the client waits for an answer. The server's own timeout answers
 * first when it can; this catches a server (or a network) that answers nothing at all.
 */
const queryTimeoutMargin = Duration.seconds(1)

/**
 * Statements a connection prepares at most. Our statements are a bounded set of templates; past this many (a
 * statement built with a varying number of parameters), statements run unnamed.
 */
const maxPreparedStatements = 1000

/**
 * A `pg` client that closes its connection when a query gets no answer in time. `pg` only reports that timeout:
 * the query stays in flight, so the connection would go back to the pool busy, and a late answer (a BEGIN whose
 * ROLLBACK timed out) could leave it inside a transaction for the next user. A new connection is cheaper than that.
 */
class Client extends Pg.Client {
  override query(...args: Array<any>): any {
    const drop = (error: unknown) => {
      if ((error as Error | undefined)?.message === "Query read timeout") {
        ;(this as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
      }
    }
    const callback = args.at(-1)
    if (typeof callback === "function") {
      args[args.length - 1] = (error: unknown, result: unknown) => {
        drop(error)
        callback(error, result)
      }
      return (super.query as (...args: Array<any>) => any)(...args)
    }
    const result = (super.query as (...args: Array<any>) => any)(...args)
    return result instanceof Promise
      ? result.catch((error: unknown) => {
        drop(error)
        throw error
      })
      : result
  }
}

/**
 * A client that prepares the statements it runs: each distinct statement text with parameters is parsed and planned
 * once per session (a named statement), then only bound and executed.
 */
class PreparingClient extends Client {
  /**
   * Names are unique in the process (a random prefix and a counter), not only in the connection: a URL may lead to a
   * database whose session outlives a connection and is shared (PGlite behind a socket, as the test kit's proxy
   * serves it), where a new connection would find another's statements under the same names.
   */
  private static readonly prefix = `orgplane_${Crypto.randomBytes(4).toString("hex")}_`
  private static named = 0
  /** The names of the statements this connection has prepared, by their text. */
  private readonly prepared = new Map<string, string>()

  override query(...args: Array<any>): any {
    const [text, values] = args
    if (typeof text === "string" && Array.isArray(values) && values.length > 0) {
      let name = this.prepared.get(text)
      if (name === undefined && this.prepared.size < maxPreparedStatements) {
        this.prepared.set(text, name = `${PreparingClient.prefix}${++PreparingClient.named}`)
      }
      if (name !== undefined) args.splice(0, 2, { name, text, values })
    }
    return super.query(...args)
  }
}

/**
 * A preparing client that is its session's only user (the embedded database's socket admits one connection): on
 * connecting, it deallocates what an earlier connection prepared, since PGlite's session outlives its connections.
 */
class SessionPreparingClient extends PreparingClient {
  override connect(...args: Array<any>): any {
    const callback = args[0] as ((error: Error | null, client?: Pg.Client) => void) | undefined
    const connected = super.connect().then(() => super.query("DEALLOCATE ALL")).then(() => this)
    if (callback === undefined) return connected
    connected.then(() => callback(null, this), (error: Error) => callback(error))
  }
}

/**
 * How many connections the server's pool may open: 1 for the embedded database. The durable engine reads it to
 * choose between the in-process runner and a cluster runner (which keeps one connection for its shard locks).
 */
export class PoolSize extends Context.Tag("@orgplane/server/platform/Database")<PoolSize, number>() {}

/**
 * Our own pool, so that connections have timeouts: `@effect/sql-pg` exposes neither the statement nor the query
 * timeout. Fails the layer when the database cannot be reached at start-up, as `PgClient.layer` does.
 */
const layerPool = (
  config: Pg.PoolConfig & {
    /**
     * `session`: prepare, and the pool's connection is the session's only user (the embedded database's socket admits
     * one), so a new connection first drops what an earlier one prepared.
     */
    readonly prepare: boolean | "session"
    readonly connectTimeout: Duration.DurationInput | undefined
    readonly statementTimeout: Duration.DurationInput | undefined
  }
) => {
  const { connectTimeout, prepare, statementTimeout, ...rest } = config
  const statementMillis = Duration.toMillis(statementTimeout ?? Duration.seconds(10))
  return PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.suspend(() => {
        const pool = new Pg.Pool({
          ...rest,
          Client: prepare === "session" ? SessionPreparingClient : prepare ? PreparingClient : Client,
          application_name: "orgplane",
          connectionTimeoutMillis: Duration.toMillis(connectTimeout ?? Duration.seconds(5)),
          statement_timeout: statementMillis,
          query_timeout: statementMillis + Duration.toMillis(queryTimeoutMargin),
          keepAlive: true,
          keepAliveInitialDelayMillis: 10_000
        })
        // Idle connections that break report here; without a listener Node would crash the process.
        pool.on("error", () => {})
        return Effect.tryPromise({
          try: () => pool.query("SELECT 1"),
          catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
        }).pipe(
          Effect.as(pool),
          Effect.tapError(() => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000)))
        )
      }),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ),
    applicationName: "orgplane",
    ...naming
  }).pipe(Layer.merge(Layer.succeed(PoolSize, rest.max ?? 10)))
}

/** Postgres at a URL. */
export const layerUrl = (url: Redacted.Redacted, options: Timeouts & { readonly maxConnections?: number | undefined } = {}) =>
  layerPool({
    connectionString: Redacted.value(url),
    max: options.maxConnections ?? 10,
    prepare: true,
    connectTimeout: options.connectTimeout,
    statementTimeout: options.statementTimeout
  })

export interface EmbeddedOptions extends Timeouts {
  /** A folder to persist to, or `"memory"`. */
  readonly dataDir: string
  /** Start from a dumped data folder (a template) instead of running initdb: much faster, for tests. */
  readonly loadDataDir?: Blob | File | undefined
}

/**
 * Opens PGlite and serves it on a private unix socket for the duration of the scope. A data folder is held by this
 * process meanwhile (platform/DataFolderLock.ts): one that another process holds fails with `DataFolderInUse`
 * before PGlite reads or writes it.
 */
export const embedded = (options: EmbeddedOptions) =>
  Effect.gen(function*() {
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
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const socketDir = yield* Effect.acquireRelease(
      Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-pg-"))),
      (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
    )
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const server = new PGLiteSocketServer({ db, path: Path.join(socketDir, ".s.PGSQL.5432"), maxConnections: 1 })
          await server.start()
          return server
        },
        catch: (cause) => new EmbeddedDatabaseError({ message: "Could not start the embedded database socket", cause })
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    return { db, socketDir }
  })

export class EmbeddedDatabaseError extends Error {
  readonly _tag = "EmbeddedDatabaseError"
  constructor(options: { message: string; cause: unknown }) {
    super(options.message, { cause: options.cause })
  }
}

/** The pool on an embedded database's socket: one connection (see the module comment). */
export const layerSocket = (socketDir: string, timeouts: Timeouts = {}) =>
  layerPool({
    host: socketDir,
    port: 5432,
    database: "postgres",
    user: "postgres",
    max: 1,
    prepare: "session",
    // Keep the single connection: reconnecting costs more than the idle socket.
    idleTimeoutMillis: Duration.toMillis(Duration.hours(1)),
    connectTimeout: timeouts.connectTimeout,
    statementTimeout: timeouts.statementTimeout
  })

/** The embedded database as a PgClient (one connection; see the module comment). */
export const layerEmbedded = (options: EmbeddedOptions) =>
  Layer.unwrapScoped(Effect.map(embedded(options), ({ socketDir }) => layerSocket(socketDir, options)))

/** How `--data memory` gets a migrated database without migrating at every start (platform/EmbeddedTemplate.ts). */
export interface MemoryTemplate {
  /** The `import.meta.url` of the module listing the migrations: the template is keyed by their code. */
  readonly migrationsUrl: string
  /** Brings a fresh database to the current schema, to be dumped as the template. */
  readonly migrate: Effect.Effect<unknown, SqlError, SqlClient>
}

/**
 * A fresh in-memory embedded database, loaded from the saved template of this migration set; without one (or with
 * one that does not load), a new database is migrated here and dumped as the template before anything else
 * writes to it.
 */
export const layerMemory = (template: MemoryTemplate, timeouts: Timeouts = {}) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const file = yield* EmbeddedTemplate.templateFile(yield* EmbeddedTemplate.cacheDir, template.migrationsUrl)
    const saved = yield* EmbeddedTemplate.read(file)
    if (Option.isSome(saved)) {
      const loaded = yield* Effect.either(embedded({ dataDir: "memory", loadDataDir: saved.value }))
      if (loaded._tag === "Right") return layerSocket(loaded.right.socketDir, timeouts)
      yield* Effect.logWarning(`The embedded database's template ${file} did not load; making it again`, loaded.left)
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
  Layer.unwrapEffect(
    Effect.map(ServerConfig, (settings) => {
      const timeouts = { connectTimeout: settings.dbConnectTimeout, statementTimeout: settings.dbStatementTimeout }
      if (settings.databaseUrl !== undefined) return layerUrl(settings.databaseUrl, { maxConnections: settings.dbPoolSize, ...timeouts })
      if (settings.dataDir === "memory" && options.memoryTemplate !== undefined) return layerMemory(options.memoryTemplate, timeouts)
      return layerEmbedded({ dataDir: settings.dataDir, ...timeouts })
    })
  )

/** Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder. */
export const layer = layerWith()
