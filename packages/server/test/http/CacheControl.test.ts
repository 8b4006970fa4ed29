/**
 * `Cache-Control: no-store` on every `/v1` answer (RFC 6749 §5.1; issue 43 item 2): the answers that carry a
 * credential (sign-in, sign-up, API key and invitation creation, bootstrap claim links, an invitation accepted by
 * signing up), the rest of a sample of operations, and errors of every kind (400, 401, 403, 404, 405, 413, 415, 429,
 * a replayed `Idempotency-Key` answer, a request Node's parser refuses); and the OpenAPI document says so. The
 * document and /health, which carry nothing of anyone's, may be cached.
 */
import type { AuthResult, CreatedInvitation } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ bootstrapPerHour: 1 })
})
afterAll(() => server.close())

const { get, post, del } = Http.verbs(() => server.url)

const noStore = (what: string, response: Http.RawResponse, status: number) => {
  expect([what, response.status]).toEqual([what, status])
  expect([what, response.headers.get("cache-control")]).toEqual([what, "no-store"])
}

describe("Cache-Control: no-store", () => {
  it("is on every answer that carries a credential", async () => {
    const email = `cache.${Math.random().toString(36).slice(2)}@example.com`
    const signUp = await post("/v1/auth/sign-up", { body: { email, password: "correct horse battery", name: "Cache" } })
    noStore("sign-up", signUp, 201)
    noStore("sign-in", await post("/v1/auth/sign-in", { body: { email, password: "correct horse battery" } }), 200)
    const token = Http.expectStatus<typeof AuthResult.Encoded>("sign-up", signUp, 201).session.token
    noStore("organization", await post("/v1/organizations", { token, body: { name: "Cached" } }), 201)
    noStore("API key", await post("/v1/api-keys", { token, body: { name: "ci" } }), 201)
    const invitation = await post("/v1/invitations", { token, body: { email: `invitee.${Math.random().toString(36).slice(2)}@example.com`, role: "member" } })
    noStore("invitation", invitation, 201)
    const { inviteToken } = Http.expectStatus<typeof CreatedInvitation.Encoded>("invitation", invitation, 201)
    noStore(
      "accepted invitation",
      await post("/v1/invitations/accept", { body: { token: inviteToken, signUp: { name: "Invitee", password: "correct horse battery" } } }),
      200
    )
    noStore("bootstrap claim links", await post("/v1/bootstrap/workspace", { body: { workspaceName: "Agents" } }), 201)
  })

  it("is on reads and on errors of every kind", async () => {
    const owner = await Http.owner(server.url, "Errors")
    noStore("me", await get("/v1/me", { token: owner.token }), 200)
    noStore("list", await get("/v1/teams", { token: owner.token }), 200)
    noStore("401", await get("/v1/me"), 401)
    noStore("wrong password", await post("/v1/auth/sign-in", { body: { email: owner.email, password: "not the password" } }), 401)
    noStore("400", await post("/v1/teams", { token: owner.token, body: { name: "" } }), 400)
    noStore("404 resource", await get("/v1/teams/tem_01m7xsja0me4fs7gc4ed0s22av", { token: owner.token }), 404)
    noStore("404 route", await get("/v1/no-such-thing", { token: owner.token }), 404)
    noStore("405", await del("/v1/auth/sign-in"), 405)
    noStore("415", await post("/v1/teams", { token: owner.token, rawBody: "name=x", headers: { "content-type": "text/plain" } }), 415)
    noStore("413", await post("/v1/teams", { token: owner.token, rawBody: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }) }), 413)
    const member = await Http.join(server.url, owner.token, "member")
    noStore("403", await post("/v1/api-keys", { token: member.token, body: { name: "nope" } }), 403)
    // The instance allows one bootstrap an hour per address: the first test spent it.
    const limited = await post("/v1/bootstrap/workspace", { body: { workspaceName: "Again" } })
    noStore("429", limited, 429)
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/)
    const request = { token: owner.token, body: { name: "Once" }, headers: { "idempotency-key": "cache-control-replay" } }
    noStore("first", await post("/v1/teams", request), 201)
    const replayed = await post("/v1/teams", request)
    noStore("replay", replayed, 201)
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    noStore("431 (refused by Node's parser)", await get("/v1/me", { headers: { "x-padding": "x".repeat(20_000) } }), 431)
  })

  it("is not on the document and /health, which anyone may cache", async () => {
    expect((await get("/health")).headers.get("cache-control")).toBeNull()
    expect((await get("/openapi.json")).headers.get("cache-control")).toBeNull()
  })

  it("is declared in the OpenAPI document on every response of every /v1 operation", async () => {
    const document = Json.object(Http.expectStatus("document", await get("/openapi.json"), 200), "the document")
    expect(Json.at(document, "components", "headers", "CacheControl", "schema")).toEqual({ type: "string", enum: ["no-store"] })
    const lacking = Json.objects(document.paths, "paths").filter(([path]) => path.startsWith("/v1/")).flatMap(([path, item]) =>
      Json.objects(item, path).flatMap(([method, operation]) =>
        Json.objects(operation.responses, `${method} ${path} responses`).flatMap(([status, response]) =>
          Json.at(response, "headers", "Cache-Control", "$ref") === "#/components/headers/CacheControl" ? [] : [`${method} ${path} ${status}`])))
    expect(lacking).toEqual([])
    expect(Json.at(document, "paths", "/v1/auth/sign-in", "post", "responses", "429", "headers", "Retry-After")).toEqual({ $ref: "#/components/headers/RetryAfter" })
  })
})
