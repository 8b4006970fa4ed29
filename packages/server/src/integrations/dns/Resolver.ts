/**
 * A DNS client for the lookups orgplane makes itself (the SSO domain's TXT record, and the outbound guard's addresses
 * when `ORGPLANE_DNS_SERVERS` is set): Node's `dns` `Resolver` (c-ares) pointed at one configured server at a time,
 * in order, one try each within the timeout; a server that is unreachable, silent, or answers SERVFAIL/REFUSED/garbage
 * makes it ask the next. A name that does not exist (NXDOMAIN) or has no record of the type is an answer: none.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Dns from "node:dns"
import { AddressResolver, ResolveError } from "../../platform/AddressGuard.js"
import { DnsConfig, type DnsServer } from "./DnsConfig.js"

/** What one server did instead of answering. */
export interface ServerFailure {
  readonly server: string
  readonly reason: "unreachable" | "timeout" | "servfail" | "refused" | "malformed" | "error"
  readonly detail: string
}

/** No configured server answered; `failures` says what each did, in order. */
export class DnsLookupError extends Data.TaggedError("DnsLookupError")<{
  readonly queried: string
  readonly failures: ReadonlyArray<ServerFailure>
  /** The record type asked for; TXT when not given. */
  readonly type?: RecordType | undefined
}> {
  override get message() {
    return `No DNS server answered the ${this.type ?? "TXT"} lookup of ${this.queried}: ${
      this.failures.map((failure) => `${failure.server} ${failure.detail}`).join("; ")
    }.`
  }
}

export interface ResolverService {
  /**
   * The TXT records at `name`, each record's strings joined: `[]` when the name does not exist (NXDOMAIN) or has no
   * TXT record.
   */
  readonly txt: (name: string) => Effect.Effect<ReadonlyArray<string>, DnsLookupError>
  /**
   * The IPv4 (A) then IPv6 (AAAA) addresses of `name`, for the outbound guard when `ORGPLANE_DNS_SERVERS` is set:
   * `[]` when it has none. No CNAME chasing beyond what the server's recursive answer contains.
   */
  readonly addresses: (name: string) => Effect.Effect<ReadonlyArray<string>, DnsLookupError>
}

export type RecordType = "TXT" | "A" | "AAAA"


/** `host:port`, IPv6 in brackets: how failures name a server, and the form `Resolver.setServers` takes. */
const label = (server: DnsServer) => server.host.includes(":") ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`

type Outcome =
  | { readonly _tag: "Answer"; readonly records: ReadonlyArray<string> }
  | { readonly _tag: "Failure"; readonly failure: ServerFailure }

/** What c-ares's error code says the server did (`ENOTFOUND`/`ENODATA`, an answer without records, are not here). */
const failureOf = (code: string | undefined, timeout: Duration.Duration): Pick<ServerFailure, "reason" | "detail"> => {
  switch (code) {
    case Dns.SERVFAIL:
      return { reason: "servfail", detail: "answered SERVFAIL" }
    case Dns.REFUSED:
      return { reason: "refused", detail: "answered REFUSED" }
    case Dns.TIMEOUT:
      return { reason: "timeout", detail: `did not answer within ${Duration.format(timeout)}` }
    case Dns.CONNREFUSED:
      return { reason: "unreachable", detail: "refused the connection (no DNS server there)" }
    case Dns.BADRESP:
      return { reason: "malformed", detail: "sent an answer that is not a DNS message" }
    default:
      return { reason: "error", detail: `failed: ${code ?? "unknown error"}` }
  }
}

/** The `code` of a c-ares failure (`ETIMEOUT`, `ESERVFAIL`, ...), if it has one. */
const codeOf = (error: unknown): string | undefined => {
  const code = typeof error === "object" && error !== null ? Reflect.get(error, "code") : undefined
  return typeof code === "string" ? code : undefined
}

/**
 * One query to one server, tried once within `timeout`; never fails: a server's failure is an outcome, so the caller
 * can go on to the next. A resolver of its own per query, so that interrupting it cancels this query only.
 */
const ask = (server: DnsServer, name: string, timeout: Duration.Duration, type: RecordType = "TXT"): Effect.Effect<Outcome> =>
  Effect.tryPromise({
    try: (signal) => {
      const resolver = new Dns.promises.Resolver({ timeout: Math.max(1, Duration.toMillis(timeout)), tries: 1 })
      resolver.setServers([label(server)])
      signal.addEventListener("abort", () => resolver.cancel(), { once: true })
      return type === "TXT"
        ? resolver.resolveTxt(name).then((records) => records.map((strings) => strings.join("")))
        : type === "A"
        ? resolver.resolve4(name)
        : resolver.resolve6(name)
    },
    catch: codeOf
  }).pipe(
    Effect.map((records): Outcome => ({ _tag: "Answer", records })),
    Effect.catch((code): Effect.Effect<Outcome> =>
      Effect.succeed(
        code === Dns.NOTFOUND || code === Dns.NODATA
          ? { _tag: "Answer", records: [] }
          : { _tag: "Failure", failure: { server: label(server), ...failureOf(code, timeout) } }
      )
    )
  )

const make = Effect.gen(function*() {
  const config = yield* DnsConfig
  const lookup = Effect.fn("Resolver.lookup")(function*(name: string, type: RecordType) {
    const failures: Array<ServerFailure> = []
    for (const server of config.servers) {
      const outcome = yield* ask(server, name, config.timeout, type)
      if (outcome._tag === "Answer") return outcome.records
      failures.push(outcome.failure)
    }
    return yield* new DnsLookupError({ queried: name, failures, type })
  })
  const txt = (name: string) => lookup(name, "TXT").pipe(Effect.withSpan("Resolver.txt", { attributes: { name } }))
  const addresses = (name: string) =>
    Effect.map(Effect.all([lookup(name, "A"), lookup(name, "AAAA")], { concurrency: 2 }), ([v4, v6]) => [...v4, ...v6]).pipe(
      Effect.withSpan("Resolver.addresses", { attributes: { name } })
    )
  return { txt, addresses } satisfies ResolverService
})

export class Resolver extends Context.Service<Resolver, ResolverService>()("@orgplane/server/integrations/dns/Resolver", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

export const layer = Resolver.layer

/** The outbound guard's resolver answered by this one (the server uses it when `ORGPLANE_DNS_SERVERS` is set). */
export const addressResolverLayer = Layer.effect(
  AddressResolver,
  Effect.gen(function*() {
    const dns = yield* Resolver
    return {
      resolve: (host: string) => dns.addresses(host).pipe(Effect.mapError((error) => new ResolveError({ host, detail: error.message })))
    }
  })
)
