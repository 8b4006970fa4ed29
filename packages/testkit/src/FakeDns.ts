/**
 * A DNS server on 127.0.0.1 (UDP, messages by `dns-packet`) whose TXT records tests set: point the server at it with
 * `dnsServers: dns.address`. Names without records answer NXDOMAIN; `failWith` makes it answer SERVFAIL or REFUSED,
 * or never answer (`silent`); `stop` makes the port dead (the resolver sees it refused). A and AAAA records too
 * (`setAddresses`), and a rebinding name (`rebind`): its first A answer is one address, every later one another.
 */
import * as DnsPacket from "dns-packet"
import * as Dgram from "node:dgram"
import * as Net from "node:net"

const RCODES = { SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

export interface FakeDns {
  /** `127.0.0.1:<port>`, for the `dnsServers` option. */
  readonly address: string
  readonly port: number
  /** Replaces the TXT records at `name` (no records: the name does not exist). */
  readonly setTxt: (name: string, values: ReadonlyArray<string>) => void
  /** Answers every query with this code from now on, or never answers (`silent`); undefined: answer normally. */
  readonly failWith: (rcode: "SERVFAIL" | "REFUSED" | "silent" | undefined) => void
  /** Replaces the A and AAAA records at `name` (each address goes to the type it is). */
  readonly setAddresses: (name: string, addresses: ReadonlyArray<string>) => void
  /** From now on `name`'s first A query answers `first`, every later one `then` (a DNS rebinding attack). */
  readonly rebind: (name: string, first: string, then: string) => void
  /** The names asked so far, in order. */
  readonly queries: ReadonlyArray<string>
  readonly stop: () => Promise<void>
}

export const start = async (): Promise<FakeDns> => {
  const records = new Map<string, ReadonlyArray<string>>()
  const addresses = new Map<string, ReadonlyArray<string>>()
  const rebinding = new Map<string, { readonly first: string; readonly then: string; asked: number }>()
  /** The answers to an A or AAAA question; undefined when the name has no record of any kind. */
  const addressAnswers = (name: string, type: "A" | "AAAA") => {
    const rebound = rebinding.get(name)
    if (rebound !== undefined) {
      if (type === "AAAA") return []
      rebound.asked += 1
      return [rebound.asked === 1 ? rebound.first : rebound.then]
    }
    const listed = addresses.get(name)
    return listed?.filter((address) => Net.isIP(address) === (type === "A" ? 4 : 6))
  }
  const queries: Array<string> = []
  let failure: keyof typeof RCODES | "silent" | undefined
  const socket = Dgram.createSocket("udp4")
  socket.on("message", (message, remote) => {
    let query: DnsPacket.DecodedPacket
    try {
      query = DnsPacket.decode(message)
    } catch {
      return
    }
    const question = query.questions?.[0]
    if (question === undefined) return
    queries.push(question.name)
    if (failure === "silent") return
    const name = question.name.toLowerCase()
    const values = records.get(name)
    const ips = question.type === "A" || question.type === "AAAA" ? addressAnswers(name, question.type) : undefined
    const exists = values !== undefined || addresses.has(name) || rebinding.has(name)
    const rcode = failure !== undefined ? RCODES[failure] : !exists ? RCODES.NXDOMAIN : 0
    const ipAnswers = (ips ?? []).map((address) => ({
      type: question.type as "A" | "AAAA",
      name: question.name,
      ttl: 0,
      class: "IN" as const,
      data: address
    }))
    const answer = DnsPacket.encode({
      type: "response",
      id: query.id ?? 0,
      flags: DnsPacket.RECURSION_DESIRED | DnsPacket.RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers: rcode !== 0 ? [] : question.type !== "TXT" ? ipAnswers : (values ?? []).map((value) => ({
        type: "TXT" as const,
        name: question.name,
        ttl: 60,
        class: "IN" as const,
        data: value
      }))
    })
    socket.send(answer, remote.port, remote.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve))
  const port = socket.address().port
  let stopped = false
  return {
    address: `127.0.0.1:${port}`,
    port,
    setTxt: (name, values) => {
      if (values.length === 0) records.delete(name.toLowerCase())
      else records.set(name.toLowerCase(), [...values])
    },
    failWith: (rcode) => {
      failure = rcode
    },
    setAddresses: (name, values) => {
      if (values.length === 0) addresses.delete(name.toLowerCase())
      else addresses.set(name.toLowerCase(), [...values])
    },
    rebind: (name, first, then) => {
      rebinding.set(name.toLowerCase(), { first, then, asked: 0 })
    },
    queries,
    stop: () =>
      stopped ? Promise.resolve() : new Promise<void>((resolve) => {
        stopped = true
        socket.close(() => resolve())
      })
  }
}
