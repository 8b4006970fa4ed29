/**
 * A TCP proxy on 127.0.0.1 in front of a database, that tests turn into a hung server (`pause`): the Effect 4 form of
 * the pausing part of packages/testkit's DatabaseProxy.ts (its `down` and `cutAt` are not needed yet).
 */
import * as Effect from "effect/Effect"
import * as Net from "node:net"

/** A Postgres host and port, or a unix socket path (the embedded database's `<socketDir>/.s.PGSQL.5432`). */
export type Target = { readonly host: string; readonly port: number } | { readonly path: string }

export interface DatabaseProxy {
  readonly port: number
  /** Stops forwarding in both directions; sockets stay open and bytes wait, as with a server that hangs. */
  readonly pause: () => void
  /** Forwards again, starting with what waited. */
  readonly resume: () => void
}

interface Pair {
  readonly client: Net.Socket
  readonly upstream: Net.Socket
  readonly toUpstream: Array<Buffer>
  readonly toClient: Array<Buffer>
}

/** The proxy, closed (with every connection through it) when the scope closes. */
export const scoped = (target: Target) =>
  Effect.acquireRelease(
    Effect.promise(() => {
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
        client.on("data", (chunk) => paused ? pair.toUpstream.push(chunk) : upstream.write(chunk))
        upstream.on("data", (chunk) => paused ? pair.toClient.push(chunk) : client.write(chunk))
        const end = () => {
          pairs.delete(pair)
          client.destroy()
          upstream.destroy()
        }
        client.on("error", end).on("close", end)
        upstream.on("error", end).on("close", end)
      })
      return new Promise<{ readonly proxy: DatabaseProxy; readonly close: () => Promise<void> }>((resolve) =>
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resolve({
            proxy: {
              port,
              pause: () => {
                paused = true
              },
              resume: () => {
                paused = false
                for (const pair of pairs) flush(pair)
              }
            },
            close: () =>
              new Promise<void>((done) => {
                for (const pair of pairs) {
                  pair.client.destroy()
                  pair.upstream.destroy()
                }
                server.close(() => done())
              })
          })
        })
      )
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ proxy }) => proxy))
