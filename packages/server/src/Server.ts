/**
 * The orgplane server, composed: configuration → database → migrations → HTTP groups.
 *
 * Three ways to run it:
 * - `layer(options)`: a standalone Node HTTP server (what `orgplane serve` runs);
 * - `makeWebHandler(options)`: a web-standard `(Request) => Promise<Response>` for any host;
 * - `makeNodeListener(options)`: a Node `(req, res)` listener to mount inside a host's own `http` server;
 * and `ApiLayer(options)` for Effect hosts that serve it with their own HttpServer (with `routerConfig`).
 *
 * It serves `Api`, every group, behind the request edge (`HttpErrors`: the per-request log line, the request guard, the
 * idempotency keys' middleware, the answers to unknown routes and refused requests) with the docs' routes, on the
 * configured database, migrated, its keys checked and stored secrets upgraded (`StartupSecrets`). Each area's groups
 * are built with `HttpErrors.group` over its services (`Groups`), behind authentication (the three middlewares,
 * `identity/Authentication.ts`). Around the router (`Services`): the shared platform services (`Crypto`, `RateLimiter`,
 * `Idempotency`, `AuditRecorder`, `IdGenerator`), the connectors' durable sync, the durable engine (`Durable.layer`,
 * started once the server listens: `StartGate`) with the jobs on it, the code host's client, the DNS resolver, the
 * areas' settings and the outbound guard (`OutboundLive`); and the operator's setup token (`OperatorSetup`).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as SqlClient from "effect/sql/SqlClient"
import type { IncomingMessage, Server as NodeServer, ServerResponse } from "node:http"
import * as AgentsConfig from "./agents/AgentsConfig.js"
import * as AgentsHttp from "./agents/Http.js"
import { Api } from "./Api.js"
import * as Authentication from "./identity/Authentication.js"
import * as ClaimPage from "./identity/ClaimPage.js"
import * as IdentityHttp from "./identity/Http.js"
import * as AccountHttp from "./accounts/Http.js"
import * as AdminHttp from "./admin/Http.js"
import * as AuditHttp from "./audit/Http.js"
import * as CatalogHttp from "./catalog/Http.js"
import * as ConnectorsHttp from "./connectors/Http.js"
import * as SyncWorkflow from "./connectors/SyncWorkflow.js"
import * as CodeHostConfig from "./integrations/codehost/CodeHostConfig.js"
import * as GitHub from "./integrations/codehost/GitHub.js"
import * as InvitationsHttp from "./invitations/Http.js"
import * as MembersHttp from "./members/Http.js"
import * as DesktopPoliciesHttp from "./policies/Http.js"
import * as ScimConnectionsHttp from "./scim/ConnectionsHttp.js"
import * as ScimGroupsHttp from "./scim/GroupsHttp.js"
import * as ScimUsersHttp from "./scim/UsersHttp.js"
import * as SamlRefreshConfig from "./sso/SamlRefreshConfig.js"
import * as SsoHttp from "./sso/Http.js"
import * as AuditStreamConfig from "./audit/StreamConfig.js"
import * as CapabilitiesHttp from "./capabilities/Http.js"
import * as CapabilityConfig from "./capabilities/CapabilityConfig.js"
import * as LlmProvidersHttp from "./llm/Http.js"
import * as LlmConfig from "./llm/LlmConfig.js"
import * as McpHttp from "./mcp/Http.js"
import * as McpPresetsConfig from "./mcp/PresetsConfig.js"
import * as McpToolConfig from "./mcp/ToolConfig.js"
import * as MemoryHttp from "./memory/Http.js"
import * as TeamsHttp from "./teams/Http.js"
import * as OrganizationDocumentHttp from "./orgdocument/Http.js"
import * as TelemetryHttp from "./telemetry/Http.js"
import * as TemplatesHttp from "./templates/Http.js"
import * as TemplateSchemas from "./templates/SchemaRegistry.js"
import * as WorkerActivityConfig from "./workers/ActivityConfig.js"
import * as WorkersHttp from "./workers/Http.js"
import * as WorkerRuntimeConfig from "./workers/RuntimeConfig.js"
import { Operator } from "./identity/Operator.js"
import { UsersRepository } from "./identity/UsersRepository.js"
import * as Durable from "./platform/Durable.js"
import * as NodeVersion from "./platform/NodeVersion.js"
import { StartGate } from "./platform/DurableStartGate.js"
import * as IdempotencyKeys from "./platform/IdempotencyKeys.js"
import { migrations, migrationsUrl } from "./migrations/index.js"
import { createHttpServer, holdEarlyRequests } from "./platform/NodeServer.js"
import * as DnsConfig from "./integrations/dns/DnsConfig.js"
import * as Resolver from "./integrations/dns/Resolver.js"
import { AuditRecorder } from "./platform/AuditRecorder.js"
import * as Config from "./platform/Config.js"
import * as Crypto from "./platform/Crypto.js"
import { IdGenerator } from "./platform/Ids.js"
import * as Idempotency from "./platform/Idempotency.js"
import { OutboundLive } from "./OutboundLayer.js"
import { expiryLayer as RateLimitsExpiry, RateLimiter } from "./platform/RateLimiter.js"
import * as StartupSecrets from "./platform/StartupSecrets.js"
import * as Database from "./platform/Database.js"
import { DatabaseStatus } from "./platform/DatabaseStatus.js"
import * as GroupContexts from "./platform/GroupContexts.js"
import * as Docs from "./platform/Docs.js"
import * as HttpErrors from "./platform/HttpErrors.js"
import * as MemoryRelease from "./platform/MemoryRelease.js"
import * as Metrics from "./platform/Metrics.js"
import * as Tracing from "./platform/Tracing.js"
import { BuildMigrations, migrate } from "./platform/Migrator.js"
import * as RequestLog from "./platform/RequestLog.js"
import { routerConfig as routeMatching } from "./platform/Routes.js"
import * as SystemHttp from "./system/Http.js"
import * as MetricsEndpoint from "./system/MetricsEndpoint.js"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"

/** Node's HTTP server as orgplane listens with it, and what bounds its start and stop (platform/NodeServer.ts). */
export { createHttpServer, holdEarlyRequests, shutdownGraceMillis, startupHoldMillis } from "./platform/NodeServer.js"

/**
 * The settings as plain values (`databaseUrl: "postgres://..."`, `dataDir: "memory"`, `port: 0`), each optional: what
 * is left out comes from the environment (`DATABASE_URL`, `ORGPLANE_*`) or its default.
 */
export type ServerOptions =
  & Config.Options
  & DnsConfig.Options
  & WorkerRuntimeConfig.Options
  & WorkerActivityConfig.Options
  & McpPresetsConfig.Options
  & McpToolConfig.Options
  & CapabilityConfig.Options
  & TemplateSchemas.Options
  & LlmConfig.Options
  & AuditStreamConfig.Options
  & CodeHostConfig.Options
  & SamlRefreshConfig.Options
  & Metrics.Options
  & AgentsConfig.Options
  & {
  /** The durable engine's settings (cluster tuning, table prefix, and with DATABASE_URL the runner's address). */
  readonly durable?: Durable.Options | undefined
  /**
   * How people run the CLI where this server was started, for the first-run hint: `orgplane` (the default), or
   * `pnpm orgplane` in a clone of the repository.
   */
  readonly cliCommand?: string | undefined
  /** Replaces the database layer (tests give a fresh database, or one behind a proxy). */
  readonly database?: Layer.Layer<SqlClient.SqlClient, unknown> | undefined
}

/** The migrations run at start, and which they are (what `/health/ready` holds the database to). */
const Migrations = Layer.merge(Layer.effectDiscard(migrate(migrations)), Layer.succeed(BuildMigrations, migrations))

/** The database, migrated (the keys checked, stored secrets upgraded: `StartupSecrets`), with the configuration. */
const Storage = (options: ServerOptions) => {
  const { database, ...overrides } = options
  const config = Config.layer(overrides)
  const db = (database ?? Database.layerWith({ template: { migrationsUrl, migrate: migrate(migrations) } })).pipe(Layer.provide(config))
  return Layer.provideMerge(StartupSecrets.layer, Layer.provideMerge(Migrations, Layer.merge(db, config)))
}

/**
 * Shared infrastructure: services that any area may use. `Crypto.layer` is the value StartupSecrets builds too, so
 * one start makes one keyring (a `memory` database's key is made at start).
 */
const Platform = Layer.mergeAll(Crypto.layer, RateLimiter.layer, Idempotency.layer, AuditRecorder.layer).pipe(
  Layer.provideMerge(IdGenerator.layer)
)

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
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("Could not make the instance's setup token; the next start makes one", cause)))
  ).pipe(Layer.provide(Operator.layer))

/** The areas' groups, each with its services. */
const Groups = Layer.mergeAll(
  SystemHttp.layer,
  IdentityHttp.layer,
  AccountHttp.layer,
  AdminHttp.layer,
  MembersHttp.layer,
  TeamsHttp.layer,
  OrganizationDocumentHttp.layer,
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
)

/** The areas' settings, each from the options over the environment. */
const AreaSettings = (options: ServerOptions) =>
  Layer.mergeAll(
    WorkerRuntimeConfig.layer(options),
    WorkerActivityConfig.layer(options),
    McpPresetsConfig.layer(options),
    McpToolConfig.layer(options),
    CapabilityConfig.layer(options),
    TemplateSchemas.layer(options),
    LlmConfig.layer(options),
    AuditStreamConfig.layer(options),
    SamlRefreshConfig.layer(options),
    AgentsConfig.layer(options)
  )

/**
 * The router's settings: a path parameter may be up to 1024 characters (the router's default, 100, answered 404 "no
 * route" for longer ones; suite message ids are about 150, and a too-long id must be the schema's 400), and paths
 * match in their letter case only, as the OpenAPI document writes them (the router's default matched any case, so
 * `/V1/ADMIN/METRICS` passed a proxy's rule on `/v1/admin`). They are read where the router is made:
 * `HttpRouter.serve` and `toWebHandler` take them as `routerConfig`; the request edge's route table
 * (`platform/Routes.ts`) is made with the same.
 */
export const routerConfig = routeMatching

/**
 * What the routes run on: the connectors' durable sync, the shared platform services, the durable engine, the areas' settings, the outbound guard
 * and the configured database, migrated, with its status. Handlers read these per request (the HttpApi types what
 * a handler needs as the request's), so the standalone server provides them around the router, not inside it.
 */
const Services = (options: ServerOptions) =>
  SyncWorkflow.layer.pipe(
    Layer.provideMerge(Platform),
    Layer.provideMerge(Layer.mergeAll(Durable.layer(options.durable ?? {}), GitHub.layer, Resolver.layer)),
    Layer.provideMerge(Layer.mergeAll(AreaSettings(options), CodeHostConfig.layer(options), DnsConfig.layer(options))),
    Layer.provideMerge(OutboundLive(options)),
    Layer.provideMerge(Storage(options)),
    Layer.provideMerge(DatabaseStatus.layer),
    // Beneath the database, whose pool reports to it (platform/Metrics.ts); nothing when metrics are off.
    Layer.provideMerge(Metrics.layer({ ...options, durablePrefix: options.durable?.prefix })),
    // First of all: a Node older than package.json's engines is refused before anything starts.
    Layer.provide(NodeVersion.layer)
  )

/** The request edge, naming in its route table the pages served beside the API: the claim links', `/mcp` when on. */
const Edge = Layer.unwrap(
  Effect.map(AgentsConfig.AgentsConfig, (agents) => HttpErrors.serverLayer(Api, [...ClaimPage.routes, ...AgentsHttp.routesOf(agents)]))
)

/**
 * The API's routes, the docs' and the claim links' page (identity/ClaimPage.ts), behind the request edge (`HttpErrors.serverLayer`: the router's global middleware,
 * so it runs before routing), with the jobs that run beside them (the expiry of idempotency keys and rate limits, the
 * operator's setup token): on `Services`.
 */
const Routes = (options: ServerOptions) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(Api),
    Docs.layer,
    ClaimPage.layer,
    MetricsEndpoint.routeLayer,
    MetricsEndpoint.managementLayer,
    IdempotencyKeys.expiryLayer,
    RateLimitsExpiry,
    MemoryRelease.layer,
    OperatorSetup(options),
    AgentsHttp.layer
  ).pipe(
    Layer.provide(Groups),
    Layer.provide(Authentication.layer),
    Layer.provideMerge(Edge)
  )

/**
 * The API's routes and the docs' with every service they need, on the configured database, behind the request edge:
 * for an Effect host to serve with its own HttpServer, `HttpRouter.serve(ApiLayer(options), { routerConfig })`. The
 * services are built once (`provideMerge`) and handed to each request as well (`provideRequest` finds them built in
 * the same layer build), since the HttpApi types what a handler needs as the request's.
 */
export const ApiLayer = (options: ServerOptions = {}) => {
  const services = Services(options)
  return Routes(options).pipe(HttpRouter.provideRequest(services), Layer.provideMerge(services))
}

/** The address people type: a wildcard bind is reachable on loopback. */
const publicUrl = (address: HttpServer.HttpServer["Service"]["address"]) =>
  HttpServer.formatAddress(address).replace(/\/$/, "").replace(/^(http:\/\/)(0\.0\.0\.0|\[::\]|localhost)(?=:)/, "$1127.0.0.1")

/**
 * Once listening: where the server and its API reference are, and on an instance without accounts how to create
 * the first one, as the CLI is typed where the server runs, with `--url` unless it is the CLI's default address.
 */
const Started = (options: ServerOptions) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const url = publicUrl((yield* HttpServer.HttpServer).address)
      yield* Effect.logInfo(`Listening on ${url} (API reference: ${url}/docs)`)
      // Where what operators watch goes, when it is on (the management listener says its own address).
      const recorder = yield* Metrics.CurrentRecorder
      if (recorder !== undefined && Metrics.placement(recorder.settings) === "main") {
        yield* Effect.logInfo(`Metrics on ${url}${Metrics.path}, behind ORGPLANE_METRICS_TOKEN`)
      }
      const traces = yield* Tracing.ExportTarget
      if (traces !== undefined) yield* Effect.logInfo(`Traces exported over OTLP to ${traces}`)
      // Now the durable engine may start (in the background: see platform/Durable.ts).
      yield* StartGate.open
      if ((yield* (yield* UsersRepository).count) > 0) return
      const target = url === "http://127.0.0.1:8787" ? "" : ` --url ${url}`
      yield* Effect.logInfo(
        `No accounts yet. Create the first one with \`${options.cliCommand ?? "orgplane"} auth signup${target} --email you@example.com --name "Your Name"\`, or POST /v1/auth/sign-up.`
      )
    })
  ).pipe(Layer.provide(UsersRepository.layer))

/**
 * A standalone HTTP server on the configured host and port, logging with the configured logger: one line per
 * request, written by the request edge (`HttpErrors`), so the embedded modes log the same way. Its `HttpServer` says
 * the address it listens on. `makeServer` makes the Node server it listens with (`createHttpServer` by default): a
 * host's own, say, or one the tests watch (every answer held to the OpenAPI document).
 */
export const layer = (options: ServerOptions = {}, makeServer: () => NodeServer = createHttpServer) =>
  Layer.unwrap(
    Effect.map(Config.ServerConfig, (settings) =>
      Started(options).pipe(
        Layer.provideMerge(Serving(options, makeServer, { port: settings.port, host: settings.host })),
        Layer.provideMerge(Services(options)),
        Layer.provideMerge(StartGate.layer)
      ))
  ).pipe(Layer.provide(Config.layer(options)), Layer.provide(RequestLog.layer(options)))

/**
 * `NodeRuntime.runMain`'s teardown for a server program (`runMain(Layer.launch(layer()), { teardown })`): a stop asked
 * for (SIGINT or SIGTERM interrupting the program, once its finalizers ran) exits 0, as `orgplane serve` does; any
 * other end as Effect's default teardown, which exits 130 on an interruption.
 */
export const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

/**
 * The routes on Node's server: built first (the groups, the docs, the setup token), then the server listens and
 * serves them. `HttpRouter.serve` would listen first and build the routes after: a request taken meanwhile had no
 * listener, and was never answered. The few scheduler turns left between listening and `serve` attaching its
 * listener are covered by `createHttpServer`'s server (platform/NodeServer.ts), which holds such a request for it.
 */
const Serving = (options: ServerOptions, makeServer: () => NodeServer, listen: { readonly port: number; readonly host: string }) =>
  Layer.unwrap(
    Effect.suspend(() => {
      const groups = GroupContexts.collector()
      return Effect.map(
        HttpRouter.toHttpEffect(Routes(options)).pipe(
          Effect.provideService(HttpRouter.RouterConfig, routerConfig),
          Effect.provideService(GroupContexts.Collecting, groups)
        ),
        // The requests start from the groups' contexts (GroupContexts.ts): served in them.
        (app) =>
          Layer.effectDiscard(GroupContexts.withGroups(groups, HttpServer.serveEffect(app))).pipe(
            Layer.provideMerge(NodeHttpServer.layer(() => holdEarlyRequests(makeServer()), listen))
          )
      )
    })
  ).pipe(Layer.provideMerge(NodeHttpServer.layerHttpServices))

/**
 * A web-standard handler, for hosts built on `fetch` (or any framework with Request/Response). The logger is merged
 * into what the handler runs with: the request edge (the router's global middleware) runs in the handler's context,
 * not in the one the groups were built in. Throws at once on a Node older than 22.19 (platform/NodeVersion.ts).
 */
export const makeWebHandler = (options: ServerOptions = {}): {
  /** Answers one request; the first one starts the server, and rejects (so does every next one) when it cannot start. */
  readonly handler: (request: Request) => Promise<Response>
  readonly dispose: () => Promise<void>
} => {
  NodeVersion.requireSupported()
  const web = HttpRouter.toWebHandler(ApiLayer(options).pipe(Layer.provide(HttpServer.layerServices), Layer.provideMerge(RequestLog.layer(options))), {
    disableLogger: true,
    routerConfig
  })
  return {
    handler: (request) => web.handler(request).catch((error: unknown) => Promise.reject(startupFailure(error))),
    dispose: web.dispose
  }
}

/**
 * A failure to start as the embedding functions reject with it: one that failed to connect to the database as an
 * `Error` whose message is the reason in one line (`Database.connectFailure`), the driver's error as its `cause`;
 * anything else as it is.
 */
const startupFailure = (error: unknown): unknown => {
  const reason = Database.connectFailure(error)
  return reason === undefined ? error : new Error(reason, { cause: error })
}

/**
 * A Node `http` request listener, to mount under a host app's own server. Call `dispose` on shutdown. Rejects at once
 * on a Node older than 22.19 (platform/NodeVersion.ts).
 */
export const makeNodeListener = async (options: ServerOptions = {}): Promise<{
  readonly listener: (request: IncomingMessage, response: ServerResponse) => void
  readonly dispose: () => Promise<void>
}> => {
  NodeVersion.requireSupported()
  // The services in the runtime, the routes in the listener's scope: what a handler reads per request is the runtime's.
  const runtime = ManagedRuntime.make(Layer.mergeAll(NodeHttpServer.layerHttpServices, RequestLog.layer(options), Services(options)))
  const scope = Scope.makeUnsafe()
  const groups = GroupContexts.collector()
  try {
    const listener = await runtime.runPromise(
      Effect.flatMap(
        HttpRouter.toHttpEffect(Routes(options)),
        (httpEffect) => GroupContexts.withGroups(groups, NodeHttpServer.makeHandler(httpEffect, { scope }))
      ).pipe(
        Scope.provide(scope),
        Effect.provideService(HttpRouter.RouterConfig, routerConfig),
        Effect.provideService(GroupContexts.Collecting, groups)
      )
    )
    return { listener, dispose: () => Effect.runPromise(Scope.close(scope, Exit.void)).then(() => runtime.dispose()) }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
    throw startupFailure(error)
  }
}
