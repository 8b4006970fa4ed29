/**
 * A DNS client for the lookups orgplane makes itself (the SSO domain's TXT record): queries encoded with
 * `dns-packet`, sent over UDP to the configured servers in order, each with a timeout; a server that is
 * unreachable, silent, or answers SERVFAIL/REFUSED/garbage makes it ask the next. No TCP fallback: a truncated
 * answer is read as far as it goes (a verification record fits a UDP answer many times over).
 */
import { Context, Data, Duration, Effect, Layer } from "effect"
import * as DnsPacket from "dns-packet"
import * as Dgram from "node:dgram"
import * as NodeCrypto from "node:crypto"
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

export class Resolver extends Context.Tag("@orgplane/server/integrations/dns/Resolver")<Resolver, ResolverService>() {}

const RCODE_NOERROR = 0
const RCODE_SERVFAIL = 2
const RCODE_NXDOMAIN = 3
const RCODE_REFUSED = 5

const label = (server: DnsServer) => server.host.includes(":") ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`

const text = (data: DnsPacket.TxtData): string =>
  Array.isArray(data) ? data.map(text).join("") : Buffer.isBuffer(data) ? data.toString("utf8") : data

type Outcome =
  | { readonly _tag: "Answer"; readonly records: ReadonlyArray<string> }
  | { readonly _tag: "Failure"; readonly failure: ServerFailure }

/** One query to one server; never fails: a server's failure is an outcome, so the caller can go on to the next. */
const ask = (server: DnsServer, name: string, timeout: Duration.Duration, type: RecordType = "TXT"): Effect.Effect<Outcome> =>
  Effect.async<Outcome>((resume) => {
    const id = NodeCrypto.randomInt(0, 65536)
    const socket = Dgram.createSocket(server.host.includes(":") ? "udp6" : "udp4")
    let done = false
    const finish = (outcome: Outcome) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.close()
      resume(Effect.succeed(outcome))
    }
    const fail = (reason: ServerFailure["reason"], detail: string) =>
      finish({ _tag: "Failure", failure: { server: label(server), reason, detail } })
    const timer = setTimeout(() => fail("timeout", `did not answer within ${Duration.format(timeout)}`), Duration.toMillis(timeout))
    socket.on("error", (error: NodeJS.ErrnoException) =>
      fail(error.code === "ECONNREFUSED" ? "unreachable" : "error", error.code === "ECONNREFUSED" ? "refused the connection (no DNS server there)" : `failed: ${error.code ?? error.message}`))
    socket.on("message", (message) => {
      let packet: DnsPacket.DecodedPacket
      try {
        packet = DnsPacket.decode(message)
      } catch {
        return fail("malformed", "sent an answer that is not a DNS message")
      }
      // Someone else's answer (or a spoofing attempt): keep waiting for ours.
      if (packet.id !== id || packet.type !== "response") return
      const question = packet.questions?.[0]
      if (question === undefined || question.name.toLowerCase() !== name.toLowerCase()) return
      const rcode = (packet.flags ?? 0) & 0xf
      if (rcode === RCODE_SERVFAIL) return fail("servfail", "answered SERVFAIL")
      if (rcode === RCODE_REFUSED) return fail("refused", "answered REFUSED")
      if (rcode === RCODE_NXDOMAIN) return finish({ _tag: "Answer", records: [] })
      if (rcode !== RCODE_NOERROR) return fail("error", `answered with response code ${rcode}`)
      const records = (packet.answers ?? []).flatMap((answer) =>
        answer.type === "TXT" && type === "TXT" && answer.name.toLowerCase() === name.toLowerCase()
          ? [text(answer.data)]
          // Addresses: the recursive answer may reach them through CNAMEs, so their owner name is not checked.
          : (answer.type === "A" || answer.type === "AAAA") && answer.type === type
          ? [answer.data]
          : []
      )
      finish({ _tag: "Answer", records })
    })
    // Connected, so an ICMP "port unreachable" surfaces as ECONNREFUSED instead of a silent timeout.
    socket.connect(server.port, server.host, () => {
      const query = DnsPacket.encode({
        type: "query",
        id,
        flags: DnsPacket.RECURSION_DESIRED,
        questions: [{ type, name }]
      })
      socket.send(query, (error) => {
        if (error) fail("error", `could not be sent the query: ${(error as NodeJS.ErrnoException).code ?? error.message}`)
      })
    })
    return Effect.sync(() => {
      if (!done) {
        done = true
        clearTimeout(timer)
        socket.close()
      }
    })
  })

export const make = Effect.gen(function*() {
  const config = yield* DnsConfig
  const lookup = (name: string, type: RecordType) =>
    Effect.gen(function*() {
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
  return Resolver.of({ txt, addresses })
})

export const layer = Layer.effect(Resolver, make)

/** The outbound guard's resolver answered by this one (the server uses it when `ORGPLANE_DNS_SERVERS` is set). */
export const addressResolverLayer = Layer.effect(
  AddressResolver,
  Effect.map(Resolver, (dns) => ({
    resolve: (host: string) => dns.addresses(host).pipe(Effect.mapError((error) => new ResolveError({ host, detail: error.message })))
  }))
)
