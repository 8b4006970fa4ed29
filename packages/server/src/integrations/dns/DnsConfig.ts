/**
 * The DNS resolver's settings: which servers the SSO domain check asks (by default the system's), and how long it
 * waits for each. Environment variables, with code on top.
 */
import { Config, ConfigError, Context, Duration, Effect, Either, Layer, Option } from "effect"
import * as Dns from "node:dns"
import * as Net from "node:net"

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

export class DnsConfig extends Context.Tag("@orgplane/server/integrations/dns/DnsConfig")<DnsConfig, DnsSettings>() {}

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
  readonly dnsTimeout?: Duration.DurationInput | undefined
}

const invalid = (message: string) => ConfigError.InvalidData(["ORGPLANE_DNS_SERVERS"], message)

/** One `host[:port]` entry: an IP address (IPv6 in brackets when a port follows), port 53 by default. */
export const parseServer = (entry: string): Either.Either<DnsServer, ConfigError.ConfigError> => {
  const text = entry.trim()
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  const [host, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : Net.isIP(text) === 6
    ? [text, undefined]
    : ((parts) => [parts[0]!, parts[1]])(text.split(":"))
  if (Net.isIP(host) === 0) return Either.left(invalid(`"${text.slice(0, 100)}" is not an IP address with an optional port`))
  const number = port === undefined ? 53 : Number(port)
  if (!Number.isInteger(number) || number < 1 || number > 65535) return Either.left(invalid(`"${text.slice(0, 100)}" has no valid port`))
  return Either.right({ host, port: number })
}

/** The system's resolvers (`dns.getServers()`: /etc/resolv.conf on Linux). */
const systemServers = () => Dns.getServers()

const raw = Config.all({
  servers: Config.option(Config.string("ORGPLANE_DNS_SERVERS")).pipe(Config.map(Option.getOrUndefined)),
  timeout: Config.duration("ORGPLANE_DNS_TIMEOUT").pipe(
    Config.withDefault(defaultTimeout),
    Config.validate({ message: "must be a positive duration, for example `2 seconds`", validation: (d) => Duration.toMillis(d) > 0 })
  )
})

/**
 * Whether DNS servers were named (`ORGPLANE_DNS_SERVERS` or the option) rather than taken from the system: then the
 * outbound guard resolves through them too (tests point it at a fake DNS server).
 */
export const serversNamed = (options: Options = {}): Effect.Effect<boolean, ConfigError.ConfigError> =>
  Effect.map(raw, (env) => (options.dnsServers ?? env.servers) !== undefined)

/** The settings from the environment, with `options` on top. */
export const settings = (options: Options = {}): Effect.Effect<DnsSettings, ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const env = yield* raw
    const given = options.dnsServers ?? env.servers
    const entries = (given === undefined ? systemServers() : typeof given === "string" ? given.split(",") : given)
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "")
    if (entries.length === 0) {
      return yield* Effect.fail(invalid(given === undefined ? "the system has no DNS servers: set ORGPLANE_DNS_SERVERS" : "names no server"))
    }
    const servers = yield* Effect.all(entries.map(parseServer))
    const timeout = options.dnsTimeout === undefined ? env.timeout : Duration.decode(options.dnsTimeout)
    if (Duration.toMillis(timeout) <= 0) return yield* Effect.fail(ConfigError.InvalidData(["ORGPLANE_DNS_TIMEOUT"], "must be positive"))
    return { servers, timeout }
  })

export const layer = (options: Options = {}) => Layer.effect(DnsConfig, settings(options))
