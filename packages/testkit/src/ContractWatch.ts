/**
 * Every answer a test server sends, held to the OpenAPI document (`ResponseContract.ts`) as it leaves: `watch` hooks a
 * Node HTTP server (`TestServer.start` watches each one), so whatever sent the request (the client, the CLI,
 * `fetch`, raw `node:http` or a socket) the answer is checked, and what is wrong is kept (`ContractFindings.ts`)
 * until the test that caused it ends (`contractSetup.ts` fails it then). The check runs as the answer is handed to
 * Node, before the client can read it, so it is always kept before the test that awaits that answer goes on.
 */
import { openApiDocument } from "@orgplane/schema"
import { docsRoutes, pathAmbiguity } from "@orgplane/server"
import * as Fs from "node:fs"
import type * as Http from "node:http"
import type { Duplex } from "node:stream"
import { documentVariable, report } from "./ContractFindings.js"
import * as ResponseContract from "./ResponseContract.js"

let checker: ResponseContract.Checker | undefined

/** The checker of the document the server serves, made once per process. */
export const check: ResponseContract.Checker = (answer) => {
  if (checker === undefined) {
    const file = process.env[documentVariable]
    const document = file === undefined ? openApiDocument() : JSON.parse(Fs.readFileSync(file, "utf8"))
    checker = ResponseContract.make(document, { beside: docsRoutes, refusedBeforeRouting: pathAmbiguity })
  }
  return checker(answer)
}

const bytesOf = (chunk: unknown, encoding: unknown): Buffer | undefined => {
  if (typeof chunk === "string") return Buffer.from(chunk, Buffer.isEncoding(String(encoding)) ? (encoding as BufferEncoding) : "utf8")
  if (chunk instanceof Uint8Array) return Buffer.from(chunk)
  return undefined
}

/** The `Content-Type` of a head as sent (`HTTP/1.1 200 OK\r\nname: value...`). */
const contentTypeIn = (head: string) => /\r\ncontent-type:[ \t]*([^\r\n]*)/i.exec(head)?.[1]?.trim()

/** An answer written on the socket whole (`ClientErrors`' answers to what Node's parser refused). */
const rawAnswer = (raw: Buffer): ResponseContract.Answer | undefined => {
  const end = raw.indexOf("\r\n\r\n")
  const head = raw.subarray(0, end === -1 ? raw.length : end).toString("latin1")
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]
  if (status === undefined) return undefined
  return { method: "", target: undefined, status: Number(status), contentType: contentTypeIn(head), body: end === -1 ? Buffer.alloc(0) : raw.subarray(end + 4) }
}

/** Checks one answer; a checker that fails (a schema Ajv cannot compile, say) is a finding too, never the server's failure. */
const checked = (answer: ResponseContract.Answer) => {
  let violation: string | undefined
  try {
    violation = check(answer)
  } catch (error) {
    violation = `${answer.method} ${answer.target ?? "(no target)"} answered ${answer.status}: the checker failed: ${String(error)}`
  }
  if (violation !== undefined) report(violation)
}

/** Checks every answer `server` sends from now on. */
export const watch = <S extends Http.Server>(server: S): S => {
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
      const head: unknown = Reflect.get(this, "_header")
      checked({
        method: request.method ?? "",
        target: request.url,
        status: this.statusCode,
        contentType: typeof head === "string" ? contentTypeIn(head) : undefined,
        body: Buffer.concat(chunks)
      })
      return result
    }
  })
  server.prependListener("clientError", (_error: Error, socket: Duplex) => {
    const end = socket.end
    socket.end = function(this: Duplex, ...args: Array<unknown>): Duplex {
      const bytes = bytesOf(args[0], args[1])
      const answer = bytes === undefined ? undefined : rawAnswer(bytes)
      if (answer !== undefined) checked(answer)
      return Reflect.apply(end, this, args)
    }
  })
  return server
}
