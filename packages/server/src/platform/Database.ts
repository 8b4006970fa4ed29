/**
 * The database: Postgres through `@effect/sql-pg`, either at `DATABASE_URL` or the embedded PGlite engine served on
 * a private unix socket, so one driver and one SQL dialect serve both.
 *
 * PGlite has a single session: the socket server and the pool both keep exactly one connection (with more,
 * protocol messages of different connections interleave and queries get each other's rows).
 */
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Context, Duration, Effect, Layer, Redacted, String as Str } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Pg from "pg"
import { ServerConfig } from "./Config.js"

const naming = {
  transformResultNames: Str.snakeToCamel,
  transformQueryNames: Str.camelToSnake
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
 * How many connections the server's pool may open: 1 for the embedded database. The durable engine reads it to
 * choose between the in-process runner and a cluster runner (which keeps one connection for its shard locks).
 */
export class PoolSize extends Context.Tag("@orgplane/server/platform/Database")<PoolSize, number>() {}

/**
 * Our own pool, so that connections have timeouts: `@effect/sql-pg` exposes neither the statement nor the query
 * timeout. Fails the layer when the database cannot be reached at start-up, as `PgClient.layer` does.
 */
const layerPool = (
  config: Pg.PoolConfig & { readonly connectTimeout: Duration.DurationInput | undefined; readonly statementTimeout: Duration.DurationInput | undefined }
) => {
  const { connectTimeout, statementTimeout, ...rest } = config
  const statementMillis = Duration.toMillis(statementTimeout ?? Duration.seconds(10))
  return PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.suspend(() => {
        const pool = new Pg.Pool({
          ...rest,
          Client,
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
    connectTimeout: options.connectTimeout,
    statementTimeout: options.statementTimeout
  })

export interface EmbeddedOptions extends Timeouts {
  /** A folder to persist to, or `"memory"`. */
  readonly dataDir: string
  /** Start from a dumped data folder (a template) instead of running initdb: much faster, for tests. */
  readonly loadDataDir?: Blob | File | undefined
}

/** Opens PGlite and serves it on a private unix socket for the duration of the scope. */
export const embedded = (options: EmbeddedOptions) =>
  Effect.gen(function*() {
    const persistent = options.dataDir !== "memory"
    if (persistent) yield* Effect.promise(() => Fs.mkdir(options.dataDir, { recursive: true }))
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

/** The embedded database as a PgClient (one connection; see the module comment). */
export const layerEmbedded = (options: EmbeddedOptions) =>
  Layer.unwrapScoped(
    Effect.map(embedded(options), ({ socketDir }) =>
      layerPool({
        host: socketDir,
        port: 5432,
        database: "postgres",
        user: "postgres",
        max: 1,
        // Keep the single connection: reconnecting costs more than the idle socket.
        idleTimeoutMillis: Duration.toMillis(Duration.hours(1)),
        connectTimeout: options.connectTimeout,
        statementTimeout: options.statementTimeout
      }))
  )

/** Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder. */
export const layer = Layer.unwrapEffect(
  Effect.map(ServerConfig, (settings) => {
    const timeouts = { connectTimeout: settings.dbConnectTimeout, statementTimeout: settings.dbStatementTimeout }
    return settings.databaseUrl === undefined
      ? layerEmbedded({ dataDir: settings.dataDir, ...timeouts })
      : layerUrl(settings.databaseUrl, { maxConnections: settings.dbPoolSize, ...timeouts })
  })
)
