/**
 * A TCP proxy on 127.0.0.1 in front of a database, that tests turn into a hung server (`pause`) or a dead one
 * (`down`), to see what the server does when its database misbehaves.
 */
import { Effect } from "effect"
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
  readonly close: () => Promise<void>
}

interface Pair {
  readonly client: Net.Socket
  readonly upstream: Net.Socket
  readonly toUpstream: Array<Buffer>
  readonly toClient: Array<Buffer>
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

  const flush = (pair: Pair) => {
    for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk)
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk)
  }

  const server = Net.createServer((client) => {
    const upstream = "path" in target ? Net.connect({ path: target.path }) : Net.connect({ host: target.host, port: target.port })
    const pair: Pair = { client, upstream, toUpstream: [], toClient: [] }
    pairs.add(pair)
    const forward = (queue: Array<Buffer>, to: Net.Socket) => (chunk: Buffer) => {
      if (paused) queue.push(chunk)
      else to.write(chunk)
    }
    client.on("data", forward(pair.toUpstream, upstream))
    upstream.on("data", forward(pair.toClient, client))
    // Either side closing closes the other, paused or not: the peer's kernel sees it even when its process hangs.
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
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
      pair.upstream.destroy()
    }
    pairs.clear()
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
    close: async () => {
      const closed = closeServer(server)
      destroyAll()
      await closed
    }
  }
}

/** The proxy for the duration of a scope. */
export const scoped = (target: Target) => Effect.acquireRelease(Effect.promise(() => start(target)), (proxy) => Effect.promise(proxy.close))
