/**
 * A TCP proxy on 127.0.0.1 in front of a database, that tests turn into a hung server (`pause`), a stopped one
 * (`freeze`, as with SIGSTOP, at once or at a statement), a dead one (`down`), or one whose answer to a statement
 * never arrives (`cutAt`), to see what the server does when its
 * database misbehaves. It reads the Postgres protocol's frontend messages just enough to see statements: simple
 * queries (`Q`), the text of prepared ones (`P`), and the statement a `Bind` (`B`) runs, by its name (a driver that
 * prepares its statements parses each once per connection, and later runs it by name alone). Plain Node, no Effect:
 * packages/server's tests hold it in a scope (test/support/DatabaseProxy.ts).
 */
import * as Net from "node:net"

/** A Postgres host and port, or a unix socket path (the embedded database's `<socketDir>/.s.PGSQL.5432`). */
export type Target = { readonly host: string; readonly port: number } | { readonly path: string }

export interface DatabaseProxy {
  readonly host: "127.0.0.1"
  readonly port: number
  /** Stops forwarding in both directions; sockets stay open and bytes wait, as with a server that hangs. */
  readonly pause: () => void
  /**
   * As a stopped database (SIGSTOP): `pause`, but what a client sent before it gave up and closed its connection
   * still reaches the database on `resume` and runs there (a stopped server's kernel holds those bytes; its process
   * reads them when it continues), its answer going nowhere. With `at`, from the next statement matching it on,
   * that statement included. Resolves once frozen.
   */
  readonly freeze: (options?: { readonly at?: RegExp | undefined }) => Promise<void>
  /** Forwards again, starting with what waited (after `freeze`, also what closed connections sent). */
  readonly resume: () => void
  /** Destroys every connection and refuses new ones, as with a server that died. */
  readonly down: () => Promise<void>
  /** Accepts connections again, on the same port. */
  readonly up: () => Promise<void>
  /**
   * The next statement matching `statement` (on a connection that sent one matching `after` before, when given) is
   * forwarded, unless `forward` is false, and then that connection is cut: the database runs it (a COMMIT commits)
   * but its answer never arrives. Forwarded, the statement goes with the rest of its cycle (up to `Sync`), and the
   * database's side of the connection ends only once it answered (an embedded database's socket server drops what
   * a closed connection left unread). With `down`, the proxy also goes down at that moment (see `down`), so the
   * server cannot ask again. Resolves once the cut happened.
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
  /** The text of the statements this connection prepared, by name (`""`, the unnamed one, is the last unnamed). */
  readonly statements: Map<string, string>
  /** This connection sent a statement matching the pending cut's `after`. */
  armed: boolean
  /** The cut matched a statement of an extended-query cycle: the rest of the cycle, up to `Sync`, goes with it. */
  cutting: (CutOptions & { readonly done: () => void }) | undefined
  cut: boolean
  /** The database's answer after the cut: its side ends once the answer is whole (`ReadyForQuery`). */
  answer: Buffer
  /** Closed by its client while frozen: its database side waits for `resume` to get what the client sent. */
  held: boolean
}

/** Whether `data`, the backend's messages from a message boundary on, holds a whole `ReadyForQuery` (`Z`). */
const answered = (data: Buffer) => {
  for (let at = 0; at + 5 <= data.length; at += 1 + data.readInt32BE(at + 1)) {
    if (data[at] === 0x5a && at + 1 + data.readInt32BE(at + 1) <= data.length) return true
  }
  return false
}

/** SSLRequest and GSSENCRequest: the client sends its startup message after the server's one-byte answer. */
const encryptionRequests = new Set([80877103, 80877104])

/**
 * The frontend messages complete in `pair.unread` (raw bytes and type each), and the statement text of those that
 * carry or run one.
 */
const readMessages = (pair: Pair): Array<{ readonly raw: Buffer; readonly type: string; readonly text: string | undefined }> => {
  const messages: Array<{ raw: Buffer; type: string; text: string | undefined }> = []
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
      messages.push({ raw, type: "", text: undefined })
      continue
    }
    const type = String.fromCharCode(raw[0]!)
    const payload = raw.subarray(5)
    const cstring = (at: number) => payload.subarray(at, Math.max(at, payload.indexOf(0, at))).toString("utf8")
    // Q: the query; P: the statement's name, then its query; B: the portal's name, then the statement's.
    let text: string | undefined = undefined
    if (type === "Q") text = cstring(0)
    else if (type === "P") {
      text = cstring(payload.indexOf(0) + 1)
      pair.statements.set(cstring(0), text)
    } else if (type === "B") text = pair.statements.get(cstring(payload.indexOf(0) + 1))
    messages.push({ raw, type, text })
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
  /** Paused as a stopped database: see `freeze`. */
  let frozen = false
  let pendingFreeze: { readonly statement: RegExp; readonly done: () => void } | undefined
  /** Frozen connections their clients closed: what they sent reaches the database on `resume`. */
  const held = new Set<Pair>()
  let pendingCut: (CutOptions & { readonly done: () => void }) | undefined
  /** The database's side of cut connections, waiting for its answer: ended by `close` at the latest. */
  const lingering = new Set<Net.Socket>()

  const flush = (pair: Pair) => {
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk)
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk)
  }

  const server = Net.createServer((client) => {
    const upstream = "path" in target ? Net.connect({ path: target.path }) : Net.connect({ host: target.host, port: target.port })
    const pair: Pair = {
      client,
      upstream,
      toUpstream: [],
      toClient: [],
      unread: Buffer.alloc(0),
      startup: true,
      statements: new Map(),
      armed: false,
      cutting: undefined,
      cut: false,
      answer: Buffer.alloc(0),
      held: false
    }
    pairs.add(pair)
    const forward = (queue: Array<Buffer>, to: Net.Socket) => (chunk: Buffer) => {
      if (paused) queue.push(chunk)
      else to.write(chunk)
    }
    const toUpstream = forward(pair.toUpstream, upstream)
    client.on("data", (chunk: Buffer) => {
      if (pair.cut) return
      pair.unread = Buffer.concat([pair.unread, chunk])
      const sent: Array<Buffer> = []
      for (const { raw, type, text } of readMessages(pair)) {
        if (pair.cutting !== undefined) {
          sent.push(raw)
          if (type === "S") return cutPair(pair, sent, pair.cutting)
          continue
        }
        const freezing = pendingFreeze
        if (freezing !== undefined && text !== undefined && freezing.statement.test(text)) {
          pendingFreeze = undefined
          paused = true
          frozen = true
          freezing.done()
        }
        const cut = pendingCut
        if (cut !== undefined && text !== undefined) {
          if (cut.after?.test(text)) pair.armed = true
          if ((cut.after === undefined || pair.armed) && cut.statement.test(text)) {
            pendingCut = undefined
            if (cut.forward === false) return cutPair(pair, undefined, cut)
            sent.push(raw)
            // A simple query is a cycle of its own; an extended one ends with `Sync`.
            if (type === "Q") return cutPair(pair, sent, cut)
            pair.cutting = cut
            continue
          }
        }
        toUpstream(raw)
      }
      for (const raw of sent) toUpstream(raw)
    })
    const toClient = forward(pair.toClient, client)
    upstream.on("data", (chunk: Buffer) => {
      if (!pair.cut) return toClient(chunk)
      if (pair.held) return
      pair.answer = Buffer.concat([pair.answer, chunk])
      if (answered(pair.answer)) upstream.end()
    })
    // Either side closing closes the other, paused or not: the peer's kernel sees it even when its process hangs.
    // A cut connection's upstream is left to end on its own, so that the database reads what was sent before the cut.
    const end = () => {
      if (frozen && !pair.cut && client.destroyed && !upstream.destroyed) {
        // The client gave up on a stopped database: what it sent waits for `resume` (see `freeze`).
        pairs.delete(pair)
        pair.cut = true
        pair.held = true
        held.add(pair)
        lingering.add(upstream)
        upstream.once("close", () => lingering.delete(upstream))
        return
      }
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

  /**
   * Sends `last` (if any) upstream, then closes the client side at once and the upstream side gracefully: at once
   * when nothing was sent, else once the database answered it.
   */
  function cutPair(pair: Pair, last: ReadonlyArray<Buffer> | undefined, cut: CutOptions & { readonly done: () => void }) {
    pair.cut = true
    pair.cutting = undefined
    if (last !== undefined) {
      lingering.add(pair.upstream)
      pair.upstream.once("close", () => lingering.delete(pair.upstream))
    }
    const finish = () => {
      pair.client.destroy()
      if (last === undefined) pair.upstream.end()
      if (cut.down) {
        server.close()
        destroyAll()
      }
      cut.done()
    }
    if (last === undefined) finish()
    else pair.upstream.write(Buffer.concat(last), finish)
  }

  return {
    host: "127.0.0.1",
    port,
    pause: () => {
      paused = true
    },
    freeze: (options = {}) =>
      new Promise<void>((resolve) => {
        if (options.at === undefined) {
          paused = true
          frozen = true
          return resolve()
        }
        pendingFreeze = { statement: options.at, done: resolve }
      }),
    resume: () => {
      paused = false
      frozen = false
      for (const pair of pairs) flush(pair)
      // What clients sent before closing their frozen connections runs now; each database side ends once answered.
      for (const pair of held) {
        held.delete(pair)
        pair.held = false
        pair.answer = Buffer.alloc(0)
        const sent = pair.toUpstream.splice(0)
        if (sent.length === 0) pair.upstream.end()
        else pair.upstream.write(Buffer.concat(sent))
      }
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
      for (const upstream of lingering) upstream.destroy()
      await closed
    }
  }
}
