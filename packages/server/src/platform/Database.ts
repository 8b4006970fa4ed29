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
 * `@effect/sql-pg` is its own Postgres client: it prepares, names statements uniquely and retires a connection whose
 * interrupted query did not end cleanly. It has no client-side query timeout and no bound on waiting for a pooled
 * connection: the SqlClient is made here on the driver's pinned connections with both (`layerPool`), so a statement
 * to a database that answers nothing fails after the statement timeout and a second, and closes its connection.
 * What a broken connection prepared is not deallocated (the driver has no connect hook to run `DEALLOCATE ALL`).
 * A request's waits in a row share one bound as well (DatabaseWait.ts, `patience`): a wait for a connection and a
 * statement after it cannot add up to the two timeouts, and a request that met an unanswering database does not
 * wait again to clean up.
 *
 * The pool grows burst after burst up to `maxConnections` (test/Database.test.ts: three statements waiting on a lock,
 * then four more, seven connections); the embedded database's stays one connection.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fiber from "effect/Fiber"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { ConnectionError, isSqlError, SqlError, UnknownError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Str from "effect/String"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { ServerConfig } from "./Config.js"
import * as DataFolderLock from "./DataFolderLock.js"
import * as DatabaseWait from "./DatabaseWait.js"
import * as EmbeddedTemplate from "./EmbeddedTemplate.js"
import { DatabaseObserver } from "./Metrics.js"
import * as SnapshotChannel from "./SnapshotChannel.js"

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
  readonly connectTimeout?: Duration.Input | undefined
  /** Longest a statement may run on the server (default 10 seconds); the client gives up one second later. */
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
 * How much longer than the statement timeout the client waits for an answer. The server's own timeout answers
 * first when it can; this catches a server (or a network) that answers nothing at all.
 */
const queryTimeoutMargin = Duration.seconds(1)

/**
 * The longest a request waits on its database without an answer (DatabaseWait.ts): the longer of a statement's
 * answer timeout (the statement timeout and the margin) and the connect timeout and the margin, so that every wait
 * has its own whole timeout when it is the request's first, and a wait after others gets what is left.
 */
export const patience = (statementTimeout: Duration.Duration, connectTimeout: Duration.Duration): Duration.Duration =>
  Duration.sum(Duration.max(statementTimeout, connectTimeout), queryTimeoutMargin)

/**
 * `effect` in a fiber of its own, so that interrupting it returns at once and the fiber's interruption finishes
 * behind. An interrupted statement drains its connection, which on a database that answers nothing takes the
 * driver's own cancel deadline.
 */
export const disconnect = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.forkDetach(restore(effect)), (fiber) =>
      restore(Fiber.join(fiber)).pipe(Effect.onInterrupt(() => Effect.asVoid(Effect.forkDetach(Fiber.interrupt(fiber)))))))

/** A connection failure in `pg`'s words for it: the words operators' log searches already match. */
const connectionFailure = (message: string, operation: string) =>
  new SqlError({ reason: new ConnectionError({ cause: new Error(message), message, operation }) })

/** What a failure to connect is read for: a driver's error, a Node system error, Postgres' fields. */
type Link = { readonly message?: unknown; readonly code?: unknown; readonly cause?: unknown }

/** The innermost error of `error`'s causes: the words of Postgres or of the socket, under the driver's headline. */
const innermost = (error: unknown): Link | undefined => {
  let found: Link | undefined
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 8; depth++) {
    const link: Link = current
    if (typeof link.message === "string" && link.message !== "") found = link
    current = isSqlError(current) ? current.reason : link.cause
  }
  return found
}

/** What an operator does about a failure to connect, by its code: Postgres' SQLSTATE or Node's. */
const connectHints: Readonly<Record<string, string>> = {
  "28000": "create the role, or name another in DATABASE_URL",
  "28P01": "check the password in DATABASE_URL",
  "3D000": "create the database (createdb), or name another in DATABASE_URL",
  ECONNREFUSED: "nothing listens there: is Postgres running, and are DATABASE_URL's host and port right?",
  ENOTFOUND: "no such host: check DATABASE_URL's host",
  EAI_AGAIN: "the host's name did not resolve: check DATABASE_URL's host and the DNS",
  ETIMEDOUT: "nothing answered: check DATABASE_URL's host and port, and the firewall"
}

/**
 * Why the database could not be connected to, in one line (`Could not connect to the database: role "nobody" does
 * not exist (create the role, …)`), when `error` is, or was caused by, a failure to connect; undefined otherwise.
 * The driver's own error says only `PgConnection: Failed to connect`, the reason two causes down: the embedding
 * functions (Server.ts) and `orgplane serve` say this line instead.
 */
export const connectFailure = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 8; depth++) {
    if (isSqlError(current) && current.reason.operation === "connect") {
      const reason = innermost(current)
      const words = typeof reason?.message === "string" ? reason.message.replace(/\s+/g, " ").trim() : current.message
      const hint = typeof reason?.code === "string" ? connectHints[reason.code] : undefined
      return `Could not connect to the database: ${words}${hint === undefined ? "" : ` (${hint})`}`
    }
    const link: Link = current
    current = link.cause
  }
  return undefined
}

/** The rows' transformation a statement is run with, as `SqlConnection.Connection` takes it. */
type Rows = Parameters<SqlConnection.Connection["execute"]>[2]

/**
 * A reserved connection with its statements bounded (see `answering`). One is made for each reservation; its methods
 * are shared by all of them, where an object of six closures was made for each.
 */
class Answering implements SqlConnection.Connection {
  constructor(
    readonly connection: SqlConnection.Connection,
    readonly millis: number,
    readonly patience: number,
    readonly observer: DatabaseObserver | undefined
  ) {}
  execute(sql: string, params: ReadonlyArray<unknown>, transformRows: Rows) {
    return bounded(this, this.connection.execute(sql, params, transformRows))
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return bounded(this, this.connection.executeRaw(sql, params))
  }
  // Streams pace themselves by their reader; none of the server's statements streams.
  executeStream(sql: string, params: ReadonlyArray<unknown>, transformRows: Rows) {
    return this.connection.executeStream(sql, params, transformRows)
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return bounded(this, this.connection.executeValues(sql, params))
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return bounded(this, this.connection.executeValuesUnprepared(sql, params))
  }
  executeUnprepared(sql: string, params: ReadonlyArray<unknown>, transformRows: Rows) {
    return bounded(this, this.connection.executeUnprepared(sql, params, transformRows))
  }
}

/**
 * `effect` given up on when it has not settled within `millis`: it is interrupted behind and `timedOut`'s error
 * answers in its place. `settled` hears how it ended: its exit, or `undefined` when it was given up on (not when the
 * caller interrupted it, whose interruption also finishes behind). It runs in a fiber of its own, started on this
 * stack (`startImmediately`): a statement is on the wire before the timer is set, with no turn of the scheduler in
 * between, and an effect settled there (a pooled connection free at once) sets no timer. One fiber and at most one
 * timer, where `Effect.timeoutOrElse` races two fibers and a sleep (a statement's bound: about 7% of `GET /v1/me`'s
 * CPU, 211 -> 197 µs; a reservation's: 5 KB of the 83 it allocated).
 */
const settledWithin = <A, E, R, E2>(
  effect: Effect.Effect<A, E, R>,
  millis: number,
  timedOut: () => E2,
  settled?: (exit: Exit.Exit<A, E> | undefined) => void
): Effect.Effect<A, E | E2, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.forkDetach(restore(effect), { startImmediately: true }), (fiber) => {
      const done = fiber.pollUnsafe()
      if (done !== undefined) {
        settled?.(done)
        return done
      }
      return restore(Effect.callback<A, E | E2>((resume) => {
        const timer = setTimeout(() => {
          remove()
          fiber.interruptUnsafe()
          settled?.(undefined)
          resume(Effect.fail(timedOut()))
        }, millis)
        const remove = fiber.addObserver((exit) => {
          clearTimeout(timer)
          settled?.(exit)
          resume(exit)
        })
        return Effect.sync(() => {
          clearTimeout(timer)
          remove()
          fiber.interruptUnsafe()
        })
      }))
    }))

const connectTimedOut = () => connectionFailure("timeout exceeded when trying to connect", "connect")

const queryTimedOut = () => connectionFailure("Query read timeout", "query")

/** A statement of `on`, bounded (see `answering`): by its connection's answer timeout and the request's budget. */
const bounded = <A>(on: Answering, statement: Effect.Effect<A, SqlError>): Effect.Effect<A, SqlError> =>
  Effect.withFiber((current) => {
    const { millis, observer, patience } = on
    const wait = current.getRef(DatabaseWait.CurrentWait)
    const allowed = Math.max(0, DatabaseWait.allowed(wait, millis, patience))
    const startedAt = performance.now()
    return settledWithin(statement, allowed, queryTimedOut, (exit) => {
      const answered = exit?._tag === "Success"
      DatabaseWait.ended(wait, startedAt, answered, patience)
      if (exit !== undefined) observer?.statement((performance.now() - startedAt) / 1000, answered)
    })
  })

/**
 * `connection`, its statements given up on (failing as a lost connection, so a 503) when the database answers
 * nothing within `within`, or sooner when the request's bound (DatabaseWait.ts, `patience`) runs out first: a
 * request's bound already spent gives its statement no time at all (it is sent and given up on at once, the way a
 * timed-out one is). The statement runs in a fiber of its own, interrupted behind (its interruption drains
 * the connection, which a database that answers nothing holds up to the driver's cancel deadline); its connection
 * is pinned to the statement's (or the transaction's) scope, whose end with the statement still on the wire closes
 * the connection (the driver retires a pinned connection released with work outstanding), so no late answer
 * reaches the next user.
 */
const answering = (
  connection: SqlConnection.Connection,
  within: Duration.Duration,
  patience: number,
  observer: DatabaseObserver | undefined
): SqlConnection.Connection => new Answering(connection, Duration.toMillis(within), patience, observer)

/**
 * A connection's reservation as the metrics see it: waiting while it is made, then in use until its scope (the
 * statement's or the transaction's) closes. The reservation itself, its timeout included, runs as it would unobserved.
 */
const observed = <A, E, R>(reserve: Effect.Effect<A, E, R>, observer: DatabaseObserver, startedAt: number) =>
  // Counted and uncounted without an interruption in between; the reservation itself stays interruptible.
  Effect.uninterruptibleMask((restore) => {
    observer.waiting(1)
    return Effect.onExit(restore(reserve), (exit) => {
      observer.waiting(-1)
      if (exit._tag !== "Success") return Effect.void
      observer.inUse(1, (performance.now() - startedAt) / 1000)
      return Effect.addFinalizer(() => Effect.sync(() => observer.inUse(-1)))
    })
  })

/** COMMIT, which Postgres answers with `ROLLBACK` when the transaction had failed (as `@effect/sql-pg`'s own). */
const commit = (connection: SqlConnection.Connection) =>
  Effect.flatMap(connection.executeRaw("COMMIT", []), (result) =>
    typeof result === "object" && result !== null && Reflect.get(result, "command") === "ROLLBACK"
      ? Effect.fail(
        new SqlError({
          reason: new UnknownError({
            cause: new Error("COMMIT rolled back an aborted transaction"),
            message: "PgClient: COMMIT rolled back an aborted transaction",
            operation: "commit"
          })
        })
      )
      : Effect.void)

/**
 * The pool, with the timeouts: the statement timeout is the session's `statement_timeout`, sent as each connection
 * starts; a statement whose answer does not come within it and a second fails as a lost connection (`pg`'s
 * `query_timeout`), and so does a wait for a connection, new or pooled, longer than the connect timeout (`pg`'s
 * `connectionTimeoutMillis`). Each statement pins its connection (`reserve`) so that one given up on closes it.
 * `@effect/sql-pg`'s client is the driver; the SqlClient is made here, on its pinned connections, as `PgClient.make`
 * makes its own. Fails the layer when the database cannot be reached at start-up (the driver's pool connects lazily).
 */
const layerPool = (
  target: Target,
  options: Timeouts & {
    readonly maxConnections: number
    readonly idleTimeout?: Duration.Input | undefined
  }
) => {
  const statementTimeout = Duration.fromInputUnsafe(options.statementTimeout ?? Duration.seconds(10))
  const connectTimeout = Duration.fromInputUnsafe(options.connectTimeout ?? Duration.seconds(5))
  const answerTimeout = Duration.sum(statementTimeout, queryTimeoutMargin)
  return Layer.effectContext(Effect.gen(function*() {
    const driver = yield* PgClient.make({
      ...target,
      maxConnections: options.maxConnections,
      ...(options.idleTimeout === undefined ? {} : { idleTimeout: options.idleTimeout }),
      applicationName: "orgplane",
      connectTimeout,
      startupParameters: { statement_timeout: String(Duration.toMillis(statementTimeout)) },
      keepAlive: Duration.seconds(10),
      preparedStatementCacheSize: maxPreparedStatements,
      ...naming
    })
    // Metrics, when they are on (platform/Metrics.ts): statements' durations, connections waited for and held.
    const observer = yield* DatabaseObserver
    observer?.poolSize(options.maxConnections)
    const connectMillis = Duration.toMillis(connectTimeout)
    const patienceMillis = Duration.toMillis(patience(statementTimeout, connectTimeout))
    const acquirer = Effect.withFiber((current) => {
      const wait = current.getRef(DatabaseWait.CurrentWait)
      const allowed = DatabaseWait.allowed(wait, connectMillis, patienceMillis)
      if (allowed <= 0) {
        DatabaseWait.ended(wait, performance.now(), false, patienceMillis)
        return Effect.fail(connectTimedOut())
      }
      const startedAt = performance.now()
      const reserved = settledWithin(driver.reserve, allowed, connectTimedOut).pipe(
        Effect.onExit(() => Effect.sync(() => DatabaseWait.ended(wait, startedAt, false, patienceMillis))),
        Effect.map((connection) => answering(connection, answerTimeout, patienceMillis, observer))
      )
      return observer === undefined ? reserved : observed(reserved, observer, startedAt)
    })
    const sql = yield* SqlClient.make({
      acquirer,
      compiler: PgClient.makeCompiler(naming.transformQueryNames),
      transformRows: Statement.defaultTransforms(naming.transformResultNames).array,
      driver: "pg",
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", "database" in target ? target.database : "postgres"]
      ],
      // As `@effect/sql-pg`'s: Postgres prepares transaction control like any other statement.
      prepareTransactionControls: true,
      commit,
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`
    })
    yield* sql`SELECT 1`
    return Context.make(SqlClient.SqlClient, sql).pipe(Context.add(PoolSize, options.maxConnections))
  })).pipe(Layer.provide(Reactivity.layer))
}

/** Postgres at a URL. */
export const layerUrl = (url: Redacted.Redacted, options: Timeouts & { readonly maxConnections?: number | undefined } = {}) =>
  layerPool({ url }, {
    maxConnections: options.maxConnections ?? 10,
    connectTimeout: options.connectTimeout,
    statementTimeout: options.statementTimeout
  })

export interface EmbeddedOptions<E = never> extends Timeouts {
  /** A folder to persist to, or `"memory"`. */
  readonly dataDir: string
  /** Start from a dumped data folder (a template) instead of running initdb: much faster, for tests. */
  readonly loadDataDir?: Blob | File | undefined
  /** Arguments for initdb beyond PGlite's, when it runs (no folder yet, no `loadDataDir`). */
  readonly initdb?: ReadonlyArray<string> | undefined
  /**
   * How a new data folder starts (one without a database yet, found so once the folder is held): loaded from the dump
   * this answers (a template) instead of running initdb. `damaged` is run when that dump does not load; the folder is
   * then emptied of what the load wrote and made by initdb.
   */
  readonly newFolder?: NewFolder<E> | undefined
}

export interface NewFolder<E> {
  readonly dump: Effect.Effect<Blob, E>
  readonly damaged: Effect.Effect<void>
}

/**
 * Postgres's settings for a database in memory, beside PGlite's own (`PGlite.defaultStartParams`): nothing of it
 * outlives the process, so nothing is waited for to be durable (no commit waits for its WAL, no page is written
 * whole after a checkpoint), and its shared buffers are sized for a database that fits in memory (32 MB rather than
 * 128, the larger share of starting it being their allocation). A data folder keeps Postgres's.
 */
const memorySettings: ReadonlyArray<string> = ["-c", "shared_buffers=32MB", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]

/**
 * What initdb makes smaller for a database in memory: WAL segments of 1 MB rather than 16 (a memory database's
 * template carries one).
 */
export const memoryInitdb: ReadonlyArray<string> = ["--wal-segsize=1"]

export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{
  readonly message: string
  readonly cause: unknown
}> {}

/**
 * Opens PGlite and serves it on a private unix socket for the duration of the scope. A data folder is held by this
 * process meanwhile (platform/DataFolderLock.ts): one that another process holds fails with `DataFolderInUse`
 * before PGlite reads or writes it.
 */
export const embedded = Effect.fn("Database.embedded")(function*<E = never>(options: EmbeddedOptions<E>) {
  const persistent = options.dataDir !== "memory"
  if (persistent) {
    yield* Effect.promise(() => Fs.mkdir(options.dataDir, { recursive: true }))
    yield* DataFolderLock.hold(Path.resolve(options.dataDir))
  }
  // A new folder: loaded from its template when there is one, else PGlite runs initdb (and the migrations then
  // create every table), all on this thread and silent.
  const created = persistent && (yield* Effect.promise(() => Fs.access(Path.join(options.dataDir, "PG_VERSION")).then(() => true, () => false)))
  const newFolder = persistent && !created && options.loadDataDir === undefined ? options.newFolder : undefined
  if (persistent && !created && options.loadDataDir === undefined && newFolder === undefined) yield* logCreating(options.dataDir)
  const open = (loadDataDir: Blob | undefined) =>
    Effect.tryPromise({
      try: () =>
        PGlite.create({
          ...(persistent ? { dataDir: Path.resolve(options.dataDir) } : { startParams: [...PGlite.defaultStartParams, ...memorySettings] }),
          ...(loadDataDir ? { loadDataDir } : {}),
          ...(options.initdb ? { initDbStartParams: [...options.initdb] } : {})
        }),
      catch: (cause) => new EmbeddedDatabaseError({ message: `Could not open the embedded database in ${options.dataDir}`, cause })
    })
  const db = yield* Effect.acquireRelease(
    newFolder === undefined ? open(options.loadDataDir) : openNewFolder(options.dataDir, newFolder, open),
    (db) => Effect.ignore(Effect.promise(() => db.close()))
  )
  const socketDir = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-pg-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  const socket = yield* Effect.acquireRelease(
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
  // `orgplane db dump` reads a held folder through its holder (platform/SnapshotChannel.ts).
  if (persistent) yield* SnapshotChannel.serve(yield* Effect.promise(() => Fs.realpath(options.dataDir)), () => db.dumpDataDir("none"))
  /** The connections the socket holds now: zero once the last client's is closed, when another may connect. */
  const connections = () => socket.getStats().activeConnections
  return { db, socketDir, connections }
})

const logCreating = (dataDir: string) =>
  Effect.logInfo(`Creating the embedded database in ${Path.resolve(dataDir)} (first start: this takes a while; later starts take a second or two)`)

/**
 * A new data folder loaded from its template; one that does not load (a damaged file) is forgotten, what the load
 * wrote is removed (the folder's own files, its lock and key file, stay), and initdb makes the database instead.
 */
const openNewFolder = <E>(dataDir: string, newFolder: NewFolder<E>, open: (loadDataDir: Blob | undefined) => Effect.Effect<PGlite, EmbeddedDatabaseError>) =>
  Effect.gen(function*() {
    const dump = yield* newFolder.dump
    const before = new Set(yield* Effect.promise(() => Fs.readdir(dataDir)))
    const loaded = yield* Effect.result(open(dump))
    if (loaded._tag === "Success") return loaded.success
    yield* Effect.logWarning(`The embedded database's folder template did not load; making ${Path.resolve(dataDir)} with initdb`, loaded.failure)
    yield* newFolder.damaged
    for (const name of yield* Effect.promise(() => Fs.readdir(dataDir))) {
      if (!before.has(name)) yield* Effect.promise(() => Fs.rm(Path.join(dataDir, name), { recursive: true, force: true }))
    }
    yield* logCreating(dataDir)
    return yield* open(undefined)
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
export const layerEmbedded = <E = never>(options: EmbeddedOptions<E>) =>
  Layer.unwrap(Effect.map(embedded(options), ({ socketDir }) => layerSocket(socketDir, options)))

/**
 * How the embedded database starts migrated without migrating: `--data memory` at every start, a new data folder at
 * its first (platform/EmbeddedTemplate.ts).
 */
export interface Template {
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
export const layerMemory = (template: Template, timeouts: Timeouts = {}) =>
  Layer.unwrap(Effect.gen(function*() {
    const file = yield* EmbeddedTemplate.templateFile(yield* EmbeddedTemplate.cacheDir, template.migrationsUrl)
    const saved = yield* EmbeddedTemplate.read(file)
    if (Option.isSome(saved)) {
      const loaded = yield* Effect.result(embedded({ dataDir: "memory", loadDataDir: saved.value }))
      if (loaded._tag === "Success") return layerSocket(loaded.success.socketDir, timeouts)
      yield* Effect.logWarning(`The embedded database's template ${file} did not load; making it again`, loaded.failure)
      yield* EmbeddedTemplate.remove(file)
    }
    const { db, socketDir } = yield* embedded({ dataDir: "memory", initdb: memoryInitdb })
    const pool = yield* Layer.build(layerSocket(socketDir, timeouts))
    yield* Effect.provide(template.migrate, pool)
    yield* EmbeddedTemplate.save(file, yield* Effect.promise(() => EmbeddedTemplate.dumpOf(db)))
    return Layer.succeedContext(pool)
  }))

/**
 * The embedded database in a data folder. A new folder is loaded from the saved folder template of this migration
 * set, so its first start takes about as long as a later one; without a template, the first new folder's start
 * makes one (initdb and the migrations in memory, dumped) and loads it.
 */
export const layerFolder = (template: Template, dataDir: string, timeouts: Timeouts = {}) =>
  Layer.unwrap(Effect.sync(() => {
    // Found only for a new folder: a reopened one reads no template.
    const templateFile = Effect.gen(function*() {
      return yield* EmbeddedTemplate.templateFile(yield* EmbeddedTemplate.cacheDir, template.migrationsUrl, "folder")
    })
    const dump = Effect.gen(function*() {
      const file = yield* templateFile
      const saved = yield* EmbeddedTemplate.read(file)
      if (Option.isSome(saved)) {
        yield* Effect.logInfo(`Creating the embedded database in ${Path.resolve(dataDir)} from this version's template (first start)`)
        return saved.value
      }
      yield* logCreating(dataDir)
      return yield* Effect.scoped(Effect.gen(function*() {
        const { db, socketDir } = yield* embedded({ dataDir: "memory" })
        yield* Effect.provide(template.migrate, yield* Layer.build(layerSocket(socketDir, timeouts)))
        const made = yield* Effect.promise(() => EmbeddedTemplate.folderDumpOf(db))
        yield* EmbeddedTemplate.save(file, made)
        return made
      }))
    })
    return layerEmbedded({
      dataDir,
      ...timeouts,
      // A template that cannot be made (a migration fails) fails the start as the migrations would.
      newFolder: { dump, damaged: Effect.ignore(Effect.flatMap(templateFile, EmbeddedTemplate.remove)) }
    })
  }))

/**
 * Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder; `template` makes
 * `memory`, and a new data folder, start from a migrated template.
 */
export const layerWith = (options: { readonly template?: Template | undefined } = {}) =>
  Layer.unwrap(
    Effect.map(ServerConfig, (settings) => {
      const timeouts = { connectTimeout: settings.dbConnectTimeout, statementTimeout: settings.dbStatementTimeout }
      if (settings.databaseUrl !== undefined) return layerUrl(settings.databaseUrl, { maxConnections: settings.dbPoolSize, ...timeouts })
      if (options.template === undefined) return layerEmbedded({ dataDir: settings.dataDir, ...timeouts })
      if (settings.dataDir === "memory") return layerMemory(options.template, timeouts)
      return layerFolder(options.template, settings.dataDir, timeouts)
    })
  )

/** Postgres at `DATABASE_URL` when set, else the embedded database in the configured data folder. */
export const layer = layerWith()
