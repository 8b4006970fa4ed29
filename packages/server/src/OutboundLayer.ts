/**
 * The outbound guard as the server composes it: in private mode when `ORGPLANE_OUTBOUND_ALLOW_PRIVATE` says so,
 * resolving user-supplied hosts through our DNS client when DNS servers are named (`ORGPLANE_DNS_SERVERS` or the
 * `dnsServers` option), otherwise through the system's `dns.lookup`.
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as DnsConfig from "./integrations/dns/DnsConfig.js"
import * as Resolver from "./integrations/dns/Resolver.js"
import { ServerConfig } from "./platform/Config.js"
import * as Outbound from "./platform/Outbound.js"

/**
 * The guard over node:http, its settings read when the layer is built: `ServerConfig`'s `outboundAllowPrivate`, and
 * the DNS settings (the environment with `options` on top, as `DnsConfig.layer(options)` reads them).
 */
export const OutboundLive = (options: DnsConfig.Options = {}): Layer.Layer<Outbound.Outbound, Config.ConfigError, ServerConfig> =>
  Layer.unwrap(Effect.gen(function*() {
    const config = yield* ServerConfig
    const guard = Outbound.layer({ allowPrivate: config.outboundAllowPrivate })
    if (!(yield* DnsConfig.serversNamed(options))) return guard
    return guard.pipe(Layer.provide(Resolver.addressResolverLayer), Layer.provide(Resolver.layer), Layer.provide(DnsConfig.layer(options)))
  }))
