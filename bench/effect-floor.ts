/**
 * Effect's floor (`pnpm bench --floor`, or alone: `node --conditions=@orgplane/source --import tsx
 * bench/effect-floor.ts`): what Effect 4 itself costs a request, with no database and no orgplane code on the path.
 * Three servers, each in its own process (child.ts), answer `GET /v1/members` with the same JSON, a page of 50
 * members of 9 fields shaped as orgplane's (three dates, three nullable fields, a role), byte for byte:
 *
 * - `raw`: a bare node:http handler, `JSON.stringify` of the page;
 * - `effect`: a minimal `HttpApi` (effect 4, one group, one endpoint) served by `@effect/platform-node`'s
 *   `NodeHttpServer.makeHandler` on node:http, as orgplane's `makeNodeListener` serves its routes, its success a plain
 *   `Schema.Struct` page (dates encoded to ISO strings) encoded by the endpoint;
 * - `effect + orgplane's schema`: the same server with orgplane's own `MemberPage` schema (`@orgplane/schema`: its
 *   branded ids and `Timestamp` checks), to tell Effect's floor from what orgplane's schema adds above it.
 *
 * With DATABASE_URL, two more answer `GET /v1/me` with one Postgres statement (a named, prepared `SELECT` of one row
 * from a `VALUES` list: no table, the same text for both) and the row as `{ user: { id, email, name, createdAt } }`:
 *
 * - `raw + pg`: node:http and `pg` (a pool of 10, the statement named, as the request-path baselines run theirs);
 * - `effect + sql-pg`: a minimal `HttpApi` as above, the statement through `@effect/sql-pg`'s `PgClient` (a pool of
 *   10, its own prepared-statement cache), the answer encoded by the endpoint's `Schema.Struct`.
 *
 * That pair is Effect's floor for orgplane's cheapest read (`GET /v1/me`: one statement, a small answer), beside which
 * the request path's `/v1/me` is read: what orgplane costs above it is its own.
 *
 * Interleaved rounds (`--rounds=N`, default 3) of `--duration=S` seconds (default 8) at ORGPLANE_BENCH_CONCURRENCY
 * connections (default 32); medians of req/s and the server's CPU per request, and each against its raw server.
 * Asserts nothing but that each endpoint's servers answer the same JSON.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Agent } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Scope from "effect/Scope"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import pg from "pg"
import { MemberPage } from "../packages/schema/src/Members.js"
import { serve } from "./child.js"
import { serverDependencies } from "./dependency.js"
import { loadFor, request } from "./http.js"

type Listener = (request: IncomingMessage, response: ServerResponse) => void

/** The page every server answers: 50 members as orgplane's `GET /v1/members?limit=50` lists them. */
const page = () => {
  const at = new Date("2026-11-27T12:00:00.000Z").getTime()
  return {
    items: Array.from({ length: 50 }, (_, i) => {
      const n = String(i + 1).padStart(18, "0")
      return {
        id: `om_01jbench${n}`,
        organizationId: "org_01jbench000000000000000000",
        userId: `usr_01jbench${n}`,
        name: `Person ${i + 1}`,
        email: `person.${i + 1}@example.com`,
        role: i === 0 ? "owner" as const : "member" as const,
        createdAt: new Date(at + i),
        removedAt: null,
        suspendedAt: null
      }
    }),
    nextCursor: "b21fMDFqYmVuY2gwMDAwMDAwMDAwMDAwMDAwNTA.c2lnbmF0dXJlc2lnbmF0dXJl"
  }
}

// The Effect servers -----------------------------------------------------------------------------------------------

/** A date sent as its ISO string, as orgplane's answers carry them, with no check of its own. */
const IsoDate = Schema.String.pipe(Schema.decodeTo(Schema.Date, {
  decode: SchemaGetter.transform((text: string) => new Date(text)),
  encode: SchemaGetter.transform((date: Date) => date.toISOString())
}))

const PlainMember = Schema.Struct({
  id: Schema.String,
  organizationId: Schema.String,
  userId: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  role: Schema.Literals(["owner", "admin", "member"]),
  createdAt: IsoDate,
  removedAt: Schema.NullOr(IsoDate),
  suspendedAt: Schema.NullOr(IsoDate)
})
const PlainPage = Schema.Struct({ items: Schema.Array(PlainMember), nextCursor: Schema.NullOr(Schema.String) })

/** The server package's dependencies, loaded as the server loads them (`@effect/platform-node`, `@effect/sql-pg`). */
const dependency = serverDependencies(Path.join(import.meta.dirname, "..", "packages", "server"))

/** What this file uses of `@effect/platform-node` (a dependency of the server package, loaded as server.ts loads its own). */
interface NodeHttpServerModule {
  readonly NodeHttpServer: {
    readonly makeHandler: <E, R>(
      httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
      options: { readonly scope: Scope.Scope }
    ) => Effect.Effect<Listener, never, never>
  }
}
const isNodeHttpServerModule = (module: unknown): module is NodeHttpServerModule =>
  typeof module === "object" && module !== null && "NodeHttpServer" in module

/** What a route layer of `HttpApiBuilder` needs to be served: the HTTP services (`HttpServer.layerServices`). */
type HttpServices = Layer.Success<typeof HttpServer.layerServices>

/** A node:http listener of `routes`, as orgplane's `makeNodeListener` makes its own. */
const listenerOf = async (routes: Layer.Layer<never, never, HttpServices | HttpRouter.HttpRouter>) => {
  const platform = await dependency("@effect/platform-node")
  if (!isNodeHttpServerModule(platform)) throw new Error("@effect/platform-node has no NodeHttpServer")
  const runtime = ManagedRuntime.make(HttpServer.layerServices)
  const scope = Scope.makeUnsafe()
  const listener = await runtime.runPromise(
    Effect.flatMap(HttpRouter.toHttpEffect(routes), (httpEffect) => platform.NodeHttpServer.makeHandler(httpEffect, { scope })).pipe(Scope.provide(scope))
  )
  return { listener, dispose: () => Effect.runPromise(Scope.close(scope, Exit.void)).then(() => runtime.dispose()) }
}

/** The one-endpoint `HttpApi` with the plain page schema. */
const PlainApi = HttpApi.make("floor").add(HttpApiGroup.make("members").add(HttpApiEndpoint.get("list", "/v1/members", { success: PlainPage })))
const plainRoutes = HttpApiBuilder.layer(PlainApi).pipe(
  Layer.provide(HttpApiBuilder.group(PlainApi, "members", (handlers) => handlers.handle("list", () => Effect.succeed(page()))))
)

/** The same with orgplane's `MemberPage`, its answer decoded from the page's JSON. */
const OrgplaneApi = HttpApi.make("floor").add(HttpApiGroup.make("members").add(HttpApiEndpoint.get("list", "/v1/members", { success: MemberPage })))
const orgplaneRoutes = () => {
  const answer = Schema.decodeUnknownSync(MemberPage)(JSON.parse(JSON.stringify(page())))
  return HttpApiBuilder.layer(OrgplaneApi).pipe(
    Layer.provide(HttpApiBuilder.group(OrgplaneApi, "members", (handlers) => handlers.handle("list", () => Effect.succeed(answer))))
  )
}

// One statement: GET /v1/me ---------------------------------------------------------------------------------------

const DATABASE_URL = process.env.DATABASE_URL?.trim() || undefined
const POOL_SIZE = 10
const ME_ID = "usr_01jbench000000000000000001"
/** One row, no table: the same text, named and prepared, from both servers. */
const ME_STATEMENT = `SELECT u.id, u.email, u.name, u.created_at FROM (VALUES ('${ME_ID}', 'ada@example.com', 'Ada', timestamptz '2026-11-27T12:00:00Z')) AS u(id, email, name, created_at) WHERE u.id = $1`

const MeAnswer = Schema.Struct({ user: Schema.Struct({ id: Schema.String, email: Schema.String, name: Schema.String, createdAt: IsoDate }) })
const MeApi = HttpApi.make("floor").add(HttpApiGroup.make("me").add(HttpApiEndpoint.get("me", "/v1/me", { success: MeAnswer })))

/** What this file uses of `@effect/sql-pg` (a dependency of the server package). */
interface PgClientModule {
  readonly PgClient: {
    readonly layer: (config: { readonly url: Redacted.Redacted; readonly maxConnections: number }) => Layer.Layer<SqlClient.SqlClient, SqlError>
  }
}
const isPgClientModule = (module: unknown): module is PgClientModule => typeof module === "object" && module !== null && "PgClient" in module

const meRoutes = async (url: string) => {
  const sqlPg = await dependency("@effect/sql-pg")
  if (!isPgClientModule(sqlPg)) throw new Error("@effect/sql-pg has no PgClient")
  // The client is taken once, as the group is built, so the handler needs nothing of the request.
  const group = HttpApiBuilder.group(MeApi, "me", (handlers) =>
    Effect.map(SqlClient.SqlClient, (sql) =>
      handlers.handle("me", () =>
        Effect.gen(function*() {
          const [row] = yield* sql.unsafe<{ id: string; email: string; name: string; created_at: Date }>(ME_STATEMENT, [ME_ID])
          if (row === undefined) return yield* Effect.die(new Error("no row"))
          return { user: { id: row.id, email: row.email, name: row.name, createdAt: row.created_at } }
        }).pipe(Effect.orDie))))
  return HttpApiBuilder.layer(MeApi).pipe(
    Layer.provide(group),
    Layer.provide(Layer.orDie(sqlPg.PgClient.layer({ url: Redacted.make(url), maxConnections: POOL_SIZE })))
  )
}

const rawMe = (url: string) => {
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE })
  const listener: Listener = (_, response) => {
    pool.query<{ id: string; email: string; name: string; created_at: Date }>({ name: "floor_me", text: ME_STATEMENT, values: [ME_ID] }).then(({ rows: [row] }) => {
      const text = JSON.stringify({ user: { id: row!.id, email: row!.email, name: row!.name, createdAt: row!.created_at } })
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      response.end(text)
    }, (error: unknown) => {
      response.writeHead(500).end(String(error))
    })
  }
  return { listener, dispose: () => pool.end() }
}

// The harness ------------------------------------------------------------------------------------------------------

const KINDS = ["raw", "effect", "effect + orgplane's schema", "raw + pg", "effect + sql-pg"] as const
type Kind = typeof KINDS[number]
/** Each server's endpoint, and the raw server its figures are paired with. */
const PATH: Record<Kind, string> = {
  raw: "/v1/members",
  effect: "/v1/members",
  "effect + orgplane's schema": "/v1/members",
  "raw + pg": "/v1/me",
  "effect + sql-pg": "/v1/me"
}
const RAW_OF: Record<Kind, Kind> = { raw: "raw", effect: "raw", "effect + orgplane's schema": "raw", "raw + pg": "raw + pg", "effect + sql-pg": "raw + pg" }

const serveKind = async (kind: Kind) => {
  if (kind === "raw + pg" || kind === "effect + sql-pg") {
    if (DATABASE_URL === undefined) throw new Error(`${kind} needs DATABASE_URL`)
    const { dispose, listener } = kind === "raw + pg" ? rawMe(DATABASE_URL) : await listenerOf(await meRoutes(DATABASE_URL))
    return serve(listener, dispose)
  }
  if (kind === "raw") {
    return serve((_, response) => {
      const text = JSON.stringify(page())
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      response.end(text)
    }, async () => {})
  }
  const { dispose, listener } = await listenerOf(kind === "effect" ? plainRoutes : orgplaneRoutes())
  return serve(listener, dispose)
}

interface Server {
  readonly kind: Kind
  readonly url: string
  readonly child: ChildProcess
}

const start = (kind: Kind) =>
  new Promise<Server>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@orgplane/source", "--import", "tsx", import.meta.filename, `--serve=${kind}`], {
      stdio: ["ignore", "pipe", "inherit", "ipc"]
    })
    child.once("exit", (code) => reject(new Error(`${kind} exited (${code}) before listening`)))
    let buffered = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk
      const line = buffered.split("\n").find((text) => text.startsWith("{\"url\""))
      if (line !== undefined) resolve({ kind, url: JSON.parse(line).url as string, child })
    })
  })

const cpuOf = (child: ChildProcess) =>
  new Promise<number>((resolve, reject) => {
    child.once("message", (message: { readonly cpuMicros?: number }) => (message.cpuMicros === undefined ? reject(new Error("no CPU time")) : resolve(message.cpuMicros)))
    child.send("rss")
  })

const option = (name: string, fallback: number) => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`))
  const value = given === undefined ? fallback : Number(given.slice(name.length + 3))
  return value > 0 ? value : fallback
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export const measure = async (options: { readonly seconds: number; readonly rounds: number; readonly concurrency: number }) => {
  // The database's pair only with a database to run its statement on.
  const kinds = KINDS.filter((kind) => DATABASE_URL !== undefined || PATH[kind] === "/v1/members")
  const servers = await Promise.all(kinds.map(start))
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency })
  try {
    const bodies = await Promise.all(servers.map((server) => request(agent, server.url, "GET", PATH[server.kind])))
    for (const [i, body] of bodies.entries()) {
      const raw = bodies[kinds.indexOf(RAW_OF[servers[i]!.kind])]!
      if (body.status !== 200 || body.text !== raw.text) throw new Error(`${servers[i]!.kind} answers otherwise: ${body.status} ${body.text.slice(0, 300)}`)
    }
    const once = async (server: Server, seconds: number) => {
      const before = await cpuOf(server.child)
      const { count, seconds: wall } = await loadFor(seconds, options.concurrency, async () => {
        const reply = await request(agent, server.url, "GET", PATH[server.kind])
        if (reply.status !== 200) throw new Error(`${server.kind}: HTTP ${reply.status}`)
      })
      return { perSecond: count / wall, cpu: (await cpuOf(server.child) - before) / count }
    }
    for (const server of servers) await once(server, Math.min(3, options.seconds / 2))
    const runs = servers.map((): Array<{ perSecond: number; cpu: number }> => [])
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < servers.length; k++) {
        const t = (k + round) % servers.length
        runs[t]!.push(await once(servers[t]!, options.seconds))
      }
    }
    console.log(
      `\nEffect's floor: GET /v1/members answering a page of 50 members (no database)` +
        `${DATABASE_URL === undefined ? "" : "; GET /v1/me answering one row of one Postgres statement"}, ${options.rounds} interleaved rounds of ${options.seconds} s,` +
        ` ${options.concurrency} connections; medians (ratios: the median of the rounds' paired ratios, against the endpoint's raw server)`
    )
    console.log("| endpoint | server | req/s | ÷ raw | CPU µs per request | ÷ raw |\n| --- | --- | --- | --- | --- | --- |")
    for (const [t, server] of servers.entries()) {
      const raw = runs[kinds.indexOf(RAW_OF[server.kind])]!
      const paired = (figure: (f: { perSecond: number; cpu: number }) => number) => median(runs[t]!.map((f, round) => figure(f) / figure(raw[round]!)))
      console.log(
        `| ${PATH[server.kind]} | ${server.kind} | ${median(runs[t]!.map((f) => f.perSecond)).toFixed(0)} | ${paired((f) => f.perSecond).toFixed(2)}` +
          ` | ${median(runs[t]!.map((f) => f.cpu)).toFixed(0)} | ${paired((f) => f.cpu).toFixed(2)} |`
      )
    }
  } finally {
    agent.destroy()
    for (const server of servers) server.child.kill("SIGTERM")
  }
}

const serving = process.argv.find((arg) => arg.startsWith("--serve="))?.slice("--serve=".length)
if (serving !== undefined) {
  const kind = KINDS.find((known) => known === serving)
  if (kind === undefined) throw new Error(`--serve= takes one of ${KINDS.join(", ")}`)
  await serveKind(kind)
} else if (import.meta.filename === process.argv[1]) {
  await measure({
    seconds: option("duration", 8),
    rounds: Math.round(option("rounds", 3)),
    concurrency: option("concurrency", Number(process.env.ORGPLANE_BENCH_CONCURRENCY ?? 32))
  })
}
