/**
 * Every answer a Node HTTP server sends, handed to a checker as it leaves (`watch`): whatever sent the request (the
 * client, the CLI, `fetch`, raw `node:http` or a socket) the answer is checked, and what is wrong is kept
 * (`ContractFindings.ts`) until the test that caused it ends (`contractSetup.ts` fails it then). The check runs as the
 * answer is handed to Node, before the client can read it, so it is always kept before the test that awaits that
 * answer goes on. Plain Node: ContractWatch.ts and packages/server's
 * test/support/Contract.ts give it the server's document.
 */
import type * as Http from "node:http"
import type { Duplex } from "node:stream"
import * as Zlib from "node:zlib"
import { report } from "./ContractFindings.js"
import type * as ResponseContract from "./ResponseContract.js"

const bytesOf = (chunk: unknown, encoding: unknown): Buffer | undefined => {
  if (typeof chunk === "string") return Buffer.from(chunk, Buffer.isEncoding(String(encoding)) ? (encoding as BufferEncoding) : "utf8")
  if (chunk instanceof Uint8Array) return Buffer.from(chunk)
  return undefined
}

/** The `Content-Type` of a head as sent (`HTTP/1.1 200 OK\r\nname: value...`). */
const contentTypeIn = (head: string) => /\r\ncontent-type:[ \t]*([^\r\n]*)/i.exec(head)?.[1]?.trim()

/**
 * The body as a client reads it: decoded per the head's `Content-Encoding` (br, gzip), as `fetch` does; a body that
 * does not decode is kept as sent, for the check to find it wrong.
 */
const decoded = (head: string, body: Buffer): Buffer => {
  const coding = /\r\ncontent-encoding:[ \t]*([^\r\n]*)/i.exec(head)?.[1]?.trim().toLowerCase()
  try {
    return coding === "br" ? Zlib.brotliDecompressSync(body) : coding === "gzip" ? Zlib.gunzipSync(body) : body
  } catch {
    return body
  }
}

/** An answer written on the socket whole (`ClientErrors`' answers to what Node's parser refused). */
const rawAnswer = (raw: Buffer): ResponseContract.Answer | undefined => {
  const end = raw.indexOf("\r\n\r\n")
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString("latin1")
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]
  if (status === undefined) return undefined
  return { method: "", target: undefined, status: Number(status), contentType: contentTypeIn(head), body: end === -1 ? Buffer.alloc(0) : raw.subarray(end + 4) }
}

/** Checks one answer; a checker that fails (a schema Ajv cannot compile, say) is a finding too, never the server's failure. */
const checked = (check: ResponseContract.Checker, answer: ResponseContract.Answer) => {
  let violation: string | undefined
  try {
    violation = check(answer)
  } catch (error) {
    violation = `${answer.method} ${answer.target ?? "(no target)"} answered ${answer.status}: the checker failed: ${String(error)}`
  }
  if (violation !== undefined) report(violation)
}

/** Checks every answer `server` sends from now on. */
export const watch = <S extends Http.Server>(server: S, check: ResponseContract.Checker): S => {
  server.prependListener("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const chunks: Array<Buffer> = []
    let ended = false
    const write = response.write
    const end = response.end
    response.write = function(this: Http.ServerResponse, ...args: Array<unknown>): boolean {
      const bytes = bytesOf(args[0], args[1])
      if (bytes !== undefined) chunks.push(bytes)
      return Reflect.apply(write, this, args)
    }
    response.end = function(this: Http.ServerResponse, ...args: Array<unknown>): Http.ServerResponse {
      const bytes = bytesOf(args[0], args[1])
      if (bytes !== undefined) chunks.push(bytes)
      const result: Http.ServerResponse = Reflect.apply(end, this, args)
      if (ended) return result
      ended = true
      const sent: unknown = Reflect.get(this, "_header")
      const head = typeof sent === "string" ? sent : ""
      checked(check, {
        method: request.method ?? "",
        target: request.url,
        status: this.statusCode,
        contentType: typeof sent === "string" ? contentTypeIn(head) : undefined,
        body: decoded(head, Buffer.concat(chunks))
      })
      return result
    }
  })
  server.prependListener("clientError", (_error: Error, socket: Duplex) => {
    const end = socket.end
    socket.end = function(this: Duplex, ...args: Array<unknown>): Duplex {
      const bytes = bytesOf(args[0], args[1])
      const answer = bytes === undefined ? undefined : rawAnswer(bytes)
      if (answer !== undefined) checked(check, answer)
      return Reflect.apply(end, this, args)
    }
  })
  return server
}
