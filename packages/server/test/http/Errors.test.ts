import { invalid } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
let owner: Awaited<ReturnType<typeof Http.owner>>
beforeAll(async () => {
  server = await TestServer.start()
  owner = await Http.owner(server.url)
})
afterAll(() => server.close())

describe("error bodies", () => {
  it("a malformed id in a path is 400 invalid_request naming the parameter", async () => {
    const response = await Http.request(server.url, "DELETE", "/v1/api-keys/apk_not-a-typeid", { token: owner.token })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({
      error: "invalid_request",
      details: [{ message: "TypeID must be 30 characters (apk_<26 char suffix>)", path: ["apiKeyId"] }]
    })
  })

  it("an id with another prefix is 400, not 404", async () => {
    const response = await Http.request(server.url, "DELETE", `/v1/api-keys/${owner.organization.id.replace("org_", "apk_")}`, {
      token: owner.token
    })
    expect(response.status).toBe(404) // right prefix and shape: looked up, not found
    const wrongPrefix = await Http.request(server.url, "DELETE", `/v1/api-keys/plg_${owner.organization.id.slice(4)}`, {
      token: owner.token
    })
    expect(wrongPrefix.status).toBe(400)
    expect(invalid(wrongPrefix).details[0]).toEqual({
      message: "TypeID must start with 'apk_' (API key id); 'plg_…' is a plugin id",
      path: ["apiKeyId"]
    })
  })

  it("a bad query value is 400 and every bad parameter is listed", async () => {
    const response = await Http.request(server.url, "GET", "/v1/api-keys?limit=1000&cursor=", { token: owner.token })
    expect(response.status).toBe(400)
    expect(response.body).toMatchObject({ error: "invalid_request" })
    expect(invalid(response).details.map((detail) => detail.path)).toEqual([["cursor"], ["limit"]])
  })

  it("a cursor the server did not issue is 400 on cursor", async () => {
    const response = await Http.request(server.url, "GET", "/v1/api-keys?cursor=garbage", { token: owner.token })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({
      error: "invalid_request",
      details: [{ message: "is not a cursor returned by this list with these filters", path: ["cursor"] }]
    })
  })

  it("a malformed JSON body is 400 invalid_request", async () => {
    const response = await Http.request(server.url, "POST", "/v1/auth/sign-in", { rawBody: "{\"email\": " })
    expect(response.status).toBe(400)
    expect(response.body).toEqual({
      error: "invalid_request",
      details: [{ message: "The request body is not valid JSON.", path: [] }]
    })
  })

  it("every bad body member is reported, and a password is never echoed", async () => {
    const response = await Http.request(server.url, "POST", "/v1/auth/sign-up", {
      body: { email: "not-an-email", password: "tiny", name: "" }
    })
    expect(response.status).toBe(400)
    expect(invalid(response).details.map((detail) => detail.path)).toEqual([["email"], ["password"], ["name"]])
    expect(response.text).not.toContain("tiny")
  })

  it("no credentials is 401 unauthorized, even with bad parameters", async () => {
    const response = await Http.request(server.url, "GET", "/v1/api-keys?limit=1000")
    expect(response.status).toBe(401)
    expect(response.body).toMatchObject({ error: "unauthorized", reason: "credentials_missing" })
  })

  it("an unknown route is a 404 body", async () => {
    const response = await Http.request(server.url, "POST", "/v1/unknown")
    expect(response.status).toBe(404)
    expect(response.body).toMatchObject({ error: "not_found" })
  })

  it("error bodies carry no _tag", async () => {
    const response = await Http.request(server.url, "DELETE", "/v1/api-keys/apk_01m7xsja1pe4fs7gcqehxq2c36", {
      token: owner.token
    })
    expect(response.status).toBe(404)
    expect(response.body).toEqual({ error: "api_key_not_found", message: "API key not found." })
  })
})
