/**
 * `GET /metrics` (platform/Metrics.ts has the series and the settings): on the server's own port when
 * `ORGPLANE_METRICS_TOKEN` is set without a management port, else on the management listener of
 * `ORGPLANE_METRICS_PORT`, a Node server of its own that serves nothing else. Behind the bearer token whenever one is
 * set, compared in constant time; refused with the server's usual 401.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Unauthorized } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { createServer } from "node:http"
import { unauthorized } from "../platform/HttpErrors.js"
import * as Metrics from "../platform/Metrics.js"

const digest = (value: string) => NodeCrypto.createHash("sha256").update(value).digest()

/** Whether the request presents the token, compared in constant time. */
const presents = (request: HttpServerRequest.HttpServerRequest, expected: Buffer) => {
  const header = request.headers["authorization"]
  const match = header === undefined ? null : /^bearer\s+(\S+)\s*$/i.exec(header)
  return match !== null && NodeCrypto.timingSafeEqual(digest(match[1]!), expected)
}

const missing = Unauthorized.because(
  "credentials_missing",
  "No credentials: send the metrics token (ORGPLANE_METRICS_TOKEN) as `Authorization: Bearer <token>`."
)
const wrong = Unauthorized.because("metrics_token_refused")

/**
 * `GET /metrics`: the scrape, or the 401 the server answers any refused credential with (HttpErrors.ts's
 * `unauthorized`) when a token is set and not presented.
 */
export const handler = (recorder: Metrics.Recorder, sql: SqlClient.SqlClient) => {
  const expected = recorder.settings.token === undefined ? undefined : digest(Redacted.value(recorder.settings.token))
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    if (expected !== undefined && !presents(request, expected)) {
      return Effect.succeed(unauthorized(request.headers["authorization"] === undefined ? missing : wrong))
    }
    return Effect.map(recorder.scrape(sql), (text) =>
      HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8", headers: { "cache-control": "no-store" } }))
  })
}

/** The route on the server's own port, when the token is set and no management port is (else nothing). */
export const routeLayer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const recorder = yield* Metrics.CurrentRecorder
    if (recorder === undefined || Metrics.placement(recorder.settings) !== "main") return
    const sql = yield* SqlClient.SqlClient
    yield* router.add("GET", Metrics.path, handler(recorder, sql))
  })
)

const notFound = HttpServerResponse.jsonUnsafe(
  { error: "not_found", message: `The metrics listener serves GET ${Metrics.path} only.` },
  { status: 404 }
)

/**
 * The management listener, when `ORGPLANE_METRICS_PORT` is set: `GET /metrics` (behind the token when one is set),
 * 404 for anything else; it listens for the server's lifetime. Its own Node server: nothing of the API is on it.
 */
export const managementLayer = Layer.effectDiscard(
  Effect.gen(function*() {
    const recorder = yield* Metrics.CurrentRecorder
    if (recorder === undefined || recorder.settings.port === undefined) return
    const sql = yield* SqlClient.SqlClient
    const server = yield* NodeHttpServer.make(() => createServer(), { port: recorder.settings.port, host: recorder.settings.host })
    const scrape = handler(recorder, sql)
    yield* server.serve(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const [target] = request.url.split("?")
      return (request.method === "GET" || request.method === "HEAD") && target === Metrics.path ? scrape : Effect.succeed(notFound)
    }))
    const behind = recorder.settings.token === undefined ? "" : ", behind ORGPLANE_METRICS_TOKEN"
    yield* Effect.logInfo(`Metrics on ${HttpServer.formatAddress(server.address).replace(/\/$/, "")}${Metrics.path}${behind}`)
  })
)
