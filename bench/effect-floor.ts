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
 * Interleaved rounds (`--rounds=N`, default 3) of `--duration=S` seconds (default 8) at ORGPLANE_BENCH_CONCURRENCY
 * connections (default 32); medians of req/s and the server's CPU per request, and each against raw. Asserts nothing
 * but that the three answer the same JSON.
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
  const platform = await serverDependencies(Path.join(import.meta.dirname, "..", "packages", "server"))("@effect/platform-node")
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

// The harness ------------------------------------------------------------------------------------------------------

const KINDS = ["raw", "effect", "effect + orgplane's schema"] as const
type Kind = typeof KINDS[number]

const serveKind = async (kind: Kind) => {
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
  const servers = await Promise.all(KINDS.map(start))
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency })
  try {
    const bodies = await Promise.all(servers.map((server) => request(agent, server.url, "GET", "/v1/members")))
    for (const [i, body] of bodies.entries()) {
      if (body.status !== 200 || body.text !== bodies[0]!.text) throw new Error(`${servers[i]!.kind} answers otherwise: ${body.status} ${body.text.slice(0, 300)}`)
    }
    const once = async (server: Server, seconds: number) => {
      const before = await cpuOf(server.child)
      const { count, seconds: wall } = await loadFor(seconds, options.concurrency, async () => {
        const reply = await request(agent, server.url, "GET", "/v1/members")
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
      `\nEffect's floor: GET /v1/members answering a page of 50 members (no database), ${options.rounds} interleaved rounds of ${options.seconds} s,` +
        ` ${options.concurrency} connections; medians (ratios: the median of the rounds' paired ratios)`
    )
    console.log("| server | req/s | ÷ raw | CPU µs per request | ÷ raw |\n| --- | --- | --- | --- | --- |")
    for (const [t, server] of servers.entries()) {
      const paired = (figure: (f: { perSecond: number; cpu: number }) => number) => median(runs[t]!.map((f, round) => figure(f) / figure(runs[0]![round]!)))
      console.log(
        `| ${server.kind} | ${median(runs[t]!.map((f) => f.perSecond)).toFixed(0)} | ${paired((f) => f.perSecond).toFixed(2)}` +
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
