/**
 * Which addresses a user-supplied destination may reach: the public internet only. Pure functions over the text
 * of an address (validated with `node:net`, ranges kept in `net.BlockList`s), plus the resolver the outbound
 * guard asks for a name's addresses (a Tag, so the server can answer it from its own DNS client and tests from a
 * fake DNS server).
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Dns from "node:dns"
import * as Net from "node:net"

const ipv4Ranges: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "a \"this network\" address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local (cloud metadata) address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "an IETF protocol assignment address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved or broadcast address"]
]

/** Ranges blocked whatever they embed (the embedding forms are judged by their IPv4 address, see `ipv6Reason`). */
const ipv6Ranges: ReadonlyArray<readonly [string, number, string]> = [
  ["64:ff9b:1::", 48, "a local-use NAT64 address"],
  ["100::", 64, "a discard-only address"],
  ["2001::", 32, "a Teredo address"],
  ["2001:2::", 48, "a benchmarking address"],
  ["2001:10::", 28, "an ORCHID address"],
  ["2001:20::", 28, "an ORCHIDv2 address"],
  ["2001:db8::", 32, "a documentation address"],
  ["3fff::", 20, "a documentation address"],
  ["fc00::", 7, "a unique local (private) address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"]
]

const blockList = (family: "ipv4" | "ipv6", ranges: ReadonlyArray<readonly [string, number, string]>) =>
  ranges.map(([network, prefix, reason]) => {
    const list = new Net.BlockList()
    list.addSubnet(network, prefix, family)
    return { list, reason }
  })

const ipv4Lists = blockList("ipv4", ipv4Ranges)
const ipv6Lists = blockList("ipv6", ipv6Ranges)
const globalUnicast = blockList("ipv6", [["2000::", 3, ""]])[0]!.list

/** Why an IPv4 address is not public, or undefined when it is. `address` must be a valid dotted quad. */
const ipv4Reason = (address: string): string | undefined =>
  ipv4Lists.find(({ list }) => list.check(address, "ipv4"))?.reason

/**
 * The eight 16-bit groups of a valid IPv6 address without zone (a dotted IPv4 tail becomes the last two groups,
 * `::` the missing zeros).
 */
export const ipv6Groups = (address: string): ReadonlyArray<number> => {
  let text = address.toLowerCase()
  if (text.includes(".")) {
    const cut = text.lastIndexOf(":") + 1
    const [a, b, c, d] = text.slice(cut).split(".").map(Number) as [number, number, number, number]
    text = `${text.slice(0, cut)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const parse = (part: string) => part === "" ? [] : part.split(":").map((group) => parseInt(group, 16))
  const [head, tail] = text.split("::") as [string, string | undefined]
  const first = parse(head)
  if (tail === undefined) return first
  const last = parse(tail)
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last]
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`

/** Why an IPv6 address is not public, or undefined when it is. `address` must be valid and without a zone. */
const ipv6Reason = (address: string): string | undefined => {
  const g = ipv6Groups(address)
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  const embedded = (form: string, high: number, low: number) => {
    const ipv4 = ipv4Of(high, low)
    const reason = ipv4Reason(ipv4)
    return reason === undefined ? undefined : `${form} of ${ipv4}, ${reason}`
  }
  if (zeros(0, 8)) return "the unspecified address"
  if (zeros(0, 7) && g[7] === 1) return "a loopback address"
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated): the IPv4 address is what gets reached.
  if (zeros(0, 5) && g[5] === 0xffff) return embedded("an IPv4-mapped form", g[6]!, g[7]!)
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded("an IPv4-translated form", g[6]!, g[7]!)
  if (zeros(0, 6)) return "an IPv4-compatible (deprecated) address"
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded("a NAT64 form", g[6]!, g[7]!)
  if (g[0] === 0x2002) return embedded("a 6to4 form", g[1]!, g[2]!)
  const listed = ipv6Lists.find(({ list }) => list.check(address, "ipv6"))?.reason
  if (listed !== undefined) return listed
  if (!globalUnicast.check(address, "ipv6")) return "a reserved address (outside 2000::/3)"
  return undefined
}

/**
 * Why `address` may not be reached by a user-supplied destination, or undefined when it is a public address.
 * Anything that is not a plain IPv4 or IPv6 address (a name, a zone-scoped `fe80::1%eth0`, garbage) is refused.
 * Brackets around an IPv6 address (as in a URL's host) are accepted.
 */
export const blockedReason = (address: string): string | undefined => {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
  if (bare.includes("%")) return "a zone-scoped address"
  switch (Net.isIP(bare)) {
    case 4:
      return ipv4Reason(bare)
    case 6:
      return ipv6Reason(bare)
    default:
      return "not an IP address"
  }
}

export const isPublic = (address: string) => blockedReason(address) === undefined

/** A name's addresses could not be found. */
export class ResolveError extends Data.TaggedError("ResolveError")<{ readonly host: string; readonly detail: string }> {}

export interface AddressResolverService {
  /** Every IPv4 and IPv6 address of `host` (possibly none). */
  readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>, ResolveError>
}

/** `dns.lookup` (what Node would use to connect: /etc/hosts, then the system's resolvers), every address, in order. */
export const system: AddressResolverService = {
  resolve: (host) =>
    Effect.callback<ReadonlyArray<string>, ResolveError>((resume) => {
      Dns.lookup(host, { all: true, verbatim: true }, (error, addresses) => {
        if (error) {
          const code = error.code
          resume(code === "ENOTFOUND" || code === "ENODATA" ? Effect.succeed([]) : Effect.fail(new ResolveError({ host, detail: code ?? error.message })))
        } else resume(Effect.succeed(addresses.map((entry) => entry.address)))
      })
    })
}

/**
 * Where the outbound guard asks for a name's addresses. Without one provided it uses the system's resolver
 * (`system`, also its `layer`); the server provides its own DNS client's when `ORGPLANE_DNS_SERVERS` is set.
 */
export class AddressResolver extends Context.Service<AddressResolver, AddressResolverService>()("@orgplane/server/platform/AddressGuard") {
  static readonly layer = Layer.succeed(this, system)
}

export const systemLayer = AddressResolver.layer
