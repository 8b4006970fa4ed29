/**
 * The DNS resolver's settings: which servers the SSO domain check asks (by default the system's), and how long it
 * waits for each. Environment variables, with code on top.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Dns from "node:dns"
import * as Net from "node:net"
import { invalidSetting } from "../../platform/Config.js"

export interface DnsServer {
  readonly host: string
  readonly port: number
}

export interface DnsSettings {
  /** Asked in order: the next one when one fails (unreachable, timeout, SERVFAIL, REFUSED). Never empty. */
  readonly servers: ReadonlyArray<DnsServer>
  /** Longest wait for one server's answer. */
  readonly timeout: Duration.Duration
}

export class DnsConfig extends Context.Service<DnsConfig, DnsSettings>()("@orgplane/server/integrations/dns/DnsConfig") {}

export const defaultTimeout = Duration.seconds(2)

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_DNS_SERVERS", "(the system's resolvers)", "DNS servers for the SSO domain check, `host[:port]` comma-separated (IPv6 as `[addr]:port`); asked in order."],
  ["ORGPLANE_DNS_TIMEOUT", "2 seconds", "Longest wait for one DNS server's answer before asking the next."]
] as const

/** Settings given in code (tests, an embedding host); `undefined` keeps the environment's. */
export interface Options {
  /** `"127.0.0.1:5353"`, `"10.0.0.2,10.0.0.3:53"`, or a list of such entries. */
  readonly dnsServers?: string | ReadonlyArray<string> | undefined
  readonly dnsTimeout?: Duration.Input | undefined
}

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalidAt = invalidSetting

const invalid = (message: string) => invalidAt("ORGPLANE_DNS_SERVERS", message)

/** One `host[:port]` entry: an IP address (IPv6 in brackets when a port follows), port 53 by default. */
export const parseServer = (entry: string): Result.Result<DnsServer, Config.ConfigError> => {
  const text = entry.trim()
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  const [host, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : Net.isIP(text) === 6
    ? [text, undefined]
    : ((parts) => [parts[0]!, parts[1]])(text.split(":"))
  if (Net.isIP(host) === 0) return Result.fail(invalid(`"${text.slice(0, 100)}" is not an IP address with an optional port`))
  const number = port === undefined ? 53 : Number(port)
  if (!Number.isInteger(number) || number < 1 || number > 65535) return Result.fail(invalid(`"${text.slice(0, 100)}" has no valid port`))
  return Result.succeed({ host, port: number })
}

/** The system's resolvers (`dns.getServers()`: /etc/resolv.conf on Linux). */
const systemServers = () => Dns.getServers()

const raw = Config.all({
  servers: Config.option(Config.String("ORGPLANE_DNS_SERVERS")).pipe(Config.map(Option.getOrUndefined)),
  timeout: Config.mapEffect(
    Config.Duration("ORGPLANE_DNS_TIMEOUT").pipe(Config.withDefault(defaultTimeout)),
    (timeout) =>
      Duration.toMillis(timeout) > 0
        ? Effect.succeed(timeout)
        : Effect.fail(invalidAt("ORGPLANE_DNS_TIMEOUT", "must be a positive duration, for example `2 seconds`"))
  )
})

/**
 * Whether DNS servers were named (`ORGPLANE_DNS_SERVERS` or the option) rather than taken from the system: then the
 * outbound guard resolves through them too (tests point it at a fake DNS server).
 */
export const serversNamed = (options: Options = {}): Effect.Effect<boolean, Config.ConfigError> =>
  Effect.map(raw, (env) => (options.dnsServers ?? env.servers) !== undefined)

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("DnsConfig.settings")(function*(options: Options = {}) {
  const env = yield* raw
  const given = options.dnsServers ?? env.servers
  const entries = (given === undefined ? systemServers() : typeof given === "string" ? given.split(",") : given)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length === 0) {
    return yield* Effect.fail(invalid(given === undefined ? "the system has no DNS servers: set ORGPLANE_DNS_SERVERS" : "names no server"))
  }
  const servers = yield* Effect.forEach(entries, (entry) => Effect.fromResult(parseServer(entry)))
  const timeout = options.dnsTimeout === undefined ? env.timeout : Duration.fromInputUnsafe(options.dnsTimeout)
  if (Duration.toMillis(timeout) <= 0) return yield* Effect.fail(invalidAt("ORGPLANE_DNS_TIMEOUT", "must be positive"))
  return { servers, timeout } satisfies DnsSettings
})

export const layer = (options: Options = {}) => Layer.effect(DnsConfig, settings(options))
