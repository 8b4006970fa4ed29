/**
 * The DNS client against the testkit's DNS server on loopback: a name that does not exist or has no record of the
 * type answers none; a server that fails (SERVFAIL, REFUSED, silence, a dead port) is told apart from it, named with
 * what it did, and the next server is asked.
 */
import { FakeDns } from "@orgplane/testkit"
import { Duration, Effect, Either, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DnsConfig } from "../src/integrations/dns/DnsConfig.js"
import { type DnsLookupError, make, Resolver } from "../src/integrations/dns/Resolver.js"

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
const withResolver = <A, E>(addresses: ReadonlyArray<string>, use: (resolver: Resolver["Type"]) => Effect.Effect<A, E>, timeout = "2 seconds") =>
  Effect.runPromise(
    Effect.flatMap(Resolver, use).pipe(
      Effect.provide(Layer.effect(Resolver, make)),
      Effect.provide(Layer.succeed(DnsConfig, { servers: addresses.map(server), timeout: Duration.decode(timeout as Duration.DurationInput) }))
    )
  )

const failureOf = (result: Either.Either<unknown, DnsLookupError>) => Either.isLeft(result) ? result.left : undefined

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
        const result = await withResolver([other.address], (resolver) => Effect.either(resolver.txt("missing.example")))
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
      const result = await withResolver([silent.address], (resolver) => Effect.either(resolver.txt("quiet.example")), "200 millis")
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
      const failed = await withResolver([dead.address, other.address], (resolver) => Effect.either(resolver.addresses("anything.example")))
      expect(failureOf(failed)?.failures).toEqual([
        { server: dead.address, reason: "unreachable", detail: "refused the connection (no DNS server there)" },
        { server: other.address, reason: "servfail", detail: "answered SERVFAIL" }
      ])
    } finally {
      other.failWith(undefined)
    }
  })
})
