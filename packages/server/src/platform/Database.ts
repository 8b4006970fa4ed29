/**
 * The database: Postgres through `@effect/sql-pg`, either at `DATABASE_URL` or the embedded PGlite engine served on
 * a private unix socket, so one driver and one SQL dialect serve both.
 *
 * PGlite has a single session: the socket server and the pool both keep exactly one connection (with more,
 * protocol messages of different connections interleave and queries get each other's rows).
 */
import { PgClient } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Layer, Option, Redacted, String as Str } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { ServerConfig } from "./Config.js"

const naming = {
  transformResultNames: Str.snakeToCamel,
  transformQueryNames: Str.camelToSnake
}

/** Postgres at a URL. */
export const layerUrl = (url: Redacted.Redacted, options: { readonly maxConnections?: number } = {}) =>
  PgClient.layer({ url, maxConnections: options.maxConnections ?? 10, applicationName: "orgplane", ...naming })

export interface EmbeddedOptions {
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
      PgClient.layer({
        host: socketDir,
        port: 5432,
        database: "postgres",
        username: "postgres",
        maxConnections: 1,
        // Keep the single connection: reconnecting costs more than the idle socket.
        idleTimeout: "1 hour",
        applicationName: "orgplane",
        ...naming
      }))
  )

/** Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder. */
export const layer = Layer.unwrapEffect(
  Effect.map(ServerConfig, (settings) =>
    Option.match(settings.databaseUrl, {
      onSome: (url) => layerUrl(url),
      onNone: () => layerEmbedded({ dataDir: settings.dataDir })
    }))
)
