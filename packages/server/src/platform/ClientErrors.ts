/**
 * Requests Node's HTTP parser refuses before any handler sees them, answered in the API's error shape instead of
 * Node's bare status lines: a request line or header block over the parser's limit (`maxHeaderSize`, 16 KiB by
 * default, request line included) is 414 `uri_too_long` or 431 `request_header_fields_too_large`, a flood of chunk
 * extensions 413 `payload_too_large`, anything else that is not HTTP/1.1 400 `invalid_request`. The standalone
 * server listens with it; a host serving `makeNodeListener` may add it to its own server.
 */
import {
  InvalidRequest,
  InvalidRequestResponse,
  PayloadTooLarge,
  PayloadTooLargeResponse,
  RequestHeaderFieldsTooLarge,
  RequestHeaderFieldsTooLargeResponse,
  UriTooLong,
  UriTooLongResponse
} from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import type { Duplex } from "node:stream"

/** What Node's parser attaches to its errors (`prepareError` in `_http_server.js`). */
export interface ParserError extends Error {
  readonly code?: string | undefined
  readonly reason?: string | undefined
  /** The chunk being parsed when the parser stopped: one read from the socket, not the whole request. */
  readonly rawPacket?: Buffer | undefined
  /** Where in `rawPacket` it stopped. */
  readonly bytesParsed?: number | undefined
}

/** A request line as far as it goes: a method, a space, the start of its target. Header lines have a colon instead. */
const requestLineStart = /^[A-Z]+ [^\s]/

/**
 * Whether a header overflow happened in the request line rather than in the header fields: the line the parser
 * stopped in, within the chunk it was parsing, is the one that starts the request. When that line began in an
 * earlier read (a target or a single field longer than what one read of the socket brought), the chunk cannot
 * tell, and it counts as header fields: Node's own answer.
 */
export const overflowInRequestLine = (error: ParserError): boolean => {
  const packet = error.rawPacket
  if (packet === undefined) return false
  const end = typeof error.bytesParsed === "number" ? Math.min(Math.max(error.bytesParsed, 0), packet.length) : packet.length
  const seen = packet.subarray(0, end).toString("latin1")
  return requestLineStart.test(seen.slice(seen.lastIndexOf("\n") + 1))
}

const json = <A, I>(schema: Schema.Codec<A, I>, error: A) => JSON.stringify(Schema.encodeSync(schema)(error))

/** The status and JSON body answering a parser error; `undefined` for a timeout (Node's bare 408 stands). */
export const responseFor = (error: ParserError, maxHeaderSize: number): { readonly status: number; readonly body: string | undefined } => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return overflowInRequestLine(error)
        ? {
          status: 414,
          body: json(UriTooLongResponse, new UriTooLong({ message: `The request line is longer than the server reads (${maxHeaderSize} bytes, header fields included).` }))
        }
        : {
          status: 431,
          body: json(
            RequestHeaderFieldsTooLargeResponse,
            new RequestHeaderFieldsTooLarge({ message: `The request's header fields are larger than the server reads (${maxHeaderSize} bytes, request line included).` })
          )
        }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, body: json(PayloadTooLargeResponse, new PayloadTooLarge({ message: "The request body's chunk extensions are larger than the server reads." })) }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { status: 408, body: undefined }
    default: {
      const reason = typeof error.reason === "string" && error.reason !== "" ? `: ${error.reason.slice(0, 200)}` : ""
      return { status: 400, body: json(InvalidRequestResponse, InvalidRequest.field([], `The request is not valid HTTP/1.1${reason}.`)) }
    }
  }
}

const serialize = ({ body, status }: ReturnType<typeof responseFor>) => {
  const head = [`HTTP/1.1 ${status} ${Http.STATUS_CODES[status] ?? ""}`, "connection: close"]
  if (body === undefined) return `${head.join("\r\n")}\r\ncontent-length: 0\r\n\r\n`
  // The path of a request the parser refused is not known: no-store, as every /v1 answer says.
  head.push("content-type: application/json", `content-length: ${Buffer.byteLength(body)}`, "x-content-type-options: nosniff", "cache-control: no-store")
  return `${head.join("\r\n")}\r\n\r\n${body}`
}

/**
 * The `clientError` listener: `createServer().on("clientError", clientErrorListener)`. Like Node's default it
 * answers only when nothing of a response was written on the connection yet, and drops a connection reset by its
 * peer; unlike it, it ends the connection rather than destroying it, so a client still sending reads the answer
 * (the parser refuses whatever more comes, and the connection is then destroyed).
 */
export const clientErrorListener = (error: ParserError, socket: Duplex): void => {
  const inFlight = (socket as { _httpMessage?: { readonly headersSent?: boolean } })._httpMessage
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy()
    return
  }
  const server = (socket as { server?: { readonly maxHeaderSize?: number } }).server
  socket.end(serialize(responseFor(error, server?.maxHeaderSize ?? Http.maxHeaderSize)))
}
