/**
 * platform/ClientErrors.ts and platform/PublicUrl.ts held to their Effect 3 originals on the same inputs: the answer
 * to each error Node's parser reports (status and body), where an overflow happened, and the server's base URL.
 * (HttpSemantics.test.ts sends the same refusals to the running server.)
 */
import { describe, expect, it } from "@effect/vitest"
import { overflowInRequestLine, type ParserError, responseFor } from "../src/platform/ClientErrors.js"
import { baseUrlOf } from "../src/platform/PublicUrl.js"
import * as Recorded from "./support/Effect3.js"

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

/** The Effect 3 originals' answers, recorded (support/Effect3.ts). */
const effect3 = Recorded.originals("ClientErrors")

describe("ClientErrors, against the Effect 3 original", () => {
  for (const [what, error] of errors) {
    it(`${what}: the same status and body`, () => {
      expect(responseFor(error, 16_384)).toEqual(effect3(Recorded.call("responseFor", what, 16_384)))
      expect(overflowInRequestLine(error)).toBe(effect3(Recorded.call("overflowInRequestLine", what)))
    })
  }

  it("an overflow is the request line's when the line it stopped in starts the request", () => {
    expect(overflowInRequestLine(errors[0]![1])).toBe(true)
    expect(overflowInRequestLine(errors[1]![1])).toBe(false)
    expect(responseFor(errors[0]![1], 16_384).status).toBe(414)
    expect(responseFor(errors[1]![1], 16_384).status).toBe(431)
  })
})

describe("PublicUrl, against the Effect 3 original", () => {
  const settings = [
    { publicUrl: "https://orgplane.example.com/", host: "0.0.0.0", port: 8787 },
    { publicUrl: undefined, host: "127.0.0.1", port: 8787 }
  ] as const
  const hosts = [undefined, "localhost:8787", "[::1]:8787", "evil.example.com/path", "a b", "orgplane.internal"]

  it("the same base URL for each setting and Host", () => {
    for (const setting of settings) {
      for (const host of hosts) {
        expect([setting.publicUrl, host, baseUrlOf(setting, host)]).toEqual([
          setting.publicUrl,
          host,
          effect3(Recorded.call("baseUrlOf", setting, host))
        ])
      }
    }
    expect(baseUrlOf(settings[0], "x")).toBe("https://orgplane.example.com")
    expect(baseUrlOf(settings[1], "evil.example.com/path")).toBe("http://127.0.0.1:8787")
  })
})
