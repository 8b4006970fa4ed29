/**
 * The durable engine: a `WorkflowEngine` (`effect/workflow` on `effect/cluster`) whose messages, replies and
 * activity results live in the server's own database, so a workflow survives a crash and runs once per execution id.
 *
 * - Embedded database: one runner in this process (`SingleRunner`'s shape) with runner storage in memory. The SQL
 *   runner storage would reserve a connection of its own for advisory locks; the embedded pool has exactly one.
 * - `DATABASE_URL`: every server process is a runner of one cluster. Shards are taken with Postgres advisory locks
 *   (SQL runner storage), runners forward work to each other over a TCP socket at `ORGPLANE_CLUSTER_HOST:PORT`, and
 *   when one goes away its shards (and their unfinished workflows) move to the others.
 *
 * Cluster creates its own tables with `prefix`, by default `orgplane_cluster`, so a host app that runs its own
 * cluster on the same database keeps its tables apart: the message storage's `<prefix>_messages`, `<prefix>_replies`
 * and `<prefix>_migrations`, and with `DATABASE_URL` the runner storage's `<prefix>_runners`, `<prefix>_locks`
 * (created even with advisory locks) and `<prefix>_runner_migrations`.
 *
 * The SQL message storage hashes over-long message ids with a `Digest` (`NodeCrypto.layerDigest`); runners talk over
 * `RpcSerialization.layerSchemaBinary` (what `NodeClusterSocket.layer` uses), and the advisory lock keys are
 * namespaced by the prefix. 0.1.0's runners spoke MessagePack and cannot share a cluster with these: to upgrade a
 * cluster from 0.1.0, drain or finish its workflows and stop every 0.1.0 runner before starting new ones on the same
 * database.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import * as Cause from "effect/Cause"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import type * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as SocketRunner from "effect/cluster/SocketRunner"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import { SocketServer } from "effect/socket/SocketServer"
import { SqlClient } from "effect/sql/SqlClient"
import * as Stream from "effect/Stream"
import * as Activity from "effect/workflow/Activity"
import { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { refusal, ServerConfig } from "./Config.js"
import { PoolSize } from "./Database.js"
import { DurableHealth, type DurableEngineState } from "./DurableHealth.js"
import { StartGate } from "./DurableStartGate.js"

/** The documented environment variables of the cluster runner (read only with `DATABASE_URL`). */
export const environment = [
  ["ORGPLANE_CLUSTER_HOST", "127.0.0.1", "With DATABASE_URL: the address other server processes reach this one at for background work (a private network: the runner protocol has no authentication)."],
  ["ORGPLANE_CLUSTER_LISTEN_HOST", "ORGPLANE_CLUSTER_HOST", "Interface the runner listens on (for example 0.0.0.0 in a container whose ORGPLANE_CLUSTER_HOST is its service name)."],
  ["ORGPLANE_CLUSTER_PORT", "34431", "Port the runner listens on; 0 picks a free port (announced to the others as it is)."]
] as const

export interface ClusterSettings {
  /** What other runners connect to. */
  readonly host: string
  /** What this process binds to. */
  readonly listenHost: string
  /** 0 for a free port. */
  readonly port: number
}

export const defaultClusterPort = 34431

const portOrZero: Config.Config<number> = Config.mapEffect(
  Config.Int("ORGPLANE_CLUSTER_PORT").pipe(Config.withDefault(defaultClusterPort)),
  (port) =>
    port >= 0 && port <= 65535
      ? Effect.succeed(port)
      : Effect.fail(refusal("must be a port number (0 for a free one)"))
)

export const clusterConfig: Config.Config<ClusterSettings> = Config.all({
  host: Config.String("ORGPLANE_CLUSTER_HOST").pipe(Config.withDefault("127.0.0.1")),
  listenHost: Config.option(Config.String("ORGPLANE_CLUSTER_LISTEN_HOST")),
  port: portOrZero
}).pipe(Config.map(({ host, listenHost, port }) => ({ host, port, listenHost: Option.getOrElse(listenHost, () => host) })))

/**
 * The runner could not bind its port because something else holds it: most often another server process on the
 * same host with `DATABASE_URL`, whose runner took the same `ORGPLANE_CLUSTER_PORT`. Its message names that port
 * and that variable (the HTTP port is fine), and `serve` prints it as it is.
 */
export class RunnerPortInUse extends Data.TaggedError("RunnerPortInUse")<{
  readonly host: string
  readonly port: number
  readonly cause: unknown
}> {
  override get message() {
    return `port ${this.port} on ${this.host} is already in use: it is the durable engine's runner port (with DATABASE_URL every server process is a runner; another one on this host?); choose another with ORGPLANE_CLUSTER_PORT (0 takes any free one)`
  }
}

/** Whether `error`, or an error it was caused by, is a Node system error `EADDRINUSE`. */
const addressInUse = (error: unknown): boolean => {
  for (let current = error, depth = 0; Predicate.isObject(current) && depth < 5; depth++) {
    if (Predicate.hasProperty(current, "code") && current.code === "EADDRINUSE") return true
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return false
}

/** Sharding settings; tests shorten the lock and poll intervals so a lost runner's work moves within seconds. */
export type Tuning = Partial<ShardingConfig.ShardingConfig["Service"]>

export interface Options {
  /** On top of `defaults`. Every runner of a cluster must agree on `shardsPerGroup`. */
  readonly sharding?: Tuning | undefined
  /** Prefix of cluster's tables. */
  readonly prefix?: string | undefined
  /** With DATABASE_URL: the runner's address, over the environment's (tests pass `{ port: 0 }`). */
  readonly cluster?: Partial<ClusterSettings> | undefined
  /**
   * With DATABASE_URL: `"cluster"` (the default) makes this process a runner of the database's cluster, listening on
   * ORGPLANE_CLUSTER_PORT so the others can reach it; `"single"` runs the engine in this process alone and opens no
   * port, for a host that runs one process on its database. A single runner holds an advisory lock for its life:
   * a second process starting as one on the same database (and prefix) is refused. Never mix it with cluster
   * runners on one database: nothing would stop both from running the same workflow.
   */
  readonly runner?: "cluster" | "single" | undefined
}

/**
 * A second single runner on a database that has one: its message says what to do. Fails the start, as
 * `RunnerPortInUse` does.
 */
export class SingleRunnerTaken extends Data.TaggedError("SingleRunnerTaken")<{ readonly prefix: string }> {
  override get message() {
    return `another orgplane process already runs the durable engine alone on this database (durable: { runner: "single" }, tables ${this.prefix}_*): only one process may. Run one process per database with runner "single", or every process as a cluster runner (the default; each on its own ORGPLANE_CLUSTER_PORT)`
  }
}

/** The advisory lock a single runner holds: a class of our own ("orgp"), and the prefix's FNV-1a hash. */
const singleRunnerLock = (prefix: string): readonly [number, number] => {
  let hash = 0x811c9dc5
  for (const byte of Buffer.from(prefix, "utf8")) hash = Math.imul(hash ^ byte, 0x01000193)
  return [0x6f726770, hash | 0]
}

/**
 * Takes the single runner's lock on a connection reserved for the scope (a session lock ends with its session),
 * or dies with `SingleRunnerTaken` when another process holds it.
 */
const holdSingleRunnerLock = (prefix: string) =>
  Effect.gen(function*() {
    const connection = yield* (yield* SqlClient).reserve
    const [classId, key] = singleRunnerLock(prefix)
    const rows = yield* connection.execute("SELECT pg_try_advisory_lock($1, $2) AS locked", [classId, key], undefined)
    const locked: unknown = Reflect.get(rows[0] ?? {}, "locked")
    if (locked !== true) return yield* Effect.die(new SingleRunnerTaken({ prefix }))
  }).pipe(Effect.orDie)

export const defaultPrefix = "orgplane_cluster"

/**
 * Our defaults over cluster's: an entity that is shut down gets 5 seconds to stop rather than 15, so a server stops
 * promptly, and the runners are read every 10 seconds rather than 3. Everything else is cluster's own
 * (effect/cluster's ShardingConfig.ts, read by Sharding.ts):
 *
 * - The storage poll (`entityMessagePollInterval`) stays at cluster's 10 seconds: nothing of ours waits on it. A
 *   message this process sends is saved and then handed over at once: to an entity of its own shards through
 *   `notifyLocal`, which opens the storage read latch, and to another runner over the runner socket, whose
 *   `notifyLocal` does the same there; a workflow's run, its activities and its resumption after one (the engine's
 *   `resume` ends in `pollStorage`, on the workflow's own runner), a `DurableDeferred` completed, and a reply all go
 *   that way. Shards taken (at start-up, after a restart, from a runner that left) are read at once too, so work
 *   left in storage by a stopped process is redelivered without the poll, and so is a message of an entity that
 *   registers late. What the poll alone delivers: messages with a delivery time (`DeliverAt`: each `ClusterCron`
 *   run, and a `DurableClock.sleep` longer than its in-memory threshold, which orgplane does not use), which so run
 *   up to 10 seconds after their time (our crons are minutely at most: the workers' offline check); a message whose
 *   hand-over to another runner failed (that runner unreachable), up to 10 seconds late; and a shard whose lock
 *   another runner still held when its assignment moved, taken at the next try, up to 10 seconds later. At 2
 *   seconds the poll was about a third of an idle server's statements (29 a minute).
 * - Assignments are refreshed from the runner storage every 10 seconds rather than cluster's 3
 *   (`refreshAssignmentsInterval`): it is how soon the runners see one join or leave (a new runner idles, a departed
 *   one's shards wait, until the others' next refresh) and how soon a runner the others marked gone registers again.
 *   Timing only, never correctness: a shard runs only under its lock, whatever a runner's view of the assignments.
 *   A crashed runner's shards already wait for its heartbeat to age past 35 s; 7 more seconds at most on that, or
 *   after a graceful stop, is the price of 14 fewer statements a minute on every runner (a runner cannot know it is
 *   alone; a host with one process passes `runner: "single"`, which keeps no runner storage at all). The
 *   across-process tests in test/Durable.test.ts (a runner killed mid-workflow, two runners sharing 20 workflows)
 *   pass with it at 10 seconds.
 * - The shard lock (35 s expiry, refreshed every 10 s) keeps cluster's values: it bounds how long a lost runner's
 *   work waits before another runner takes it.
 */
export const defaults: Tuning = {
  entityTerminationTimeout: "5 seconds",
  refreshAssignmentsInterval: "10 seconds"
}

/**
 * The settings as given, never from the environment: cluster's own `ShardingConfig.layerFromEnv` would read
 * variables as generic as `HOST` and `PORT`.
 */
const shardingConfig = (tuning: Tuning | undefined, address: Option.Option<RunnerAddress.RunnerAddress>) =>
  ShardingConfig.layer({ ...defaults, ...tuning, runnerAddress: address, runnerListenAddress: Option.none() })

/** The SQL message storage under our prefix; it hashes message ids too long for its column with the digest. */
const messageStorage = (options: Options) =>
  SqlMessageStorage.layerWith({ prefix: options.prefix ?? defaultPrefix }).pipe(Layer.provide(NodeCrypto.layerDigest))

const engine = <E, R>(sharding: Layer.Layer<Sharding.Sharding | MessageStorage.MessageStorage, E, R>) =>
  ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(sharding))

/**
 * One runner in this process, owning every shard, with runner storage in memory: for the embedded database, whose
 * pool has the single connection the SQL runner storage would keep for itself. Messages still go to SQL, so
 * workflows survive a restart on the same data folder. Never run two of these on one database: nothing would stop
 * both from executing the same workflow.
 */
export const layerSingle = (
  options: Options = {}
): Layer.Layer<WorkflowEngine | Sharding.Sharding, never, SqlClient> =>
  engine(
    Sharding.layer.pipe(
      Layer.provideMerge(Runners.layerNoop),
      Layer.provideMerge(messageStorage(options)),
      Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
      // The address only names this runner in memory; nothing listens on it.
      Layer.provide(shardingConfig(options.sharding, Option.some(RunnerAddress.make("127.0.0.1", 0))))
    )
  )

/**
 * Binds the runner's socket (so port 0 can be announced as the port actually bound); a port in use dies with
 * `RunnerPortInUse`. Cheap, so the server does it before serving: that failure still stops `serve` at once.
 */
const bindRunner = (settings: ClusterSettings) =>
  NodeSocketServer.make({ host: settings.listenHost, port: settings.port }).pipe(
    Effect.catch((error) =>
      Effect.die(addressInUse(error) ? new RunnerPortInUse({ host: settings.listenHost, port: settings.port, cause: error }) : error)
    )
  )

/** Runner-to-runner messages: the binary schema serialization `NodeClusterSocket.layer` uses by default. */
const serialization = RpcSerialization.layerSchemaBinary()

/**
 * A runner of the cluster on a bound socket: registers under the socket's address, takes its share of the shards
 * with advisory locks (one pool connection stays reserved for them), and pings the others to notice one that is gone.
 */
const runnerOn = (
  server: SocketServer["Service"],
  settings: ClusterSettings,
  options: Options
): Layer.Layer<WorkflowEngine | Sharding.Sharding, never, SqlClient> => {
  const port = server.address._tag === "UnixPathAddress" ? settings.port : server.address.port
  const config = shardingConfig(options.sharding, Option.some(RunnerAddress.make(settings.host, port)))
  const protocol = NodeClusterSocket.layerClientProtocol.pipe(Layer.provide(serialization))
  return engine(
    SocketRunner.layer.pipe(
      Layer.provide(RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(protocol))),
      Layer.provideMerge(messageStorage(options)),
      Layer.provide(Layer.orDie(SqlRunnerStorage.layerWith({ prefix: options.prefix ?? defaultPrefix }))),
      Layer.provide([Layer.succeed(SocketServer, server), protocol, serialization]),
      Layer.provide(config)
    )
  )
}

/**
 * A runner of the cluster on the Postgres behind SqlClient: binds its socket first, then registers under that
 * address and takes its share of the shards (see `runnerOn`).
 */
export const layerCluster = (
  settings: ClusterSettings,
  options: Options = {}
): Layer.Layer<WorkflowEngine | Sharding.Sharding, never, SqlClient> =>
  Layer.unwrap(Effect.map(bindRunner(settings), (server) => runnerOn(server, settings, options)))

/**
 * The server's engine: a cluster runner with `DATABASE_URL` (settings from the environment), else the single
 * in-process runner; also the single runner when the database in use has one connection whatever the environment
 * says (an embedded database given in code while `DATABASE_URL` is set), and with `runner: "single"`, holding its
 * lock (`SingleRunnerTaken` when another process has it).
 *
 * It starts in the background (`inBackground`): the server serves while cluster creates its tables, registers the
 * runner and takes its shards, and only work that needs the engine waits for it. What can be refused at once is
 * still refused before serving: a pool too small for a cluster runner, a runner port in use.
 */
export const layer = (options: Options = {}) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const settings = yield* ServerConfig
      if (settings.databaseUrl === undefined) return inBackground(layerSingle(options))
      // The pool in use: ours say their size; a plain PgClient, its `maxConnections` (its config is the pool's
      // options, typed as the connection's).
      const poolSize = Option.getOrUndefined(yield* Effect.serviceOption(PoolSize)) ??
        Option.getOrUndefined(Option.flatMap(yield* Effect.serviceOption(PgClient.PgClient), (client) => {
          const max: unknown = Reflect.get(client.config, "maxConnections")
          return typeof max === "number" ? Option.some(max) : Option.none()
        }))
      if (poolSize === 1) {
        // The runner storage keeps one connection for its advisory locks; with a pool of one, nothing else would run.
        if (settings.dbPoolSize < 2) {
          return yield* Effect.die(new Error("ORGPLANE_DB_POOL_SIZE must be at least 2 with DATABASE_URL: the durable engine keeps one connection for its shard locks"))
        }
        // A one-connection database given in code (an embedded one, say) while DATABASE_URL is set: not a cluster.
        return inBackground(layerSingle(options))
      }
      if (options.runner === "single") {
        yield* holdSingleRunnerLock(options.prefix ?? defaultPrefix)
        return inBackground(layerSingle(options))
      }
      const fromEnvironment = yield* clusterConfig
      const given = options.cluster ?? {}
      const cluster: ClusterSettings = {
        host: given.host ?? fromEnvironment.host,
        listenHost: given.listenHost ?? fromEnvironment.listenHost,
        port: given.port ?? fromEnvironment.port
      }
      const server = yield* bindRunner(cluster)
      return inBackground(runnerOn(server, cluster, options))
    })
  )

/**
 * `engine` built in the background: its WorkflowEngine and Sharding are available at once, as stand-ins that hand
 * each call to the engine once it is up. A call that needs the engine (starting or polling a workflow, a client
 * of an entity) waits for it; a registration (a workflow's, an entity's, a singleton's, so every `ClusterCron`) is
 * made by a fiber of the registering layer's scope as soon as the engine is up, so layers that register build at
 * once. Sharding's two synchronous questions (`getShardId`, `hasShardId`) cannot wait: asked before the engine is
 * up they throw (nothing of ours asks them; cluster's own code asks the engine itself).
 *
 * An engine that fails to start is logged as an error, and every call waiting for it dies with that cause. Beside
 * them, `DurableHealth` says whether the engine is starting, running, failed or stopped (the health probes read it).
 */
export const inBackground = <E, R>(
  engine: Layer.Layer<WorkflowEngine | Sharding.Sharding, E, R>
): Layer.Layer<WorkflowEngine | Sharding.Sharding | DurableHealth, never, R> =>
  Layer.effectContext(Effect.gen(function*() {
    const ready = yield* Deferred.make<Context.Context<WorkflowEngine | Sharding.Sharding>>()
    const scope = yield* Effect.scope
    // Closed after the fiber below is interrupted (finalizers run in reverse): a stop during start-up releases
    // whatever the engine had acquired.
    const engineScope = yield* Scope.fork(scope, "sequential")
    let started: Context.Context<WorkflowEngine | Sharding.Sharding> | undefined
    let failed = false
    const gate = yield* Effect.serviceOption(StartGate)
    yield* Effect.andThen(
      Option.isSome(gate) ? Deferred.await(gate.value) : Effect.void,
      Effect.timed(Layer.buildWithScope(engine, engineScope))
    ).pipe(
      Effect.tap(([took, context]) => {
        started = context
        return Effect.logDebug(`The durable engine is up (it took ${Math.round(Duration.toMillis(took))} ms)`)
      }),
      Effect.flatMap(([, context]) => Deferred.succeed(ready, context)),
      Effect.catchCause((cause) =>
        Effect.andThen(
          Effect.andThen(Effect.sync(() => (failed = true)), Effect.logError("The durable engine could not start: background work (connector syncs, audit streams, scheduled jobs) will not run", cause)),
          Deferred.failCause(ready, Cause.die(Cause.squash(cause)))
        )
      ),
      Effect.forkIn(scope)
    )
    const engineOf = Effect.map(Deferred.await(ready), (context) => Context.get(context, WorkflowEngine))
    const shardingOf = Effect.map(Deferred.await(ready), (context) => Context.get(context, Sharding.Sharding))
    const shardingNow = () => {
      if (started === undefined) throw new Error("The durable engine is still starting")
      return Context.get(started, Sharding.Sharding)
    }
    /** A registration, made once the engine is up, by a fiber of the registering layer's scope. */
    const register = <R2>(effect: Effect.Effect<void, never, R2>) =>
      Effect.asVoid(Effect.forkScoped(effect.pipe(Effect.tapDefect((defect) => Effect.logError("A registration with the durable engine failed", defect)))))
    const workflows: WorkflowEngine["Service"] = {
      register: (workflow, execute) => register(Effect.flatMap(engineOf, (real) => real.register(workflow, execute))),
      execute: (workflow, options) => Effect.flatMap(engineOf, (real) => real.execute(workflow, options)),
      poll: (workflow, executionId) => Effect.flatMap(engineOf, (real) => real.poll(workflow, executionId)),
      interrupt: (workflow, executionId) => Effect.flatMap(engineOf, (real) => real.interrupt(workflow, executionId)),
      interruptUnsafe: (workflow, executionId) => Effect.flatMap(engineOf, (real) => real.interruptUnsafe(workflow, executionId)),
      resume: (workflow, executionId) => Effect.flatMap(engineOf, (real) => real.resume(workflow, executionId)),
      activityExecute: (activity, attempt) => Effect.flatMap(engineOf, (real) => real.activityExecute(activity, attempt)),
      deferredResult: (deferred) => Effect.flatMap(engineOf, (real) => real.deferredResult(deferred)),
      deferredDone: (deferred, options) => Effect.flatMap(engineOf, (real) => real.deferredDone(deferred, options)),
      scheduleClock: (workflow, options) => Effect.flatMap(engineOf, (real) => real.scheduleClock(workflow, options))
    }
    const sharding: Sharding.Sharding["Service"] = {
      getRegistrationEvents: Stream.unwrap(Effect.map(shardingOf, (real) => real.getRegistrationEvents)),
      getShardId: (entityId, group) => shardingNow().getShardId(entityId, group),
      hasShardId: (shardId) => shardingNow().hasShardId(shardId),
      getSnowflake: Effect.flatMap(shardingOf, (real) => real.getSnowflake),
      isShutdown: Effect.flatMap(shardingOf, (real) => real.isShutdown),
      makeClient: (entity) => Effect.flatMap(shardingOf, (real) => real.makeClient(entity)),
      registerEntity: (entity, handlers, options) => register(Effect.flatMap(shardingOf, (real) => real.registerEntity(entity, handlers, options))),
      registerSingleton: (name, run, options) => register(Effect.flatMap(shardingOf, (real) => real.registerSingleton(name, run, options))),
      send: (message) => Effect.flatMap(shardingOf, (real) => real.send(message)),
      sendOutgoing: (message, discard) => Effect.flatMap(shardingOf, (real) => real.sendOutgoing(message, discard)),
      notify: (message, options) => Effect.flatMap(shardingOf, (real) => real.notify(message, options)),
      reset: (requestId, options) => Effect.flatMap(shardingOf, (real) => real.reset(requestId, options)),
      pollStorage: Effect.flatMap(shardingOf, (real) => real.pollStorage),
      activeEntityCount: Effect.flatMap(shardingOf, (real) => real.activeEntityCount)
    }
    const health: DurableHealth["Service"] = {
      state: Effect.suspend((): Effect.Effect<DurableEngineState> =>
        started === undefined
          ? Effect.succeed(failed ? "failed" : "starting")
          : Effect.map(Context.get(started, Sharding.Sharding).isShutdown, (down) => down ? "stopped" : "running")
      )
    }
    return Context.make(WorkflowEngine, workflows).pipe(Context.add(Sharding.Sharding, sharding), Context.add(DurableHealth, health))
  }))

export interface RetryOptions<E> {
  /** First delay; each next one doubles, with jitter (80% to 120%). */
  readonly base: Duration.Input
  /** Retries after the first attempt; then the last error stands. */
  readonly times: number
  /** Which errors are transient; any other fails at once. */
  readonly while: (error: E) => boolean
}

/**
 * Retries an activity on transient errors with exponential backoff and jitter, up to a maximum. Each attempt is
 * its own durable activity execution (`Activity.CurrentAttempt` is 1, 2, ...), so an attempt that completed is not
 * run again after a crash: its result is read back. (`Activity.retry` does the same without a schedule.) The
 * delays are plain sleeps of the workflow's fiber: replaying after a crash sleeps them again, and a delay that must
 * outlive the process belongs in `DurableClock.sleep`.
 */
export const retry = <E>(options: RetryOptions<E>) => <A, R>(activity: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    let attempt = 1
    return Effect.suspend(() => Effect.provideService(activity, Activity.CurrentAttempt, attempt++)).pipe(
      Effect.retry({
        schedule: Schedule.exponential(options.base).pipe(Schedule.jittered),
        times: options.times,
        while: options.while
      })
    )
  })
