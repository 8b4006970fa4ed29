/**
 * The DNS client against the testkit's DNS server on loopback: a name that does not exist or has no record of the
 * type answers none; a server that fails (SERVFAIL, REFUSED, silence, a dead port) is told apart from it, named with
 * what it did, and the next server is asked.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as DnsConfigModule from "../src/integrations/dns/DnsConfig.js"
import { DnsConfig } from "../src/integrations/dns/DnsConfig.js"
import { type DnsLookupError, Resolver } from "../src/integrations/dns/Resolver.js"

let dns: FakeDns.FakeDns
let other: FakeDns.FakeDns
let dead: FakeDns.FakeDns
beforeAll(async () => {
  ;[dns, other, dead] = await Promise.all([FakeDns.start(), FakeDns.start(), FakeDns.start()])
  await dead.stop()
})
afterAll(async () => {
  await Promise.all([dns.stop(), other.stop()])
})

const server = (address: string) => {
  const [host, port] = address.split(":")
  return { host: host!, port: Number(port) }
}

/** Runs `use` with a resolver asking `addresses` in order, each for at most `timeout`. */
const withResolver = <A, E>(addresses: ReadonlyArray<string>, use: (resolver: Resolver["Service"]) => Effect.Effect<A, E>, timeout: Duration.Input = "2 seconds") =>
  Effect.runPromise(
    Effect.flatMap(Resolver, use).pipe(
      Effect.provide(Resolver.layer),
      Effect.provide(Layer.succeed(DnsConfig, { servers: addresses.map(server), timeout: Duration.fromInputUnsafe(timeout) }))
    )
  )

const failureOf = (result: Result.Result<unknown, DnsLookupError>) => Result.isFailure(result) ? result.failure : undefined

describe("the DNS resolver", () => {
  it("answers the TXT records of a name, none for a name that does not exist or has no TXT record", async () => {
    dns.setTxt("_orgplane.found.example", ["v=spf1 -all", "orgplane-verification=opv_1"])
    dns.setAddresses("only-addresses.example", ["192.0.2.7"])
    const [found, missing, noTxt] = await withResolver([dns.address], (resolver) =>
      Effect.all([resolver.txt("_orgplane.found.example"), resolver.txt("missing.example"), resolver.txt("only-addresses.example")]))
    expect([...found].sort()).toEqual(["orgplane-verification=opv_1", "v=spf1 -all"])
    expect(missing).toEqual([])
    expect(noTxt).toEqual([])
  })

  it("answers the A then AAAA addresses of a name, none for a name that does not exist", async () => {
    dns.setAddresses("both.example", ["192.0.2.8", "2001:db8::8"])
    const [both, missing] = await withResolver([dns.address], (resolver) =>
      Effect.all([resolver.addresses("both.example"), resolver.addresses("nothing-here.example")]))
    expect(both).toEqual(["192.0.2.8", "2001:db8::8"])
    expect(missing).toEqual([])
  })

  it.each([["SERVFAIL", "servfail", "answered SERVFAIL"], ["REFUSED", "refused", "answered REFUSED"]] as const)(
    "tells a server answering %s apart from a name that does not exist",
    async (rcode, reason, detail) => {
      other.failWith(rcode)
      try {
        const result = await withResolver([other.address], (resolver) => Effect.result(resolver.txt("missing.example")))
        expect(failureOf(result)?.failures).toEqual([{ server: other.address, reason, detail }])
        expect(failureOf(result)?.message).toBe(`No DNS server answered the TXT lookup of missing.example: ${other.address} ${detail}.`)
      } finally {
        other.failWith(undefined)
      }
    }
  )

  it("names a server that never answers as timed out, having asked it once", async () => {
    const silent = await FakeDns.start()
    silent.failWith("silent")
    try {
      const result = await withResolver([silent.address], (resolver) => Effect.result(resolver.txt("quiet.example")), "200 millis")
      expect(failureOf(result)?.failures).toEqual([{ server: silent.address, reason: "timeout", detail: "did not answer within 200ms" }])
      expect(silent.queries).toEqual(["quiet.example"])
    } finally {
      await silent.stop()
    }
  })

  it("names a dead port as unreachable, and asks the servers in order until one answers", async () => {
    dns.setTxt("_orgplane.next.example", ["orgplane-verification=opv_2"])
    other.failWith("SERVFAIL")
    try {
      const answered = await withResolver([dead.address, other.address, dns.address], (resolver) => resolver.txt("_orgplane.next.example"))
      expect(answered).toEqual(["orgplane-verification=opv_2"])
      expect(other.queries.at(-1)).toBe("_orgplane.next.example")
      const failed = await withResolver([dead.address, other.address], (resolver) => Effect.result(resolver.addresses("anything.example")))
      expect(failureOf(failed)?.failures).toEqual([
        { server: dead.address, reason: "unreachable", detail: "refused the connection (no DNS server there)" },
        { server: other.address, reason: "servfail", detail: "answered SERVFAIL" }
      ])
    } finally {
      other.failWith(undefined)
    }
  })
})

describe("the DNS settings", () => {
  const read = (env: Record<string, string>, options: DnsConfigModule.Options = {}) =>
    Effect.runPromise(Effect.result(DnsConfigModule.settings(options)).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    ))

  it("documents its variables, their defaults and what they do", () => {
    expect(DnsConfigModule.environment).toEqual([
      [
        "ORGPLANE_DNS_SERVERS",
        "(the system's resolvers)",
        "DNS servers for the SSO domain check, `host[:port]` comma-separated (IPv6 as `[addr]:port`); asked in order."
      ],
      ["ORGPLANE_DNS_TIMEOUT", "2 seconds", "Longest wait for one DNS server's answer before asking the next."]
    ])
  })

  it("reads each server entry: an IP address, a port from 1 to 65535 (53 by default), IPv6 in brackets with a port", () => {
    const read: ReadonlyArray<readonly [string, { readonly host: string; readonly port: number }]> = [
      ["127.0.0.1", { host: "127.0.0.1", port: 53 }],
      ["127.0.0.1:5353", { host: "127.0.0.1", port: 5353 }],
      [" 10.0.0.2:53 ", { host: "10.0.0.2", port: 53 }],
      ["::1", { host: "::1", port: 53 }],
      ["[::1]:5353", { host: "::1", port: 5353 }],
      ["[2001:db8::1]", { host: "2001:db8::1", port: 53 }],
      ["fe80::1", { host: "fe80::1", port: 53 }],
      // What follows the port is not read.
      ["1.2.3.4:53:1", { host: "1.2.3.4", port: 53 }]
    ]
    for (const [entry, server] of read) expect(DnsConfigModule.parseServer(entry), entry).toEqual(Result.succeed(server))
    for (const entry of ["dns.example", "1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:x", "[::1]:", "[dns.example]:53", ""]) {
      expect(Result.isFailure(DnsConfigModule.parseServer(entry)), entry).toBe(true)
    }
    expect(DnsConfigModule.parseServer("[2001:db8::1]:5353")).toEqual(Result.succeed({ host: "2001:db8::1", port: 5353 }))
  })

  it("takes the environment's servers and timeout, with the options on top, and refuses what names no server", async () => {
    const fromEnv = await read({ ORGPLANE_DNS_SERVERS: "10.0.0.2, 10.0.0.3:5353", ORGPLANE_DNS_TIMEOUT: "500 millis" })
    expect(Result.isSuccess(fromEnv) && fromEnv.success).toEqual({
      servers: [{ host: "10.0.0.2", port: 53 }, { host: "10.0.0.3", port: 5353 }],
      timeout: Duration.millis(500)
    })
    const fromOptions = await read({ ORGPLANE_DNS_SERVERS: "10.0.0.2" }, { dnsServers: ["127.0.0.1:5353"], dnsTimeout: "3 seconds" })
    expect(Result.isSuccess(fromOptions) && fromOptions.success).toEqual({ servers: [{ host: "127.0.0.1", port: 5353 }], timeout: Duration.seconds(3) })
    const defaults = await read({}, { dnsServers: "127.0.0.1" })
    expect(Result.isSuccess(defaults) && Duration.toMillis(defaults.success.timeout)).toBe(2000)
    for (const [env, options, words] of [
      [{ ORGPLANE_DNS_SERVERS: " , " }, {}, "ORGPLANE_DNS_SERVERS: names no server"],
      [{}, { dnsServers: "dns.example" }, "ORGPLANE_DNS_SERVERS: \"dns.example\" is not an IP address with an optional port"],
      [{}, { dnsServers: "1.2.3.4:99999" }, "ORGPLANE_DNS_SERVERS: \"1.2.3.4:99999\" has no valid port"],
      [{ ORGPLANE_DNS_TIMEOUT: "0 millis" }, { dnsServers: "1.2.3.4" }, "ORGPLANE_DNS_TIMEOUT: must be a positive duration"],
      [{}, { dnsServers: "1.2.3.4", dnsTimeout: 0 }, "ORGPLANE_DNS_TIMEOUT: must be positive"]
    ] as const) {
      const result = await read(env, options)
      expect(Result.isFailure(result) && result.failure.message, JSON.stringify([env, options])).toContain(words)
    }
  })

  it("says whether servers were named, by the environment or the options", async () => {
    const named = (env: Record<string, string>, options: DnsConfigModule.Options = {}) =>
      Effect.runPromise(DnsConfigModule.serversNamed(options).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))))
    expect(await named({})).toBe(false)
    expect(await named({ ORGPLANE_DNS_SERVERS: "127.0.0.1" })).toBe(true)
    expect(await named({}, { dnsServers: "127.0.0.1" })).toBe(true)
  })
})
