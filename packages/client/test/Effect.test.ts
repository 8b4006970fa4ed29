import { describe, expect, it } from "@effect/vitest"
import { Conflict, Forbidden, InvalidRequest, MembersApi, NotFound, OrganizationNotFound, Unauthorized } from "@orgplane/schema"
import { Effect, Layer, Ref, Stream } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { afterAll, beforeAll } from "vitest"
import { type ClientOptions, layer, layerFetch, makeFor, OrgplaneClient, paginateStream } from "../src/index.js"
import { password, uniqueEmail } from "./Helpers.js"
import * as RealServer from "./RealServer.js"

// The server (the CLI's `serve`), out of process: the client on the wire.
let server: RealServer.RealServer
beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(() => server.close())

/** Runs `f` with a client on the test server, authenticated as `credentials` says. */
const withClient = <A, E>(credentials: Omit<ClientOptions, "baseUrl">, f: (client: OrgplaneClient["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(OrgplaneClient, f).pipe(Effect.provide(layerFetch({ baseUrl: server.url, ...credentials })))


/** A new user who owns a new organization, with the session token. */
const owner = Effect.gen(function*() {
  const email = uniqueEmail("owner")
  const signedUp = yield* withClient({}, (client) => client.users.signUp({ payload: { email, password, name: "Owner" } }))
  const token = signedUp.session.token
  const created = yield* withClient({ token }, (client) => client.organizations.create({ payload: { name: "Acme" } }))
  return { email, token, user: signedUp.user, organization: created.organization, membership: created.membership }
})

describe("Effect client", () => {
  it.live("signs up, signs in and reads the caller", () =>
    Effect.gen(function*() {
      const email = uniqueEmail("ada")
      const signedUp = yield* withClient({}, (client) => client.users.signUp({ payload: { email, password, name: "Ada" } }))
      expect(signedUp.user.email).toBe(email)
      expect(signedUp.session.expiresAt).toBeInstanceOf(Date)

      const signedIn = yield* withClient({}, (client) => client.users.signIn({ payload: { email, password } }))
      expect(signedIn.user.id).toBe(signedUp.user.id)
      expect(signedIn.session.token).not.toBe(signedUp.session.token)

      const me = yield* withClient({ token: signedIn.session.token }, (client) => client.users.me())
      expect(me.user.id).toBe(signedUp.user.id)
      expect(me.organization).toBeNull()
    }))

  it.live("creates an organization and makes it the active one", () =>
    Effect.gen(function*() {
      const { membership, organization, token } = yield* owner
      expect(organization.name).toBe("Acme")
      expect(membership.role).toBe("owner")
      const me = yield* withClient({ token }, (client) => client.users.me())
      expect(me.organization?.id).toBe(organization.id)
      expect(me.membership?.role).toBe("owner")
    }))

  it.live("creates, lists and revokes API keys, and a key authenticates until revoked", () =>
    Effect.gen(function*() {
      const { organization, token, user } = yield* owner
      const created = yield* withClient({ token }, (client) => client.apiKeys.create({ payload: { name: "ci" } }))
      expect(created.apiKey.name).toBe("ci")
      expect(created.key.startsWith(created.apiKey.prefix)).toBe(true)

      const page = yield* withClient({ token }, (client) => client.apiKeys.list({ query: {} }))
      expect(page.items.map((key) => key.id)).toEqual([created.apiKey.id])
      expect(page.nextCursor).toBeNull()

      const asKey = yield* withClient({ apiKey: created.key }, (client) => client.users.me())
      expect(asKey.user.id).toBe(user.id)
      expect(asKey.organization?.id).toBe(organization.id)

      yield* withClient({ token }, (client) => client.apiKeys.revoke({ params: { apiKeyId: created.apiKey.id } }))
      const afterRevoke = yield* withClient({ token }, (client) => client.apiKeys.list({ query: {} }))
      expect(afterRevoke.items).toEqual([])
      const rejected = yield* Effect.flip(withClient({ apiKey: created.key }, (client) => client.users.me()))
      expect(rejected).toBeInstanceOf(Unauthorized)
    }))

  it.live("fails with the API's typed errors", () =>
    Effect.gen(function*() {
      const { email, token } = yield* owner

      const anonymous = yield* Effect.flip(withClient({}, (client) => client.users.me()))
      expect(anonymous._tag).toBe("Unauthorized")
      expect(anonymous).toBeInstanceOf(Unauthorized)

      const wrongPassword = yield* Effect.flip(
        withClient({}, (client) => client.users.signIn({ payload: { email, password: "not the password" } }))
      )
      expect(wrongPassword._tag).toBe("Unauthorized")

      const taken = yield* Effect.flip(withClient({}, (client) => client.users.signUp({ payload: { email, password, name: "Again" } })))
      expect(taken).toBeInstanceOf(Conflict)
      expect(taken).toMatchObject({ _tag: "Conflict", error: "email_taken" })

      const missing = yield* Effect.flip(
        withClient({ token }, (client) =>
          client.apiKeys.revoke({ params: { apiKeyId: "apk_01h2xcejqtf2nbrexx3vqjhp41" as never } }))
      )
      expect(missing).toBeInstanceOf(NotFound)
      expect(missing).toMatchObject({ _tag: "NotFound", error: "api_key_not_found" })

      const { key } = yield* withClient({ token }, (client) => client.apiKeys.create({ payload: { name: "script" } }))
      const sessionOnly = yield* Effect.flip(
        withClient({ apiKey: key }, (client) => client.organizations.create({ payload: { name: "Other" } }))
      )
      expect(sessionOnly).toBeInstanceOf(Forbidden)
      expect(sessionOnly).toMatchObject({ _tag: "Forbidden", reason: "session_required" })

      const lonely = yield* withClient({}, (client) =>
        client.users.signUp({ payload: { email: uniqueEmail("lonely"), password, name: "Lonely" } }))
      const noOrganization = yield* Effect.flip(
        withClient({ token: lonely.session.token }, (client) => client.apiKeys.list({ query: {} }))
      )
      expect(noOrganization).toBeInstanceOf(OrganizationNotFound)
    }))

  it.live("calls without arguments the methods whose requests need nothing", () =>
    Effect.gen(function*() {
      const { token } = yield* owner
      const names = yield* withClient({ token }, (client) =>
        Effect.all([
          Effect.map(client.members.list(), (page) => page.items.map((member) => member.name)),
          Effect.map(client.members.list({}), (page) => page.items.map((member) => member.name)),
          Effect.map(client.members.list({ query: {} }), (page) => page.items.map((member) => member.name)),
          Effect.map(Stream.runCollect(paginateStream(client.members.list)), (items) => items.map((member) => member.name))
        ]))
      expect(names).toEqual([["Owner"], ["Owner"], ["Owner"], ["Owner"]])
      // Still generic in responseMode, for the response's headers.
      const [page, response] = yield* withClient({ token }, (client) => client.members.list({ responseMode: "decoded-and-response" }))
      expect(page.items).toHaveLength(1)
      expect(response.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
    }))

  it.live("a client of some groups only: their methods, with the errors every operation may answer", () =>
    Effect.gen(function*() {
      const { token } = yield* owner
      const client = yield* makeFor([MembersApi], { baseUrl: server.url, token }).pipe(Effect.provide(FetchHttpClient.layer))
      expect(Object.keys(client)).toEqual(["members"])
      expect((yield* client.members.list()).items.map((member) => member.name)).toEqual(["Owner"])
      // A 400 from the server decodes to the API-wide InvalidRequest.
      const error = yield* Effect.flip(client.members.list({ query: { cursor: "not-a-cursor" } }))
      expect(error).toBeInstanceOf(InvalidRequest)
    }))

  it.live("validates the request before sending it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(withClient({}, (client) => client.apiKeys.list({ query: { limit: 1000 } })))
      expect(error._tag).toBe("SchemaError")
    }))

  it.live("streams every item of a list, fetching pages only as they are needed", () =>
    Effect.gen(function*() {
      const { token } = yield* owner
      const names = ["k1", "k2", "k3", "k4", "k5"]
      for (const name of names) {
        yield* withClient({ token }, (client) => client.apiKeys.create({ payload: { name } }))
      }

      // Count the requests that reach the wire.
      const requests = yield* Ref.make(0)
      const counting = Layer.effect(
        HttpClient.HttpClient,
        Effect.map(HttpClient.HttpClient, HttpClient.tapRequest(() => Ref.update(requests, (n) => n + 1)))
      ).pipe(Layer.provide(FetchHttpClient.layer))
      const listing = (take: number) =>
        Effect.gen(function*() {
          const client = yield* OrgplaneClient
          return yield* paginateStream(client.apiKeys.list, { query: { limit: 2 } }).pipe(Stream.take(take), Stream.runCollect)
        }).pipe(Effect.provide(layer({ baseUrl: server.url, token }).pipe(Layer.provide(counting))))

      const all = yield* listing(100)
      expect(all.map((key) => key.name)).toEqual([...names].reverse())
      expect(yield* Ref.get(requests)).toBe(3)

      yield* Ref.set(requests, 0)
      const first = yield* listing(3)
      expect(first.map((key) => key.name)).toEqual(["k5", "k4", "k3"])
      expect(yield* Ref.get(requests)).toBe(2)
    }))
})
