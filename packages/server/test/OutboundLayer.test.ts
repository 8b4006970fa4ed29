/**
 * The guard as the server composes it (`OutboundLive`): private mode from `ORGPLANE_OUTBOUND_ALLOW_PRIVATE`, and
 * user-supplied hosts resolved through the DNS servers named (here the testkit's fake DNS server on loopback), by
 * the environment or the options, else through the system's `dns.lookup`. Real servers on loopback, as the server
 * would reach them.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { HttpClientRequest } from "effect/http"
import * as Layer from "effect/Layer"
import * as Dns from "node:dns"
import * as Http from "node:http"
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import type * as DnsConfig from "../src/integrations/dns/DnsConfig.js"
import * as Config from "../src/platform/Config.js"
import * as Outbound from "../src/platform/Outbound.js"
import { OutboundLive } from "../src/OutboundLayer.js"

let dns: FakeDns.FakeDns
let server: Http.Server
let port: number
/** Where the system's resolver sends `localhost` first: the address the guard pins a connection to `localhost` to. */
let localhost: string
beforeAll(async () => {
  dns = await FakeDns.start()
  const [first] = await Dns.promises.lookup("localhost", { all: true, verbatim: true })
  if (first === undefined) throw new Error("localhost has no address here")
  localhost = first.address
  server = Http.createServer((request, response) => response.end(`reached ${request.headers.host}`))
  await new Promise<void>((resolve) => server.listen(0, localhost, resolve))
  port = (server.address() as { port: number }).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await dns.stop()
})

/** `execute` of `url` as a user-supplied destination, through `OutboundLive(options)` built under `env` alone. */
const user = (url: string, env: Record<string, string>, options: DnsConfig.Options = {}) =>
  Effect.runPromise(
    Effect.flatMap(Outbound.Outbound, (outbound) => Effect.result(outbound.execute(HttpClientRequest.get(url), { destination: "user", timeout: "5 seconds" }))).pipe(
      Effect.provide(OutboundLive(options).pipe(Layer.provide(Config.layer()))),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )
  )

const text = (body: Uint8Array) => new TextDecoder().decode(body)

describe("OutboundLive", () => {
  it("refuses a loopback destination unless ORGPLANE_OUTBOUND_ALLOW_PRIVATE is set", async () => {
    const strict = await user(`http://localhost:${port}/`, {})
    expect(strict._tag === "Failure" && strict.failure).toMatchObject({ reason: "blocked", message: "The outbound URL is not allowed: https is required" })
    const literal = await user(`https://127.0.0.1:${port}/`, {})
    expect(literal._tag === "Failure" && literal.failure.message).toBe("The outbound URL is not allowed: 127.0.0.1 is a loopback address")
    const open = await user(`http://localhost:${port}/open`, { ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
    expect(open._tag === "Success" && [open.success.status, text(open.success.body)]).toEqual([200, `reached localhost:${port}`])
  })

  it("resolves through the DNS servers named by the option, and only through them", async () => {
    dns.setAddresses("only-here.example", [localhost])
    const asked = dns.queries.length
    const reached = await user(`http://only-here.example:${port}/`, { ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" }, { dnsServers: dns.address })
    expect(reached._tag === "Success" && text(reached.success.body)).toBe(`reached only-here.example:${port}`)
    expect(dns.queries.slice(asked)).toEqual(["only-here.example", "only-here.example"])
    // The fake server knows no `localhost`: the system's answer is not used.
    const unknown = await user(`http://localhost:${port}/`, { ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" }, { dnsServers: dns.address })
    expect(unknown._tag === "Failure" && unknown.failure).toMatchObject({ reason: "network", message: "localhost has no address" })
  })

  it("resolves through the DNS servers ORGPLANE_DNS_SERVERS names, and refuses what they answer when it is not public", async () => {
    dns.setAddresses("from-env.example", [localhost])
    const reached = await user(`http://from-env.example:${port}/`, { ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true", ORGPLANE_DNS_SERVERS: dns.address })
    expect(reached._tag === "Success" && text(reached.success.body)).toBe(`reached from-env.example:${port}`)
    const refused = await user(`https://from-env.example:${port}/`, { ORGPLANE_DNS_SERVERS: dns.address })
    expect(refused._tag === "Failure" && refused.failure.message).toMatch(/^The outbound URL is not allowed: from-env\.example resolves to .*, a loopback address$/)
  })

  it("refuses DNS settings that name no usable server when the layer is built", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.flatMap(Outbound.Outbound, () => Effect.void).pipe(
        Effect.provide(OutboundLive({ dnsServers: "dns.example" }).pipe(Layer.provide(Config.layer()))),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
      )
    )
    expect(exit._tag === "Failure" && String(exit.cause)).toContain("ORGPLANE_DNS_SERVERS: \"dns.example\" is not an IP address with an optional port")
  })
})
