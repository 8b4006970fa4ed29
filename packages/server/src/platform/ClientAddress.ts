/** The address a request came from, for per-client limits (sign-up, bootstrap, SSO discovery and start). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Net from "node:net"
import { ServerConfig } from "./Config.js"

export const clientAddress = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  const forwarded = settings.trustProxy ? request.headers["x-forwarded-for"]?.split(",")[0]?.trim() : undefined
  return forwarded || Option.getOrElse(request.remoteAddress, () => "unknown")
})

/**
 * The block an address is counted in by per-client limits that a person must not dodge by changing address: an
 * IPv4 address itself (an IPv4-mapped IPv6 one as IPv4), an IPv6 address its /64, which one subscriber usually holds
 * whole (privacy addresses change within it; an attacker with a /64 has 2^64 addresses). Anything else as it is.
 */
export const addressBlock = (address: string): string => {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  if (mapped !== null) return mapped[1]!
  const unzoned = address.split("%", 1)[0]!
  if (!Net.isIPv6(unzoned)) return address
  const [head, tail = ""] = unzoned.split("::")
  const groupsOf = (part: string) => part === "" ? [] : part.split(":").flatMap((group) => {
    if (!group.includes(".")) return [group]
    // An embedded IPv4 address is the last two groups.
    const [a, b, c, d] = group.split(".").map(Number) as [number, number, number, number]
    return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)]
  })
  const first = groupsOf(head!)
  const last = groupsOf(tail)
  const groups = unzoned.includes("::") ? [...first, ...Array(8 - first.length - last.length).fill("0"), ...last] : first
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(":")}::/64`
}
