/**
 * A TCP proxy on 127.0.0.1 in front of a database, that tests turn into a hung server (`pause`), a dead one
 * (`down`), or one whose answer to a statement never arrives (`cutAt`), to see what the server does when its
 * database misbehaves. It reads the Postgres protocol's frontend messages just enough to see statements: simple
 * queries (`Q`) and the text of prepared ones (`P`). Plain Node, no Effect: packages/server's tests
 * hold it in a scope (test/support/DatabaseProxy.ts).
 */
import * as Net from "node:net"

/** A Postgres host and port, or a unix socket path (the embedded database's `<socketDir>/.s.PGSQL.5432`). */
export type Target = { readonly host: string; readonly port: number } | { readonly path: string }

export interface DatabaseProxy {
  readonly host: "127.0.0.1"
  readonly port: number
  /** Stops forwarding in both directions; sockets stay open and bytes wait, as with a server that hangs. */
  readonly pause: () => void
  /** Forwards again, starting with what waited. */
  readonly resume: () => void
  /** Destroys every connection and refuses new ones, as with a server that died. */
  readonly down: () => Promise<void>
  /** Accepts connections again, on the same port. */
  readonly up: () => Promise<void>
  /**
   * The next statement matching `statement` (on a connection that sent one matching `after` before, when given) is
   * forwarded, unless `forward` is false, and then that connection is cut: the database runs it (a COMMIT commits)
   * but its answer never arrives. With `down`, the proxy also goes down at that moment (see `down`), so the server
   * cannot ask again. Resolves once the cut happened.
   */
  readonly cutAt: (options: CutOptions) => Promise<void>
  readonly close: () => Promise<void>
}

export interface CutOptions {
  readonly statement: RegExp
  readonly after?: RegExp | undefined
  readonly forward?: boolean | undefined
  readonly down?: boolean | undefined
}

interface Pair {
  readonly client: Net.Socket
  readonly upstream: Net.Socket
  readonly toUpstream: Array<Buffer>
  readonly toClient: Array<Buffer>
  /** Frontend bytes not yet making a whole message. */
  unread: Buffer
  /** Until the startup message: it has no type byte. */
  startup: boolean
  /** This connection sent a statement matching the pending cut's `after`. */
  armed: boolean
  cut: boolean
}

/** SSLRequest and GSSENCRequest: the client sends its startup message after the server's one-byte answer. */
const encryptionRequests = new Set([80877103, 80877104])

/** The frontend messages complete in `pair.unread` (raw bytes each), and the statement text of those that carry one. */
const readMessages = (pair: Pair): Array<{ readonly raw: Buffer; readonly text: string | undefined }> => {
  const messages: Array<{ raw: Buffer; text: string | undefined }> = []
  let data = pair.unread
  while (true) {
    const typed = !pair.startup
    const header = typed ? 5 : 4
    if (data.length < header) break
    const length = data.readInt32BE(typed ? 1 : 0) + (typed ? 1 : 0)
    if (data.length < length) break
    const raw = data.subarray(0, length)
    data = data.subarray(length)
    if (!typed) {
      pair.startup = encryptionRequests.has(raw.readInt32BE(4))
      messages.push({ raw, text: undefined })
      continue
    }
    const type = String.fromCharCode(raw[0]!)
    const payload = raw.subarray(5)
    const cstring = (at: number) => payload.subarray(at, Math.max(at, payload.indexOf(0, at))).toString("utf8")
    // Q: the query; P: the statement's name, then its query.
    const text = type === "Q" ? cstring(0) : type === "P" ? cstring(payload.indexOf(0) + 1) : undefined
    messages.push({ raw, text })
  }
  pair.unread = Buffer.from(data)
  return messages
}

const listen = (server: Net.Server, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })

const closeServer = (server: Net.Server) =>
  new Promise<void>((resolve) => {
    if (!server.listening) return resolve()
    server.close(() => resolve())
  })

export const start = async (target: Target): Promise<DatabaseProxy> => {
  const pairs = new Set<Pair>()
  let paused = false
  let pendingCut: (CutOptions & { readonly done: () => void }) | undefined

  const flush = (pair: Pair) => {
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk)
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk)
  }

  const server = Net.createServer((client) => {
    const upstream = "path" in target ? Net.connect({ path: target.path }) : Net.connect({ host: target.host, port: target.port })
    const pair: Pair = { client, upstream, toUpstream: [], toClient: [], unread: Buffer.alloc(0), startup: true, armed: false, cut: false }
    pairs.add(pair)
    const forward = (queue: Array<Buffer>, to: Net.Socket) => (chunk: Buffer) => {
      if (paused) queue.push(chunk)
      else to.write(chunk)
    }
    const toUpstream = forward(pair.toUpstream, upstream)
    client.on("data", (chunk: Buffer) => {
      if (pair.cut) return
      pair.unread = Buffer.concat([pair.unread, chunk])
      for (const { raw, text } of readMessages(pair)) {
        const cut = pendingCut
        if (cut !== undefined && text !== undefined) {
          if (cut.after?.test(text)) pair.armed = true
          if ((cut.after === undefined || pair.armed) && cut.statement.test(text)) {
            pendingCut = undefined
            return cutPair(pair, cut.forward === false ? undefined : raw, cut)
          }
        }
        toUpstream(raw)
      }
    })
    upstream.on("data", forward(pair.toClient, client))
    // Either side closing closes the other, paused or not: the peer's kernel sees it even when its process hangs.
    // A cut connection's upstream is left to end on its own, so that the database reads what was sent before the cut.
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      if (!pair.cut) upstream.destroy()
    }
    client.on("close", end)
    upstream.on("close", end)
    client.on("error", end)
    upstream.on("error", end)
  })
  await listen(server, 0)
  const port = (server.address() as Net.AddressInfo).port

  const destroyAll = () => {
    for (const pair of pairs) {
      pair.client.destroy()
      if (!pair.cut) pair.upstream.destroy()
    }
    pairs.clear()
  }

  /** Sends `last` (if any) upstream, then closes the client side at once and the upstream side gracefully. */
  function cutPair(pair: Pair, last: Buffer | undefined, cut: CutOptions & { readonly done: () => void }) {
    pair.cut = true
    const finish = () => {
      pair.client.destroy()
      pair.upstream.end()
      if (cut.down) {
        server.close()
        destroyAll()
      }
      cut.done()
    }
    if (last === undefined) finish()
    else pair.upstream.write(last, finish)
  }

  return {
    host: "127.0.0.1",
    port,
    pause: () => {
      paused = true
    },
    resume: () => {
      paused = false
      for (const pair of pairs) flush(pair)
    },
    down: async () => {
      const closed = closeServer(server)
      destroyAll()
      await closed
    },
    up: async () => {
      if (!server.listening) await listen(server, port)
    },
    cutAt: (options) =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) pair.armed = false
        pendingCut = { ...options, done: resolve }
      }),
    close: async () => {
      const closed = closeServer(server)
      destroyAll()
      await closed
    }
  }
}
