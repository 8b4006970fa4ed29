/**
 * platform/ClientErrors.ts and platform/PublicUrl.ts: the answer to each error Node's parser reports (status and
 * body), where an overflow happened, and the server's base URL from its setting or the request's Host.
 * (HttpSemantics.test.ts sends the same refusals to the running server.)
 */
import { describe, expect, it } from "@effect/vitest"
import { overflowInRequestLine, type ParserError, responseFor } from "../src/platform/ClientErrors.js"
import { baseUrlOf } from "../src/platform/PublicUrl.js"

const parserError = (code: string | undefined, fields: Partial<ParserError> = {}): ParserError =>
  Object.assign(new Error("Parse Error"), { code, ...fields })

const errors: ReadonlyArray<readonly [what: string, error: ParserError]> = [
  ["an overflow in the request line", parserError("HPE_HEADER_OVERFLOW", { rawPacket: Buffer.from(`GET /x?${"a".repeat(100)}`), bytesParsed: 50 })],
  ["an overflow in the header fields", parserError("HPE_HEADER_OVERFLOW", { rawPacket: Buffer.from(`GET / HTTP/1.1\r\nx-big: ${"b".repeat(100)}`), bytesParsed: 90 })],
  ["an overflow whose chunk does not tell", parserError("HPE_HEADER_OVERFLOW", { rawPacket: Buffer.from("b".repeat(100)) })],
  ["an overflow without a packet", parserError("HPE_HEADER_OVERFLOW")],
  ["chunk extensions", parserError("HPE_CHUNK_EXTENSIONS_OVERFLOW")],
  ["a timeout", parserError("ERR_HTTP_REQUEST_TIMEOUT")],
  ["an invalid method", parserError("HPE_INVALID_METHOD", { reason: "Invalid method encountered" })],
  ["a long reason", parserError("HPE_INVALID_HEADER_TOKEN", { reason: "x".repeat(500) })],
  ["no code", parserError(undefined)]
]

/** Each error's answer (its status, and its body as JSON when it has one) and whether the overflow was the request line's. */
const answers: ReadonlyArray<readonly [what: string, status: number, body: unknown, inRequestLine: boolean]> = [
  ["an overflow in the request line", 414, { error: "uri_too_long", message: "The request line is longer than the server reads (16384 bytes, header fields included)." }, true],
  ["an overflow in the header fields", 431, { error: "request_header_fields_too_large", message: "The request's header fields are larger than the server reads (16384 bytes, request line included)." }, false],
  ["an overflow whose chunk does not tell", 431, { error: "request_header_fields_too_large", message: "The request's header fields are larger than the server reads (16384 bytes, request line included)." }, false],
  ["an overflow without a packet", 431, { error: "request_header_fields_too_large", message: "The request's header fields are larger than the server reads (16384 bytes, request line included)." }, false],
  ["chunk extensions", 413, { error: "payload_too_large", message: "The request body's chunk extensions are larger than the server reads." }, false],
  ["a timeout", 408, undefined, false],
  ["an invalid method", 400, { error: "invalid_request", details: [{ message: "The request is not valid HTTP/1.1: Invalid method encountered.", path: [] }] }, false],
  ["a long reason", 400, { error: "invalid_request", details: [{ message: `The request is not valid HTTP/1.1: ${"x".repeat(200)}.`, path: [] }] }, false],
  ["no code", 400, { error: "invalid_request", details: [{ message: "The request is not valid HTTP/1.1.", path: [] }] }, false]
]

describe("ClientErrors", () => {
  for (const [what, status, body, inRequestLine] of answers) {
    it(`${what}: its status and body`, () => {
      const error = errors.find(([name]) => name === what)?.[1]
      if (error === undefined) throw new Error(`no error ${what}`)
      const response = responseFor(error, 16_384)
      expect({ status: response.status, body: response.body === undefined ? undefined : JSON.parse(response.body) }).toEqual({ status, body })
      expect(overflowInRequestLine(error)).toBe(inRequestLine)
    })
  }

  it("an overflow is the request line's when the line it stopped in starts the request", () => {
    expect(overflowInRequestLine(errors[0]![1])).toBe(true)
    expect(overflowInRequestLine(errors[1]![1])).toBe(false)
    expect(responseFor(errors[0]![1], 16_384).status).toBe(414)
    expect(responseFor(errors[1]![1], 16_384).status).toBe(431)
  })
})

describe("PublicUrl", () => {
  const settings = [
    { publicUrl: "https://orgplane.example.com/", host: "0.0.0.0", port: 8787, basePath: "" },
    { publicUrl: undefined, host: "127.0.0.1", port: 8787, basePath: "" }
  ] as const
  const hosts = [undefined, "localhost:8787", "[::1]:8787", "evil.example.com/path", "a b", "orgplane.internal"]

  it("answers ORGPLANE_PUBLIC_URL whatever the Host, else the Host when it is a host, else the listening address", () => {
    for (const host of hosts) expect(baseUrlOf(settings[0], host), host).toBe("https://orgplane.example.com")
    expect(hosts.map((host) => baseUrlOf(settings[1], host))).toEqual([
      "http://127.0.0.1:8787",
      "http://localhost:8787",
      "http://[::1]:8787",
      "http://127.0.0.1:8787",
      "http://127.0.0.1:8787",
      "http://orgplane.internal"
    ])
    expect(baseUrlOf(settings[0], "x")).toBe("https://orgplane.example.com")
    expect(baseUrlOf(settings[1], "evil.example.com/path")).toBe("http://127.0.0.1:8787")
  })
})
