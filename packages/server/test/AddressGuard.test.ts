/**
 * The outbound guard's block lists, range by range, as pure functions over an address's text, each refusal naming
 * the range it falls in.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AddressResolver, blockedReason, ipv6Groups, isPublic } from "../src/platform/AddressGuard.js"

/** Each range: an address inside it (first, last or typical) and the words its reason must contain. */
const expectBlocked = (cases: ReadonlyArray<readonly [string, string]>) => {
  for (const [address, words] of cases) {
    expect(blockedReason(address), address).toContain(words)
  }
}
const expectPublic = (addresses: ReadonlyArray<string>) => {
  for (const address of addresses) {
    expect(blockedReason(address), address).toBeUndefined()
  }
}

describe("IPv4", () => {
  it("refuses every non-public range, at both of its ends", () => {
    expectBlocked([
      ["0.0.0.0", "this network"],
      ["0.255.255.255", "this network"],
      ["10.0.0.0", "private"],
      ["10.255.255.255", "private"],
      ["100.64.0.0", "carrier-grade NAT"],
      ["100.127.255.255", "carrier-grade NAT"],
      ["100.100.100.200", "carrier-grade NAT"],
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["169.254.169.254", "cloud metadata"],
      ["169.254.0.1", "link-local"],
      ["172.16.0.0", "private"],
      ["172.31.255.255", "private"],
      ["192.0.0.170", "IETF protocol assignment"],
      ["192.0.2.1", "documentation"],
      ["192.168.0.1", "private"],
      ["192.168.255.255", "private"],
      ["198.18.0.0", "benchmarking"],
      ["198.19.255.255", "benchmarking"],
      ["198.51.100.7", "documentation"],
      ["203.0.113.9", "documentation"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["240.0.0.1", "reserved"],
      ["255.255.255.255", "broadcast"]
    ])
  })

  it("lets public addresses through, right next to the ranges", () => {
    expectPublic(["1.1.1.1", "8.8.8.8", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
      "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.0", "192.0.3.0", "192.167.255.255", "192.169.0.0",
      "198.17.255.255", "198.20.0.0", "198.51.99.255", "203.0.112.255", "203.0.114.0", "223.255.255.255"])
  })
})

describe("IPv6", () => {
  it("refuses the special addresses and ranges", () => {
    expectBlocked([
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["0:0:0:0:0:0:0:1", "loopback"],
      ["::2", "IPv4-compatible"],
      ["::7f00:1", "IPv4-compatible"],
      ["::8.8.8.8", "IPv4-compatible"],
      ["64:ff9b:1::1", "local-use NAT64"],
      ["100::1", "discard"],
      ["2001::1", "Teredo"],
      ["2001:2::1", "benchmarking"],
      ["2001:10::1", "ORCHID"],
      ["2001:20::1", "ORCHIDv2"],
      ["2001:db8::1", "documentation"],
      ["3fff::1", "documentation"],
      ["fc00::1", "unique local"],
      ["fd00:ec2::254", "unique local"],
      ["fdff:ffff::1", "unique local"],
      ["fe80::1", "link-local"],
      ["febf::1", "link-local"],
      ["fec0::1", "site-local"],
      ["ff02::1", "multicast"],
      ["1::1", "reserved"],
      ["4000::1", "reserved"],
      ["e000::1", "reserved"]
    ])
  })

  it("judges mapped, translated, NAT64 and 6to4 forms by the IPv4 address they embed", () => {
    expectBlocked([
      ["::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1, a loopback"],
      ["::ffff:7f00:1", "IPv4-mapped form of 127.0.0.1"],
      ["::FFFF:A9FE:A9FE", "IPv4-mapped form of 169.254.169.254"],
      ["::ffff:10.0.0.1", "private"],
      ["::ffff:0:127.0.0.1", "IPv4-translated form of 127.0.0.1"],
      ["::ffff:0:c0a8:101", "IPv4-translated form of 192.168.1.1"],
      ["64:ff9b::127.0.0.1", "NAT64 form of 127.0.0.1"],
      ["64:ff9b::a00:1", "NAT64 form of 10.0.0.1"],
      ["2002:7f00:1::", "6to4 form of 127.0.0.1"],
      ["2002:c0a8:0101::1", "6to4 form of 192.168.1.1"],
      ["2002:a9fe:a9fe:1::5", "6to4 form of 169.254.169.254"]
    ])
    expectPublic(["::ffff:8.8.8.8", "::ffff:808:808", "::ffff:0:8.8.8.8", "64:ff9b::8.8.8.8", "64:ff9b::101:101", "2002:808:808::1"])
  })

  it("lets global unicast addresses through", () => {
    expectPublic(["2606:4700:4700::1111", "2a00:1450:4001:80e::200e", "2001:4860:4860::8888", "2001:db9::1", "2003::1", "3ffe::1"])
  })

  it("reads the eight groups of any spelling", () => {
    expect(ipv6Groups("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(ipv6Groups("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0])
    expect(ipv6Groups("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304])
    expect(ipv6Groups("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(ipv6Groups("fe80::1:2")).toEqual([0xfe80, 0, 0, 0, 0, 0, 1, 2])
    expect(ipv6Groups("64:ff9b::10.0.0.1")).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0x0a00, 0x0001])
    expect(ipv6Groups("2002:c0a8:0101::1")).toEqual([0x2002, 0xc0a8, 0x0101, 0, 0, 0, 0, 1])
  })
})

describe("anything else", () => {
  it("is refused: zone-scoped, malformed, names, other spellings of IPv4", () => {
    expectBlocked([
      ["fe80::1%eth0", "zone-scoped"],
      ["[fe80::1%25eth0]", "zone-scoped"],
      ["2606:4700::1111%1", "zone-scoped"],
      ["", "not an IP address"],
      ["localhost", "not an IP address"],
      ["example.com", "not an IP address"],
      ["127.1", "not an IP address"],
      ["0x7f.0.0.1", "not an IP address"],
      ["2130706433", "not an IP address"],
      ["017700000001", "not an IP address"],
      ["1.2.3.256", "not an IP address"],
      ["1.2.3.4.5", "not an IP address"],
      ["::ffff:1.2.3", "not an IP address"],
      ["1:2:3:4:5:6:7:8:9", "not an IP address"],
      ["2001:db8:::1", "not an IP address"],
      [" 8.8.8.8", "not an IP address"]
    ])
  })

  it("accepts a bracketed IPv6 address as a URL writes it", () => {
    expect(blockedReason("[::1]")).toContain("loopback")
    expect(isPublic("[2606:4700:4700::1111]")).toBe(true)
  })
})

describe("the system resolver", () => {
  it.effect("answers what dns.lookup answers (/etc/hosts first): localhost is loopback", () =>
    Effect.gen(function*() {
      const resolver = yield* AddressResolver
      const addresses = yield* resolver.resolve("localhost")
      expect(addresses.length).toBeGreaterThan(0)
      for (const address of addresses) expect(blockedReason(address), address).toContain("loopback")
    }).pipe(Effect.provide(AddressResolver.layer)))
})
