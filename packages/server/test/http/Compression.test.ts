/**
 * Large JSON answers compressed as the client takes them (platform/Compression.ts), read as sent over raw HTTP: brotli
 * or gzip per `Accept-Encoding`, decoding to the very answer sent uncompressed, `Vary: Accept-Encoding` whenever the
 * answer is large enough to be compressed; a small answer sent as it is.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as NodeHttp from "node:http"
import * as Zlib from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { compressed, inlineBytes, minimumBytes } from "../../src/platform/Compression.js"

let server: TestServer.RunningServer
let token: string
beforeAll(async () => {
  server = await TestServer.start()
  token = (await Http.owner(server.url)).token
})
afterAll(() => server.close())

/** GET `path` as sent: status, headers and the body's bytes before any decoding. */
const raw = (path: string, acceptEncoding: string | undefined) =>
  new Promise<{ status: number; headers: NodeHttp.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` }
    if (acceptEncoding !== undefined) headers["accept-encoding"] = acceptEncoding
    NodeHttp.get(new URL(path, server.url), { headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on("error", reject)
    }).on("error", reject)
  })

describe("compressed answers", () => {
  it("sends a large answer in the coding the client takes, the same JSON once decoded, and says it varies", async () => {
    const plain = await raw("/v1/audit/event-types", undefined)
    expect(plain.status).toBe(200)
    expect(plain.body.length).toBeGreaterThan(minimumBytes)
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(plain.headers["vary"]).toBe("accept-encoding")
    const sent = JSON.parse(plain.body.toString("utf8"))

    const decoders = { br: Zlib.brotliDecompressSync, gzip: Zlib.gunzipSync }
    for (const [accepted, coding] of [["gzip, deflate, br", "br"], ["gzip", "gzip"], ["br;q=0.5, gzip", "gzip"], ["*", "br"]] as const) {
      const answer = await raw("/v1/audit/event-types", accepted)
      expect([answer.status, answer.headers["content-encoding"], answer.headers["vary"]], accepted).toEqual([200, coding, "accept-encoding"])
      expect(answer.body.length, accepted).toBeLessThan(plain.body.length / 3)
      expect(Number(answer.headers["content-length"]), accepted).toBe(answer.body.length)
      expect(JSON.parse(decoders[coding](answer.body).toString("utf8")), accepted).toEqual(sent)
    }
    expect((await raw("/v1/audit/event-types", "deflate")).headers["content-encoding"]).toBeUndefined()
  })

  it("compresses the streamed audit export as it streams, NDJSON and CSV, to the same text once decoded", async () => {
    // A range closed before the first export, so that the exports (each one logged) read the same events.
    const to = new Date().toISOString()
    const decoders = { br: Zlib.brotliDecompressSync, gzip: Zlib.gunzipSync }
    for (const format of ["ndjson", "csv"] as const) {
      const path = `/v1/audit/export?format=${format}&to=${encodeURIComponent(to)}`
      const plain = await raw(path, undefined)
      expect([plain.status, plain.headers["content-encoding"], plain.headers["vary"]], format).toEqual([200, undefined, "accept-encoding"])
      expect(plain.body.toString("utf8"), format).toContain("organization.create")
      for (const coding of ["br", "gzip"] as const) {
        const answer = await raw(path, coding)
        expect([answer.status, answer.headers["content-encoding"]], `${format} ${coding}`).toEqual([200, coding])
        expect(decoders[coding](answer.body).toString("utf8"), `${format} ${coding}`).toBe(plain.body.toString("utf8"))
      }
    }
  })

  it("sends a small answer as it is", async () => {
    const me = await raw("/v1/me", "br, gzip")
    expect(me.status).toBe(200)
    expect(me.body.length).toBeLessThan(minimumBytes)
    expect(me.headers["content-encoding"]).toBeUndefined()
    expect(me.headers["vary"]).toBeUndefined()
    expect(JSON.parse(me.body.toString("utf8"))).toMatchObject({ user: expect.any(Object) })
  })

  it("compresses an answer larger than what is compressed inline, on the thread pool, to the same bytes once decoded", async () => {
    const json = JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => ({ id: `item_${i}`, name: `Item number ${i}` })) })
    expect(json.length).toBeGreaterThan(inlineBytes)
    for (const [coding, decode] of [["br", Zlib.brotliDecompressSync], ["gzip", Zlib.gunzipSync]] as const) {
      const request = HttpServerRequest.fromWeb(new Request("http://localhost/v1/things", { headers: { "accept-encoding": coding } }))
      const sent = await Effect.runPromise(compressed(request, HttpServerResponse.text(json, { contentType: "application/json" })))
      expect(sent.headers["content-encoding"]).toBe(coding)
      const body = sent.body
      if (body._tag !== "Uint8Array") throw new Error(`a ${body._tag} body`)
      expect(decode(body.body).toString("utf8")).toBe(json)
    }
  })
})
