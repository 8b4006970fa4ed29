/**
 * The response checker against the API's real OpenAPI document, on a real Node server on loopback whose answers each
 * test sets: what the document declares passes; an undeclared status, an undeclared media type, a body outside its
 * schema, or an answer outside the document's answers to any request is found and fails the test that caused it.
 * The server is Node's own with the standalone server's parser-error answers (`createHttpServer`), watched as
 * packages/server's tests watch every test server so. No orgplane handler and no database.
 */
import { createHttpServer } from "@orgplane/server"
import * as Net from "node:net"
import * as Http from "node:http"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { ContractFindings, ContractWatch } from "../src/index.js"

interface Reply {
  readonly status: number
  readonly contentType?: string
  readonly body?: string
  readonly headers?: Record<string, string>
}

let reply: Reply = { status: 500 }
let server: Http.Server
let url: string

beforeAll(async () => {
  server = ContractWatch.watch(createHttpServer()).on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
    response.writeHead(reply.status, {
      ...(reply.contentType === undefined ? {} : { "content-type": reply.contentType }),
      ...reply.headers
    })
    response.end(reply.body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
// Nothing found by one test may reach the next.
afterEach(() => void ContractFindings.take())

/** Sends `method path` to the server, which answers `answer`; what the checker found about it. */
const found = async (method: string, path: string, answer: Reply) => {
  reply = answer
  const response = await fetch(`${url}${path}`, { method })
  await response.arrayBuffer()
  return ContractFindings.take()
}

const json = (status: number, body: unknown, contentType = "application/json"): Reply => ({ status, contentType, body: JSON.stringify(body) })

describe("an answer the document declares", () => {
  it("passes: status, media type (with parameters) and body as the operation declares", async () => {
    expect(await found("GET", "/health", json(200, { ok: true, version: "1.4.0" }))).toEqual([])
    expect(await found("GET", "/health?probe=1", json(200, { ok: true, version: "1.4.0" }, "application/json; charset=utf-8"))).toEqual([])
    expect(await found("GET", "/v1/teams/tem_01m6dsg7e0f6xbks25eta8m5bm/", json(404, { error: "team_not_found", message: "No such team." }))).toEqual([])
    expect(() => ContractFindings.assertDeclared()).not.toThrow()
  })

  it("passes a stored file served as JSON where the operation declares any media type (bytes, not its JSON schema)", async () => {
    const file = "/v1/config-objects/cob_01m6dsg7e0f6xbks25eta8m5bm/versions/cov_01m6dsg7e0f6xbks25eta8m5bm/files/content?path=plugin.json"
    expect(await found("GET", file, json(200, { name: "release-tools", version: "1.0.0" }))).toEqual([])
  })

  it("passes HEAD as its path's GET, without a body", async () => {
    expect(await found("HEAD", "/health", { status: 200, contentType: "application/json" })).toEqual([])
  })

  it("passes what the document answers any request: an unknown path's 404, another method's 405", async () => {
    expect(await found("GET", "/nowhere", json(404, { error: "not_found", message: "No route for GET /nowhere" }))).toEqual([])
    const methodNotAllowed = { ...json(405, { error: "method_not_allowed", message: "/health does not take DELETE; it takes GET, HEAD." }), headers: { allow: "GET, HEAD" } }
    expect(await found("DELETE", "/health", methodNotAllowed)).toEqual([])
  })

  it("holds a target read two ways (refused before routing) to the answers to any request, and reads an absolute-form target by its path", async () => {
    /** Sends `target` as it is (fetch would drop a fragment or make an absolute form relative). */
    const raw = async (target: string, answer: Reply) => {
      reply = answer
      await new Promise<void>((resolve, reject) => {
        Http.request(`${url}/`, { path: target }, (response) => response.resume().on("end", resolve)).on("error", reject).end()
      })
      return ContractFindings.take()
    }
    const refused = json(400, { error: "invalid_request", details: [{ message: "The URL has a \"#\".", path: [] }] })
    // users.me takes no input, so declares no 400; no operation takes a target with a "#".
    expect(await raw("/v1/me?x=1#y", refused)).toEqual([])
    expect(await raw("/v1/me", refused)).toEqual([expect.stringContaining("a status GET /v1/me (users.me) does not declare")])
    expect(await raw("http://127.0.0.1/health", json(200, { ok: true, version: "1.4.0" }))).toEqual([])
    expect(await raw("http://127.0.0.1/health", json(418, {}))).toEqual([expect.stringContaining("a status GET /health (system.health) does not declare")])
  })

  it("passes what Node's parser refuses, answered in the error shape before any request", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      let received = ""
      const socket = Net.connect(Number(new URL(url).port), "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"))
      socket.on("data", (chunk) => (received += chunk)).on("end", () => resolve(received)).on("error", reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(ContractFindings.take()).toEqual([])
  })
})

describe("an answer the document does not declare", () => {
  it("is found for an undeclared status, naming the operation and what it declares", async () => {
    const [finding, ...rest] = await found("GET", "/health", json(418, { error: "teapot" }))
    expect(rest).toEqual([])
    expect(finding).toContain("GET /health answered 418 application/json, a status GET /health (system.health) does not declare (it declares 200, 414, 431)")
  })

  it("is found for an undeclared media type", async () => {
    expect(await found("GET", "/health", { status: 200, contentType: "text/plain", body: "ok" })).toEqual([
      "GET /health answered 200 text/plain, a media type GET /health (system.health) does not declare for 200 (it declares application/json): ok"
    ])
  })

  it("is found for a body outside its schema, with what Ajv says of it", async () => {
    const [finding] = await found("GET", "/health", json(200, { ok: "yes", version: "1.4.0" }))
    expect(finding).toMatch(/^GET \/health answered 200 application\/json, a body outside the schema GET \/health \(system\.health\) declares for 200 application\/json \(.*ok.*\): \{"ok":"yes"/)
  })

  it("is found for a body that is not JSON, for no body where one is declared, and for a body where none is", async () => {
    expect(await found("GET", "/health", { status: 200, contentType: "application/json", body: "{" })).toEqual([
      "GET /health answered 200 application/json, a body that is not JSON: {"
    ])
    expect(await found("GET", "/health", { status: 200, contentType: "application/json" })).toEqual([
      "GET /health answered 200 application/json with no body, where GET /health (system.health) declares application/json for 200"
    ])
    expect(await found("DELETE", "/v1/teams/tem_01m6dsg7e0f6xbks25eta8m5bm", json(204, {}))).toEqual([
      "DELETE /v1/teams/tem_01m6dsg7e0f6xbks25eta8m5bm answered 204 application/json, a body where DELETE /v1/teams/{teamId} (teams.delete) declares none for 204: {}"
    ])
  })

  it("is found for a request no operation takes when the answer is not one the document gives any request", async () => {
    const [finding] = await found("GET", "/nowhere", json(200, { ok: true }))
    expect(finding).toContain(`GET /nowhere answered 200 application/json, a status any request (x-orgplane-unrouted-responses) does not declare`)
  })

  it("fails the test: `assertDeclared` (what the setup file runs after each test) throws, listing each answer", async () => {
    reply = json(418, { error: "teapot" })
    await (await fetch(`${url}/health`)).arrayBuffer()
    await (await fetch(`${url}/health`)).arrayBuffer()
    expect(() => ContractFindings.assertDeclared()).toThrow(/^2 answer\(s\) the OpenAPI document does not declare:\n- GET \/health answered 418/)
    expect(() => ContractFindings.assertDeclared()).not.toThrow()
  })
})
