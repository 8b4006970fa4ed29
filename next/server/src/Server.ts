/**
 * The orgplane server, composed: configuration → database → migrations → HTTP groups.
 *
 * The first slice on Effect 4 (issue 46): `layer(options)`, a standalone Node HTTP server of `Api` (`apiOf(SystemApi)`
 * so far) on the configured database, and `ApiLayer(options)`, its routes for Effect hosts that serve them with their
 * own HttpServer. What packages/server/src/Server.ts does that this does not yet:
 * - the other groups (identity, accounts, admin, members, teams, invitations, catalog, connectors, policies, SSO,
 *   SCIM, workers, memory, templates, telemetry, MCP, capabilities, LLM providers, audit) and their services;
 * - the keys' check and stored secrets' upgrade (`StartupSecrets`);
 * - the shared platform services (`Crypto`, `RateLimiter`, `Idempotency`, `AuditRecorder`, `IdGenerator`),
 *   authentication, the outbound guard and DNS resolver, the integrations' configurations and the durable engine
 *   (`Integrations`, `StartGate`);
 * - HttpErrors' other answers (platform/HttpErrors.ts says which), the request guard's checks but the path's one
 *   reading (platform/RequestGuard.ts says which), the per-request log line and the configured logger
 *   (`RequestLog`), the docs and OpenAPI routes (`Docs`), the expiry of idempotency keys and rate limits, the
 *   operator's setup token (`OperatorSetup`), the first-run hints (`Started`);
 * - the router's longer path parameters (`Routing`), Node's server with graceful stop and long keep-alive
 *   (`GracefulServer`, `createHttpServer`) and its parser's refusals in the API's shape (`ClientErrors`);
 * - `makeWebHandler` (Effect 4: `HttpRouter.toWebHandler`) and `makeNodeListener`.
 */
import { NodeHttpServer } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpApiBuilder } from "effect/http-api"
import { HttpRouter } from "effect/http"
import type * as SqlClient from "effect/sql/SqlClient"
import { createServer } from "node:http"
import { Api } from "./Api.js"
import { migrations, migrationsUrl } from "./migrations/index.js"
import * as Config from "./platform/Config.js"
import * as Database from "./platform/Database.js"
import { DatabaseStatus } from "./platform/DatabaseStatus.js"
import * as HttpErrors from "./platform/HttpErrors.js"
import { migrate } from "./platform/Migrator.js"
import * as RequestGuard from "./platform/RequestGuard.js"
import * as SystemHttp from "./system/Http.js"

/**
 * The settings as plain values (`databaseUrl: "postgres://..."`, `dataDir: "memory"`, `port: 0`), each optional: what
 * is left out comes from the environment (`DATABASE_URL`, `ORGPLANE_*`) or its default.
 */
export type ServerOptions = Config.Options & {
  /** Replaces the database layer (tests give a fresh database, or one behind a proxy). */
  readonly database?: Layer.Layer<SqlClient.SqlClient, unknown> | undefined
}

const Migrations = Layer.effectDiscard(migrate(migrations))

/** The database, migrated, with the configuration. */
const Storage = (options: ServerOptions) => {
  const { database, ...overrides } = options
  const config = Config.layer(overrides)
  const db = (database ?? Database.layerWith({ memoryTemplate: { migrationsUrl, migrate: migrate(migrations) } })).pipe(Layer.provide(config))
  return Layer.provideMerge(Migrations, Layer.merge(db, config))
}

/**
 * The API's routes with every service they need, on the configured database, behind the request guard (the router's
 * global middleware, so it runs before routing). Needs an HttpServer to serve.
 */
export const ApiLayer = (options: ServerOptions = {}) =>
  Layer.merge(HttpApiBuilder.layer(Api), RequestGuard.layer).pipe(
    Layer.provide(SystemHttp.layer),
    Layer.provide(HttpErrors.layer),
    Layer.provideMerge(Storage(options)),
    Layer.provideMerge(DatabaseStatus.layer)
  )

/** A standalone HTTP server on the configured host and port; its `HttpServer` says the address it listens on. */
export const layer = (options: ServerOptions = {}) =>
  Layer.unwrap(
    Effect.map(Config.ServerConfig, (settings) =>
      HttpRouter.serve(ApiLayer(options), { disableLogger: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: settings.port, host: settings.host }))
      ))
  ).pipe(Layer.provide(Config.layer(options)))
