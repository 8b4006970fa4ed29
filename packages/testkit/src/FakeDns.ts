/**
 * A DNS server on 127.0.0.1 (UDP, messages by `dns-packet`) whose TXT records tests set: point the server at it with
 * `dnsServers: dns.address`. Names without records answer NXDOMAIN; `failWith` makes it answer SERVFAIL or REFUSED,
 * or never answer (`silent`); `stop` makes the port dead (the resolver sees it refused).
 */
import * as DnsPacket from "dns-packet"
import * as Dgram from "node:dgram"

const RCODES = { SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

export interface FakeDns {
  /** `127.0.0.1:<port>`, for the `dnsServers` option. */
  readonly address: string
  readonly port: number
  /** Replaces the TXT records at `name` (no records: the name does not exist). */
  readonly setTxt: (name: string, values: ReadonlyArray<string>) => void
  /** Answers every query with this code from now on, or never answers (`silent`); undefined: answer normally. */
  readonly failWith: (rcode: "SERVFAIL" | "REFUSED" | "silent" | undefined) => void
  /** The names asked so far, in order. */
  readonly queries: ReadonlyArray<string>
  readonly stop: () => Promise<void>
}

export const start = async (): Promise<FakeDns> => {
  const records = new Map<string, ReadonlyArray<string>>()
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
    const values = records.get(question.name.toLowerCase())
    const rcode = failure !== undefined ? RCODES[failure] : values === undefined ? RCODES.NXDOMAIN : 0
    const answer = DnsPacket.encode({
      type: "response",
      id: query.id ?? 0,
      flags: DnsPacket.RECURSION_DESIRED | DnsPacket.RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers: rcode !== 0 || question.type !== "TXT" ? [] : (values ?? []).map((value) => ({
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
    queries,
    stop: () =>
      stopped ? Promise.resolve() : new Promise<void>((resolve) => {
        stopped = true
        socket.close(() => resolve())
      })
  }
}
