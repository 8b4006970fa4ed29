/** The options that reach into each request: extra headers, a custom fetch, and the per-attempt hooks. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import {
  type ClientOptions,
  createClient,
  layerFetch,
  OrgplaneClient,
  OrgplaneConnectionError,
  OrgplaneError,
  type OrgplaneRequest,
  type OrgplaneResponse
} from "../src/index.js"
import * as Wait from "../../testkit/src/Wait.js"
import * as FakeServer from "./FakeServer.js"
import { rejection, withPromiseClient } from "./Helpers.js"

let fake: FakeServer.FakeServer
beforeAll(async () => {
  fake = await FakeServer.start()
})
afterAll(() => fake.close())

const withClient = <A>(options: Omit<ClientOptions, "baseUrl">, f: (client: ReturnType<typeof createClient>) => Promise<A>) =>
  withPromiseClient(fake.url, options, f)

const unavailable = { error: "service_unavailable", message: "The database does not answer." }

/** Hooks that record what they see; `onRequest` tags each attempt with its number. */
const recorder = () => {
  const requests: Array<OrgplaneRequest> = []
  const responses: Array<[OrgplaneResponse, OrgplaneRequest]> = []
  return {
    requests,
    responses,
    onRequest: (request: OrgplaneRequest) => {
      requests.push(request)
      return { "x-attempt": String(request.attempt) }
    },
    onResponse: (response: OrgplaneResponse, request: OrgplaneRequest) => {
      responses.push([response, request])
    }
  }
}

describe("headers", () => {
  it("sends the extra headers with every request; the client's own headers win", async () => {
    fake.script({ status: 200, body: FakeServer.health }, { status: 200, body: FakeServer.health })
    await withClient({ headers: { "X-Tenant": "acme", Authorization: "Basic ignored" }, token: "tok_1" }, async (client) => {
      await client.system.health()
      await client.system.health()
    })
    expect(fake.requests.map((request) => request.headers["x-tenant"])).toEqual(["acme", "acme"])
    expect(fake.requests.map((request) => request.headers.authorization)).toEqual(["Bearer tok_1", "Bearer tok_1"])

    // Without a token, an authorization header of the caller's own goes as given (a proxy's, say).
    fake.script({ status: 200, body: FakeServer.health })
    await withClient({ headers: { authorization: "Basic cHJveHk=" } }, (client) => client.system.health())
    expect(fake.requests[0]!.headers.authorization).toBe("Basic cHJveHk=")
  })
})

describe("fetch", () => {
  it("sends every attempt through the given fetch", async () => {
    const sent: Array<string> = []
    const counting: typeof fetch = (input, init) => {
      sent.push(`${init?.method} ${String(input)}`)
      return fetch(input, init)
    }
    fake.script({ status: 503 }, { status: 200, body: FakeServer.health })
    expect(await withClient({ fetch: counting, maxRetries: 1 }, (client) => client.system.health())).toEqual(FakeServer.health)
    expect(sent).toEqual([`GET ${fake.url}/health`, `GET ${fake.url}/health`])
    expect(fake.requests).toHaveLength(2)
  })

  it("can be a test double: nothing reaches the network", async () => {
    const requests: Array<Request> = []
    const double: typeof fetch = async (input, init) => {
      requests.push(new Request(input, init))
      return Response.json({ ok: true, version: "double" })
    }
    const client = createClient({ baseUrl: "http://orgplane.invalid", fetch: double, apiKey: "opk_test" })
    try {
      expect(await client.system.health()).toEqual({ ok: true, version: "double" })
    } finally {
      await client.close()
    }
    expect(requests.map((request) => [request.method, request.url, request.headers.get("x-api-key")])).toEqual([
      ["GET", "http://orgplane.invalid/health", "opk_test"]
    ])
  })
})

describe("hooks", () => {
  it("are called once per attempt, retries included, and onRequest's headers are sent", async () => {
    fake.script(
      { status: 503, body: unavailable, headers: { "x-request-id": "r1" } },
      { status: 503, body: unavailable, headers: { "x-request-id": "r2" } },
      { status: 200, body: FakeServer.health, headers: { "x-request-id": "r3" } }
    )
    const hooks = recorder()
    await withClient({ ...hooks, maxRetries: 2, token: "tok_1" }, (client) => client.system.health())

    expect(fake.requests.map((request) => request.headers["x-attempt"])).toEqual(["1", "2", "3"])
    expect(hooks.requests.map((request) => [request.method, request.url, request.attempt])).toEqual([
      ["GET", `${fake.url}/health`, 1],
      ["GET", `${fake.url}/health`, 2],
      ["GET", `${fake.url}/health`, 3]
    ])
    expect(hooks.requests[0]!.headers.authorization).toBe("Bearer tok_1")
    expect(hooks.responses.map(([response, request]) => [response.status, response.requestId, request.attempt])).toEqual([
      [503, "r1", 1],
      [503, "r2", 2],
      [200, "r3", 3]
    ])
    // What onResponse sees of the request includes the headers onRequest added.
    expect(hooks.responses.map(([, request]) => request.headers["x-attempt"])).toEqual(["1", "2", "3"])
    for (const [response] of hooks.responses) {
      expect(response.durationMs).toBeGreaterThanOrEqual(0)
      expect(response.headers["content-type"]).toBe("application/json")
    }
  })

  it("start again at attempt 1 on the next call, and include the query in the URL", async () => {
    fake.script({ status: 200, body: { items: [], nextCursor: null } }, { status: 200, body: { items: [], nextCursor: null } })
    const hooks = recorder()
    await withClient(hooks, async (client) => {
      await client.members.list({ urlParams: { limit: 5 } })
      await client.members.list()
    })
    expect(hooks.requests.map((request) => [request.url, request.attempt])).toEqual([
      [`${fake.url}/v1/members?limit=5`, 1],
      [`${fake.url}/v1/members`, 1]
    ])
  })

  it("see no response for an attempt that got none; the error carries the request id it sent", async () => {
    fake.script("drop", "drop")
    const hooks = recorder()
    const error = await rejection(
      withClient({
        maxRetries: 1,
        onRequest: (request) => hooks.onRequest(request) && { "x-request-id": `mine-${request.attempt}` },
        onResponse: hooks.onResponse
      }, (client) => client.system.health())
    )
    expect(error).toBeInstanceOf(OrgplaneConnectionError)
    expect(error).toMatchObject({ timedOut: false, requestId: "mine-2" })
    expect(hooks.requests.map((request) => request.attempt)).toEqual([1, 2])
    expect(hooks.responses).toEqual([])
    expect(fake.requests.map((request) => request.headers["x-request-id"])).toEqual(["mine-1", "mine-2"])

    fake.script("hang")
    const timedOut = await rejection(
      withClient({ timeout: 100, maxRetries: 0, headers: { "x-request-id": "slow-1" } }, (client) => client.system.health())
    )
    expect(timedOut).toMatchObject({ timedOut: true, requestId: "slow-1" })
    expect((timedOut as Error).message).toMatch(/^no answer from the server at http:\/\/127\.0\.0\.1:\d+ \(no response within 100ms\)$/)
    // On a loaded machine the request may reach the fake after the client gave up: it must not take the next
    // test's scripted reply.
    await Wait.until(() => fake.requests.length === 1, "the timed-out request to reach the fake")
  })

  it("may be asynchronous; a hook that throws fails the call with its error, without a retry", async () => {
    fake.script({ status: 200, body: FakeServer.health })
    const order: Array<string> = []
    await withClient({
      onRequest: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, 10))
        order.push(`request ${request.attempt}`)
        return { authorization: "Bearer refreshed" }
      },
      onResponse: async (response) => {
        await new Promise((resolve) => setTimeout(resolve, 10))
        order.push(`response ${response.status}`)
      }
    }, (client) => client.system.health())
    expect(order).toEqual(["request 1", "response 200"])
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer refreshed")

    fake.script({ status: 200, body: FakeServer.health })
    const refused = new Error("no token today")
    const error = await rejection(withClient({
      maxRetries: 2,
      onRequest: () => {
        throw refused
      }
    }, (client) => client.system.health()))
    expect(error).toBe(refused)
    expect(fake.requests).toHaveLength(0)
  })

  it("report the answer a call rejects with", async () => {
    fake.script({ status: 404, body: { error: "team_not_found", message: "No such team." }, headers: { "x-request-id": "r404" } })
    const hooks = recorder()
    const error = await rejection(
      withClient(hooks, (client) => client.teams.get({ path: { teamId: "tem_01h2xcejqtf2nbrexx3vqjhp41" } }))
    )
    expect(error).toBeInstanceOf(OrgplaneError)
    expect(error).toMatchObject({ status: 404, code: "team_not_found", requestId: "r404" })
    expect(hooks.responses.map(([response]) => [response.status, response.requestId])).toEqual([[404, "r404"]])
  })
})

describe("options in the Effect client", () => {
  it.live("headers, fetch and hooks apply to every attempt", () =>
    Effect.gen(function*() {
      fake.script({ status: 503 }, { status: 200, body: FakeServer.health })
      const hooks = recorder()
      const fetched: Array<string> = []
      const health = yield* Effect.flatMap(OrgplaneClient, (client) => client.system.health()).pipe(
        Effect.provide(layerFetch({
          baseUrl: fake.url,
          retryDelay: 1,
          headers: { "x-tenant": "acme" },
          fetch: (input, init) => {
            fetched.push(String(input))
            return fetch(input, init)
          },
          ...hooks
        }))
      )
      expect(health).toEqual(FakeServer.health)
      expect(fetched).toHaveLength(2)
      expect(fake.requests.map((request) => [request.headers["x-tenant"], request.headers["x-attempt"]])).toEqual([
        ["acme", "1"],
        ["acme", "2"]
      ])
      expect(hooks.responses.map(([response, request]) => [response.status, request.attempt])).toEqual([[503, 1], [200, 2]])
    }))
})
