/**
 * The orgplane server, composed: configuration → database → migrations → services → HTTP groups.
 *
 * Three ways to run it:
 * - `layer(options)`: a standalone Node HTTP server (what `orgplane serve` runs);
 * - `makeWebHandler(options)`: a web-standard `(Request) => Promise<Response>` for any host;
 * - `makeNodeListener(options)`: a Node `(req, res)` listener to mount inside a host's own `http` server;
 * and `ApiLayer(options)` for Effect hosts that serve it with their own HttpServer.
 */
import { HttpApiBuilder, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Api } from "@orgplane/schema"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime } from "effect"
import { type IncomingMessage, Server as NodeServer, type ServerOptions as NodeServerOptions, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import * as AccountHttp from "./accounts/Http.js"
import * as AdminHttp from "./admin/Http.js"
import * as CatalogHttp from "./catalog/Http.js"
import * as ConnectorsHttp from "./connectors/Http.js"
import * as IdentityHttp from "./identity/Http.js"
import * as CodeHostConfig from "./integrations/codehost/CodeHostConfig.js"
import * as GitHub from "./integrations/codehost/GitHub.js"
import * as DnsConfig from "./integrations/dns/DnsConfig.js"
import * as Resolver from "./integrations/dns/Resolver.js"
import * as Authentication from "./identity/Authentication.js"
import { Operator } from "./identity/Operator.js"
import { UsersRepository } from "./identity/UsersRepository.js"
import { migrations, migrationsUrl } from "./migrations/index.js"
import * as Config from "./platform/Config.js"
import * as Crypto from "./platform/Crypto.js"
import { clientErrorListener } from "./platform/ClientErrors.js"
import * as Database from "./platform/Database.js"
import { DatabaseStatus } from "./platform/DatabaseStatus.js"
import * as Docs from "./platform/Docs.js"
import * as Durable from "./platform/Durable.js"
import * as HttpErrors from "./platform/HttpErrors.js"
import * as Idempotency from "./platform/Idempotency.js"
import * as IdempotencyKeys from "./platform/IdempotencyKeys.js"
import { IdGenerator } from "./platform/Ids.js"
import * as InstanceSecrets from "./platform/InstanceSecrets.js"
import { migrate } from "./platform/Migrator.js"
import * as Outbound from "./platform/Outbound.js"
import { expiryLayer as RateLimitsExpiry, RateLimiter } from "./platform/RateLimiter.js"
import * as RequestLog from "./platform/RequestLog.js"
import * as StoredSecrets from "./platform/StoredSecrets.js"
import * as SsoHttp from "./sso/Http.js"
import * as AuditHttp from "./audit/Http.js"
import * as AuditStreamConfig from "./audit/StreamConfig.js"
import { AuditRecorder } from "./platform/AuditRecorder.js"
import * as ScimConnectionsHttp from "./scim/ConnectionsHttp.js"
import * as ScimGroupsHttp from "./scim/GroupsHttp.js"
import * as ScimUsersHttp from "./scim/UsersHttp.js"
import * as SamlRefreshConfig from "./sso/SamlRefreshConfig.js"
import * as MembersHttp from "./members/Http.js"
import * as TeamsHttp from "./teams/Http.js"
import * as InvitationsHttp from "./invitations/Http.js"
import * as DesktopPoliciesHttp from "./policies/Http.js"
import * as MemoryHttp from "./memory/Http.js"
import * as TemplatesHttp from "./templates/Http.js"
import * as TemplateSchemas from "./templates/SchemaRegistry.js"
import * as SystemHttp from "./system/Http.js"
import * as WorkersHttp from "./workers/Http.js"
import * as WorkerActivityConfig from "./workers/ActivityConfig.js"
import * as WorkerRuntimeConfig from "./workers/RuntimeConfig.js"
import * as McpToolConfig from "./mcp/ToolConfig.js"
import * as TelemetryHttp from "./telemetry/Http.js"
import * as McpHttp from "./mcp/Http.js"
import * as McpPresetsConfig from "./mcp/PresetsConfig.js"
import * as CapabilitiesHttp from "./capabilities/Http.js"
import * as CapabilityConfig from "./capabilities/CapabilityConfig.js"
import * as LlmProvidersHttp from "./llm/Http.js"
import * as LlmConfig from "./llm/LlmConfig.js"
import { StartGate } from "./platform/DurableStartGate.js"

/**
 * The settings as plain values (`databaseUrl: "postgres://..."`, `dataDir: "memory"`, `sessionTtl: "7 days"`), each
 * optional: what is left out comes from the environment (`DATABASE_URL`, `ORGPLANE_*`) or its default.
 */
export type ServerOptions = Config.Options & CodeHostConfig.Options & DnsConfig.Options & WorkerRuntimeConfig.Options & WorkerActivityConfig.Options &
  McpPresetsConfig.Options &
  McpToolConfig.Options & CapabilityConfig.Options & TemplateSchemas.Options & LlmConfig.Options & SamlRefreshConfig.Options &
  AuditStreamConfig.Options & {
  /** The durable engine's settings (cluster tuning, table prefix, and with DATABASE_URL the runner's address). */
  readonly durable?: Durable.Options | undefined
  /**
   * How people run the CLI where this server was started, for the first-run hint: `orgplane` (the default), or
   * `pnpm orgplane` in a clone of the repository.
   */
  readonly cliCommand?: string | undefined
  /** Replaces the database layer (tests use a template-loaded embedded database). */
  readonly database?: Layer.Layer<SqlClient.SqlClient, unknown> | undefined
}

const Migrations = Layer.effectDiscard(migrate(migrations))

/**
 * After the migrations, before serving: the keys checked against the database by reading the instance's cursor key
 * (made and stored encrypted on the first start; platform/InstanceSecrets.ts), so that a server without its keys or
 * with the wrong ones stops here; then stored secrets of the old unbound format rewritten bound to their rows
 * (platform/StoredSecrets.ts). Not migrations: migrations run without the keys, which only the configuration has.
 */
const StartupSecrets = Layer.provideMerge(
  Layer.effectDiscard(Effect.flatMap(Crypto.Crypto, (crypto) => StoredSecrets.upgradeV1(crypto.keyring))),
  InstanceSecrets.cursorKeyLayer
).pipe(Layer.provide(Crypto.layer))

/** Shared infrastructure: services that any area may use. */
const Platform = Layer.mergeAll(Crypto.layer, RateLimiter.layer, Idempotency.layer, AuditRecorder.layer).pipe(
  Layer.provideMerge(IdGenerator.Live)
)

/** The database, migrated (the keys checked, stored secrets upgraded), with the configuration and the cursor key. */
const Storage = (options: ServerOptions) => {
  const { database, ...overrides } = options
  const config = Config.layer(overrides)
  const db = (database ?? Database.layerWith({ memoryTemplate: { migrationsUrl, migrate: migrate(migrations) } })).pipe(Layer.provide(config))
  return Layer.provideMerge(StartupSecrets, Layer.provideMerge(Migrations, Layer.merge(db, config)))
}

/**
 * The outbound guard, in private mode when configured, resolving user-supplied hosts through our DNS client when
 * DNS servers are named (otherwise the system's `dns.lookup`).
 */
const OutboundLive = (options: ServerOptions) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const config = yield* Config.ServerConfig
    const guard = Outbound.layer({ allowPrivate: config.outboundAllowPrivate })
    if (!(yield* DnsConfig.serversNamed(options))) return guard
    return guard.pipe(Layer.provide(Resolver.addressResolverLayer), Layer.provide(Resolver.layer), Layer.provide(DnsConfig.layer(options)))
  }))

/**
 * What reaches other systems: the outbound guard, GitHub's client (settings from `ORGPLANE_CODEHOST_*` with the
 * options on top), and the durable engine background work runs on.
 */
const Integrations = (options: ServerOptions) =>
  Layer.mergeAll(GitHub.layer, Durable.layer(options.durable ?? {}), Resolver.layer).pipe(
    Layer.provideMerge(CodeHostConfig.layer(options)),
    Layer.provideMerge(DnsConfig.layer(options)),
    Layer.provideMerge(WorkerRuntimeConfig.layer(options)),
    Layer.provideMerge(WorkerActivityConfig.layer(options)),
    Layer.provideMerge(McpPresetsConfig.layer(options)),
    Layer.provideMerge(McpToolConfig.layer(options)),
    Layer.provideMerge(CapabilityConfig.layer(options)),
    Layer.provideMerge(TemplateSchemas.layer(options)),
    Layer.provideMerge(LlmConfig.layer(options)),
    Layer.provideMerge(SamlRefreshConfig.layer(options)),
    Layer.provideMerge(AuditStreamConfig.layer(options)),
    Layer.provideMerge(OutboundLive(options))
  )

/**
 * The router's settings: a path parameter may be up to 1024 characters (the router's default, 100, answered 404 "no
 * route" for longer ones; suite message ids are about 150, and a too-long id must be the schema's 400).
 */
const Routing = HttpRouter.setRouterConfig({ maxParamLength: 1024 })

/**
 * At start, while nothing names the instance's operator (`ORGPLANE_OPERATOR_ORGANIZATION_ID`, `ORGPLANE_SETUP_TOKEN`,
 * or a claim already made): a new one-time setup token, logged here and nowhere else, and how to redeem it. A
 * database that cannot take it yet is no reason not to start: the next start makes one.
 */
const OperatorSetup = (options: ServerOptions) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const token = yield* (yield* Operator).issueSetupToken
      if (token._tag === "None") return
      yield* Effect.logInfo(
        `No organization operates this instance yet. Its operator, signed in as the owner of their organization, makes it the operator with \`${options.cliCommand ?? "orgplane"} admin claim-operator ${token.value}\` (or POST /v1/admin/operator with {"setupToken": …}) within 24 hours; the token works once. Or set ORGPLANE_OPERATOR_ORGANIZATION_ID.`
      )
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Could not make the instance's setup token; the next start makes one", cause)))
  ).pipe(Layer.provide(Operator.layer))

/** The API's routes with every service they need, on the configured database. Needs an HttpServer to serve. */
export const ApiLayer = (options: ServerOptions = {}) =>
  Layer.mergeAll(HttpApiBuilder.api(Api), Docs.layer, HttpErrors.layer, IdempotencyKeys.expiryLayer, RateLimitsExpiry, OperatorSetup(options)).pipe(
    Layer.provide([
      SystemHttp.layer,
      IdentityHttp.layer,
      AccountHttp.layer,
      AdminHttp.layer,
      MembersHttp.layer,
      TeamsHttp.layer,
      InvitationsHttp.layer,
      CatalogHttp.layer,
      ConnectorsHttp.layer,
      DesktopPoliciesHttp.layer,
      SsoHttp.layer,
      ScimConnectionsHttp.layer,
      ScimUsersHttp.layer,
      ScimGroupsHttp.layer,
      WorkersHttp.layer,
      MemoryHttp.layer,
      TemplatesHttp.layer,
      TelemetryHttp.layer,
      McpHttp.layer,
      CapabilitiesHttp.layer,
      LlmProvidersHttp.layer,
      AuditHttp.layer
    ]),
    Layer.provide(Authentication.layer),
    Layer.provide(Platform),
    Layer.provideMerge(Integrations(options)),
    Layer.provideMerge(Storage(options)),
    Layer.provideMerge(DatabaseStatus.layer),
    Layer.provide(Routing)
  )

/** The address people type: a wildcard bind is reachable on loopback. */
const publicUrl = (address: HttpServer.Address) => {
  if (address._tag === "UnixAddress") return `http+unix://${address.path}`
  const host = ["0.0.0.0", "::", "localhost"].includes(address.hostname) ? "127.0.0.1" : address.hostname
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`
}

/**
 * Once listening: where the server and its API reference are, and on an instance without accounts how to create
 * the first one, as the CLI is typed where the server runs, with `--url` unless it is the CLI's default address.
 */
const Started = (options: ServerOptions) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const url = publicUrl((yield* HttpServer.HttpServer).address)
      yield* Effect.logInfo(`Listening on ${url} (API reference: ${url}/docs)`)
      // Now the durable engine may start (in the background: see platform/Durable.ts).
      yield* StartGate.open
      if ((yield* (yield* UsersRepository).count) > 0) return
      const target = url === "http://127.0.0.1:8787" ? "" : ` --url ${url}`
      yield* Effect.logInfo(
        `No accounts yet. Create the first one with \`${options.cliCommand ?? "orgplane"} auth signup${target} --email you@example.com --name "Your Name"\`, or POST /v1/auth/sign-up.`
      )
    })
  ).pipe(Layer.provide(UsersRepository.layer))

/** How long a stopping server lets requests in flight finish before it closes their connections. */
export const shutdownGraceMillis = 10_000

/**
 * Node's HTTP server, stopping gracefully with long keep-alive. `close()` stops accepting and ends every connection
 * that awaits no answer, then each other one as soon as its answers are sent, and whatever is still open after
 * `shutdownGraceMillis`: a stop takes as long as the requests in flight, never a keep-alive timeout. Node's own
 * `closeIdleConnections` would miss a connection whose answer is sent but whose request body is not all read (a
 * 413 to a body announced and never sent): the parser still calls it busy.
 */
class GracefulServer extends NodeServer {
  /** Open connections, with how many of their requests await an answer. */
  readonly #awaiting = new Map<Socket, number>()
  #closing = false

  constructor(options: NodeServerOptions) {
    super(options)
    this.on("connection", (socket: Socket) => {
      this.#awaiting.set(socket, 0)
      socket.once("close", () => this.#awaiting.delete(socket))
    })
    this.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket
      this.#awaiting.set(socket, (this.#awaiting.get(socket) ?? 0) + 1)
      response.once("close", () => {
        const left = this.#awaiting.get(socket)
        if (left === undefined) return
        this.#awaiting.set(socket, left - 1)
        if (this.#closing && left === 1) socket.end()
      })
    })
  }

  override close(callback?: (error?: Error) => void): this {
    if (!this.#closing && this.listening) {
      this.#closing = true
      for (const [socket, awaiting] of this.#awaiting) if (awaiting === 0) socket.end()
      const cut = setTimeout(() => this.closeAllConnections(), shutdownGraceMillis).unref()
      this.once("close", () => clearTimeout(cut))
    }
    return super.close(callback)
  }
}

/**
 * Node's HTTP server as the standalone server runs it: what its parser refuses (a request line or header block
 * over its limit, malformed HTTP) is answered in the API's error shape (`platform/ClientErrors.ts`).
 *
 * An idle keep-alive connection is kept 65 s, longer than clients and proxies keep theirs (undici, so `fetch` and
 * the SDK, 4 s; load balancers commonly 60 s): the client closes first, so it never sends a request on a socket
 * the server is closing at that moment, which it would see as `ECONNRESET`. Node's default, 5 s, loses that race
 * whenever a client's idle timer runs late. Stopping does not wait for it (`GracefulServer`).
 */
export const createHttpServer = (): NodeServer =>
  new GracefulServer({ keepAliveTimeout: 65_000 }).on("clientError", clientErrorListener)

/**
 * A standalone HTTP server on the configured host and port, logging with the configured logger: one line per
 * request, written by the API's middleware (`HttpErrors.layer`), so the embedded modes log the same way.
 */
export const layer = (options: ServerOptions = {}) =>
  Layer.unwrapEffect(
    Effect.map(Config.ServerConfig, (settings) =>
      Layer.merge(HttpApiBuilder.serve(), Started(options)).pipe(
        Layer.provide(NodeHttpServer.layer(createHttpServer, { port: settings.port, host: settings.host }))
      ))
  ).pipe(Layer.provide(ApiLayer(options)), Layer.provide(RequestLog.layer(options)), Layer.provide(StartGate.layer))

/** A web-standard handler, for hosts built on `fetch` (or any framework with Request/Response). */
export const makeWebHandler = (options: ServerOptions = {}) =>
  HttpApiBuilder.toWebHandler(
    Layer.mergeAll(ApiLayer(options), HttpServer.layerContext).pipe(Layer.provide(RequestLog.layer(options)))
  )

/** A Node `http` request listener, to mount under a host app's own server. Call `dispose` on shutdown. */
export const makeNodeListener = async (options: ServerOptions = {}): Promise<{
  readonly listener: (request: IncomingMessage, response: ServerResponse) => void
  readonly dispose: () => Promise<void>
}> => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(ApiLayer(options), HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, NodeHttpServer.layerContext).pipe(
      Layer.provide(RequestLog.layer(options))
    )
  )
  const listener = await runtime.runPromise(Effect.flatMap(HttpApiBuilder.httpApp, NodeHttpServer.makeHandler))
  return { listener, dispose: () => runtime.dispose() }
}
