/** Hostile request bodies and query strings against a real server: answered 400 or 413, never 500, never held whole. */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { request as nodeRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
let owner: Awaited<ReturnType<typeof Http.owner>>
beforeAll(async () => {
  server = await TestServer.start()
  owner = await Http.owner(server.url)
})
afterAll(() => server.close())

const { invitations, teams } = calls(() => server.url)

const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels)
const nulMessage = "Must not contain the NUL character (\\u0000)."
const tenMegabytes = 10 * 1024 * 1024

const stillServing = async () => expect((await Http.request(server.url, "GET", "/health")).status).toBe(200)

/** A request whose Content-Length announces `totalBytes` of which it sends only the first few: answered or hung. */
const postAnnounced = (path: string, token: string, totalBytes: number) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = nodeRequest(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(totalBytes), authorization: `Bearer ${token}` }
    }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => body += chunk)
      response.on("end", () => {
        resolve({ status: response.statusCode ?? 0, body })
        request.destroy()
      })
    })
    request.on("error", reject)
    request.write("{\"name\":\"")
  })

/** A body sent in chunks, without Content-Length, so the server cannot refuse it before reading. */
const postChunked = (path: string, token: string, totalBytes: number) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = nodeRequest(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "transfer-encoding": "chunked", authorization: `Bearer ${token}` }
    }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => body += chunk)
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
    })
    request.on("error", reject)
    const chunk = "x".repeat(64 * 1024)
    let sent = 0
    request.write("{\"name\":\"")
    const write = () => {
      while (sent < totalBytes) {
        sent += chunk.length
        if (!request.write(chunk)) return void request.once("drain", write)
      }
      request.end("\"}")
    }
    write()
  })

describe("deeply nested JSON", () => {
  it("is refused with 400 before authentication, and the server keeps serving", async () => {
    const response = await Http.request(server.url, "POST", "/v1/auth/sign-in", {
      rawBody: `{"email":${nested(5000)},"password":"x"}`
    })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({
      error: "invalid_request",
      details: [{ message: "The request body is nested deeper than 64 levels.", path: [] }]
    })
    await stillServing()
  })

  it("is refused with 400 on an authenticated route", async () => {
    const response = await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, rawBody: `{"name":${nested(5000)}}` })
    expect(response.status).toBe(400)
    expect(invalid(response).details[0]?.message).toBe("The request body is nested deeper than 64 levels.")
    await stillServing()
  })

  it("64 levels pass the guard and reach the schema; brackets inside strings do not count", async () => {
    const response = await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, rawBody: `{"name":${nested(63)}}` })
    expect(response.status).toBe(400)
    expect(invalid(response).details[0]?.path).toEqual(["name"])
    const bracketed = await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, body: { name: "[".repeat(200) } })
    expect(bracketed.status).toBe(201)
  })
})

describe("NUL characters", () => {
  it("in a team name: 400 naming the member", async () => {
    const response = await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, body: { name: "a\u0000b" } })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({ error: "invalid_request", details: [{ message: nulMessage, path: ["name"] }] })
  })

  it("in a query string: 400 naming the parameter", async () => {
    const response = await Http.request(server.url, "GET", "/v1/members?q=%00", { token: owner.token })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({ error: "invalid_request", details: [{ message: nulMessage, path: ["q"] }] })
  })

  it("in a path parameter: 400 naming it", async () => {
    const response = await Http.request(server.url, "GET", "/v1/teams/tem_%00", { token: owner.token })
    expect(response.status).toBe(400)
    expect(invalid(response).details).toEqual([{ message: nulMessage, path: ["teamId"] }])
  })

  it("in sign-up, bootstrap and invitation bodies, without credentials: 400 with the member's path", async () => {
    const signUp = await Http.request(server.url, "POST", "/v1/auth/sign-up", {
      body: { email: "nul@example.com", password: "correct horse battery", name: "\u0000" }
    })
    expect(signUp.status).toBe(400)
    expect(invalid(signUp).details).toEqual([{ message: nulMessage, path: ["name"] }])
    const bootstrap = await Http.request(server.url, "POST", "/v1/bootstrap/workspace", { body: { workspaceName: "Acme\u0000" } })
    expect(bootstrap.status).toBe(400)
    expect(invalid(bootstrap).details).toEqual([{ message: nulMessage, path: ["workspaceName"] }])
    const invited = await invitations.create({
      token: owner.token,
      payload: { email: "nul.invitee@example.com", role: "member" }
    })
    const { inviteToken } = ok(invited, 201)
    if (inviteToken === null) throw new Error(`the invitation shows no token: ${invited.text}`)
    const accepted = await invitations.accept({
      payload: { token: inviteToken, signUp: { name: "x\u0000", password: "correct horse battery" } }
    })
    expect(accepted.status).toBe(400)
    expect(invalid(accepted).details).toEqual([{ message: nulMessage, path: ["signUp", "name"] }])
  })

  it("an escaped backslash before u0000 is ordinary text and is stored as sent", async () => {
    const name = "back\\u0000slash"
    const response = await teams.create({ token: owner.token, payload: { name } })
    expect(response.status).toBe(201)
    expect(ok(response, 201).team.name).toBe(name)
  })
})

describe("body size", () => {
  it("a 10 MB body with Content-Length is refused with 413 before it is read", async () => {
    const response = await Http.request(server.url, "POST", "/v1/teams", {
      token: owner.token,
      rawBody: JSON.stringify({ name: "x".repeat(tenMegabytes) })
    })
    expect(response.status).toBe(413)
    expect(response.body).toEqual({ error: "payload_too_large", message: "The request body is larger than 1048576 bytes." })
    // Before it is read: announced but never sent, the body gets the same answer.
    const unsent = await postAnnounced("/v1/teams", owner.token, tenMegabytes)
    expect(unsent.status).toBe(413)
    expect(JSON.parse(unsent.body)).toEqual({ error: "payload_too_large", message: "The request body is larger than 1048576 bytes." })
    await stillServing()
  })

  it("without credentials too", async () => {
    const response = await Http.request(server.url, "POST", "/v1/auth/sign-in", { rawBody: JSON.stringify({ email: "x".repeat(tenMegabytes) }) })
    expect(response.status).toBe(413)
  })

  it("a chunked 10 MB body is cut off at the limit and refused with 413", async () => {
    const response = await postChunked("/v1/teams", owner.token, tenMegabytes)
    expect(response.status).toBe(413)
    expect(JSON.parse(response.body)).toEqual({ error: "payload_too_large", message: "The request body is larger than 1048576 bytes." })
    await stillServing()
  })

  it("a chunked body under the limit is read and decoded as usual", async () => {
    const response = await postChunked("/v1/teams", owner.token, 300 * 1024)
    expect(response.status).toBe(400)
    expect(invalid({ status: response.status, text: response.body, body: JSON.parse(response.body) }).details[0]?.path).toEqual(["name"])
  })

  it("a 300 KB string in a member of at most 255 characters: 400 whose body stays under 2 KB", async () => {
    const response = await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, body: { name: "a".repeat(300_000) } })
    expect(response.status).toBe(400)
    expect(response.text.length).toBeLessThan(2048)
    const [detail] = invalid(response).details
    expect(detail?.path).toEqual(["name"])
    // The bounds, without the text back.
    expect(detail?.message).toBe("must be 1 to 255 characters long (after trimming white space)")
  })
})
