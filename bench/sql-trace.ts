/**
 * What SQL a server runs, seen on the wire: a TCP proxy in front of Postgres that reads the frontend's messages as
 * they pass (nothing is changed) and keeps, in order, the text of each simple Query and of each statement bound for
 * execution (Bind, named or unnamed, with the text its Parse gave it: a statement prepared once and run many times
 * is seen each time), with the parameter types its Parse named and the frontend messages of its cycle (`PBDES`: Parse,
 * Bind, Describe, Execute, Sync; `Q` a simple query). For `pnpm bench --requests --verify` (requests.ts): each server
 * is started on its own proxy, one request of each endpoint is sent to each, and what they ran is compared. Only for
 * that check: the extra hop through this process would distort any measurement.
 */
import { connect, createServer, type Socket } from "node:net"

export interface Statement {
  /** Which client connection sent it (its order of arrival). */
  readonly connection: number
  readonly text: string
  /** Run by name: a statement prepared once on its connection (else unnamed, or a simple query). */
  readonly named: boolean
  /** The parameter types (OIDs, 0: left to the backend) its Parse named. */
  readonly types: ReadonlyArray<number>
  /** The frontend messages of its cycle up to its Sync, one letter each (`P` Parse, `B` Bind, `D` Describe, `E` Execute, `S` Sync, `C` Close, `Q` a simple query). */
  messages: string
}

export interface SqlTrace {
  /** The database URL to give the server: this proxy's address, the rest as given. */
  readonly url: string
  /** Everything seen so far, in order. */
  readonly statements: ReadonlyArray<Statement>
  readonly close: () => Promise<void>
}

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104

/** Reads the frontend's messages from a stream of chunks, calling `onStatement` with the text of each one run. */
const frontendReader = (onStatement: (text: string, named: boolean, types: ReadonlyArray<number>) => { messages: string }) => {
  let buffered: Buffer = Buffer.alloc(0)
  /** The connection's prepared statements by name (the unnamed one under ""), with their parameter types. */
  const prepared = new Map<string, { readonly text: string; readonly types: ReadonlyArray<number> }>()
  /** The messages of the cycle under way, and the statement it binds. */
  let cycle = ""
  let bound: { messages: string } | undefined
  /** The startup packet (no type byte) comes first, and again after a refused SSL or GSS request. */
  let startup = true
  return (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
    for (;;) {
      if (startup) {
        if (buffered.length < 8) return
        const length = buffered.readInt32BE(0)
        if (buffered.length < length) return
        const code = buffered.readInt32BE(4)
        startup = code === SSL_REQUEST || code === GSS_REQUEST
        buffered = buffered.subarray(length)
        continue
      }
      if (buffered.length < 5) return
      const type = String.fromCharCode(buffered[0]!)
      const length = buffered.readInt32BE(1)
      if (buffered.length < 1 + length) return
      const body = buffered.subarray(5, 1 + length)
      cycle += type
      if (type === "Q") {
        onStatement(body.subarray(0, body.indexOf(0)).toString("utf8"), false, []).messages = "Q"
        cycle = ""
      } else if (type === "P") {
        // Parse: the statement's name ("" unnamed), its text and its parameter types; it runs when bound.
        const nameEnd = body.indexOf(0)
        const textEnd = body.indexOf(0, nameEnd + 1)
        const count = body.readInt16BE(textEnd + 1)
        const types = Array.from({ length: count }, (_, i) => body.readInt32BE(textEnd + 3 + 4 * i))
        prepared.set(body.subarray(0, nameEnd).toString("utf8"), { text: body.subarray(nameEnd + 1, textEnd).toString("utf8"), types })
      } else if (type === "B") {
        // Bind: the portal's name, then the statement's: a statement prepared once on the connection runs again here.
        const portalEnd = body.indexOf(0)
        const name = body.subarray(portalEnd + 1, body.indexOf(0, portalEnd + 1)).toString("utf8")
        const statement = prepared.get(name)
        if (statement !== undefined) bound = onStatement(statement.text, name !== "", statement.types)
      } else if (type === "S") {
        if (bound !== undefined) bound.messages = cycle
        bound = undefined
        cycle = ""
      } else if (type === "C" && body[0] === 0x53) {
        // Close of a prepared statement.
        prepared.delete(body.subarray(1, body.indexOf(0, 1)).toString("utf8"))
      }
      buffered = buffered.subarray(1 + length)
    }
  }
}

/** Starts the proxy in front of the Postgres at `databaseUrl` (plain TCP: the bench's loopback Postgres). */
export const start = async (databaseUrl: string): Promise<SqlTrace> => {
  const upstream = new URL(databaseUrl)
  const statements: Array<Statement> = []
  const sockets = new Set<Socket>()
  let connections = 0
  const server = createServer((client) => {
    const connection = ++connections
    const database = connect(Number(upstream.port || 5432), upstream.hostname)
    sockets.add(client).add(database)
    client.unref()
    database.unref()
    const read = frontendReader((text, named, types) => {
      const statement: Statement = { connection, text, named, types, messages: "" }
      statements.push(statement)
      return statement
    })
    client.on("data", (chunk: Buffer) => {
      read(chunk)
      database.write(chunk)
    })
    database.pipe(client)
    const end = () => {
      client.destroy()
      database.destroy()
      sockets.delete(client)
      sockets.delete(database)
    }
    client.on("close", end).on("error", end)
    database.on("close", end).on("error", end)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  // Never what keeps the harness alive: it ends when the servers have stopped.
  server.unref()
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const url = new URL(databaseUrl)
  url.hostname = "127.0.0.1"
  url.port = String(address.port)
  return {
    url: url.toString(),
    statements,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
