/**
 * platform/Idempotency.ts (with IdempotencyKeys.ts and StoredResponse.ts) through real HTTP, on a fresh migrated
 * database: a small API of the test's own (notes, written in `transaction`s), whose writes are wrapped in `around`
 * and served behind `middleware` as the router's global middleware, as the server is meant to wire them (the module's
 * header): replay byte for byte with `Idempotent-Replayed`, a kept answer sealed, a reused key (422), a key in use (409 with `Retry-After`), kept 4xx,
 * 5xx not kept, the credential's scope, anonymous operations and reads ignored, a bad key (400), expiry and the
 * hourly job; and requests racing for one key, on Postgres across two servers whose claims the test makes collide
 * (http/LimitsConcurrency.test.ts's way: a lock held until every request waits on it); and a COMMIT whose answer is
 * lost, behind the database proxy (`cutAt`, with `down` for a database gone at that moment): the server's look at
 * the key's row, the values a process kept answered by its retry without running the write again, a transaction
 * that did not commit run again, and another process's 409 `idempotency_response_lost`, each counted in rows of an
 * append-only table.
 *
 * Not covered here: the OpenAPI document's parameters (the schema's Api.test.ts).
 *
 * A kept answer 0.1.0's server sealed (and the secret it sealed it with) opens here, so a request retried across the
 * upgrade is still answered: the values below were recorded from 0.1.0's code, and are never re-recorded.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import {
  apiOf,
  Authentication,
  idempotentOperations,
  Conflict,
  ConflictResponse,
  CurrentActor,
  type Actor,
  ServiceUnavailable,
  ServiceUnavailableResponse,
  Unauthorized,
  User,
  UserId,
  ApiKeyId,
  SessionId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { createServer } from "node:http"
import * as Pg from "pg"
import { typeid } from "typeid-js"
import { migrations } from "../src/migrations/index.js"
import * as HttpErrors from "../src/platform/HttpErrors.js"
import * as Idempotency from "../src/platform/Idempotency.js"
import * as IdempotencyKeys from "../src/platform/IdempotencyKeys.js"
import { migrate } from "../src/platform/Migrator.js"
import { catchUniqueViolation, orUnavailable, transaction } from "../src/platform/Sql.js"
import * as Database from "../src/platform/Database.js"
import * as StoredResponse from "../src/platform/StoredResponse.js"
import type * as DatabaseProxy from "./support/DatabaseProxy.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** The IV of 0.1.0's seal below: twelve bytes of 7. */
const fixedIv = Buffer.alloc(12, 7)

// The API: notes, made and changed by signed-in callers; a sign-up open to anyone; a read.

const NoteInput = Schema.Struct({ name: Schema.String })
const Note = Schema.Struct({ name: Schema.String, owner: Schema.String, secret: Schema.String })
const NotePath = Schema.Struct({ name: Schema.String })
const LineInput = Schema.Struct({ text: Schema.String })
const Line = Schema.Struct({ id: Schema.Number, note: Schema.String, text: Schema.String })

class NotesApi extends HttpApiGroup.make("notes")
  .add(HttpApiEndpoint.post("create", "/v1/notes", { payload: NoteInput, success: Note.pipe(HttpApiSchema.status(201)), error: [ConflictResponse] }))
  .add(HttpApiEndpoint.patch("rename", "/v1/notes/:name", { params: NotePath, payload: NoteInput, success: Note, error: [ConflictResponse] }))
  .add(HttpApiEndpoint.delete("remove", "/v1/notes/:name", { params: NotePath, success: HttpApiSchema.NoContent, error: [ConflictResponse] }))
  // Waits for the test's gate, then answers or fails as the test says: a request that runs for as long as needed.
  .add(HttpApiEndpoint.post("publish", "/v1/notes/:name/publish", { params: NotePath, payload: NoteInput, success: Note }))
  .add(HttpApiEndpoint.get("list", "/v1/notes", { success: Schema.Array(Note) }))
  // Adds a line to a note, in one transaction: nothing stops a second run from adding a second line.
  .add(HttpApiEndpoint.post("addLine", "/v1/notes/:name/lines", { params: NotePath, payload: LineInput, success: Line.pipe(HttpApiSchema.status(201)) }))
  .middleware(Authentication)
{}

class SignUpApi extends HttpApiGroup.make("open")
  .add(HttpApiEndpoint.post("signUp", "/v1/open/sign-up", { payload: NoteInput, success: Note.pipe(HttpApiSchema.status(201)), error: [ConflictResponse, ServiceUnavailableResponse] }))
{}

const Api = apiOf(NotesApi, SignUpApi)

/** What the handlers did, and what the test tells `publish` to do. */
interface Probe {
  runs: number
  gate: Deferred.Deferred<void> | undefined
  started: Deferred.Deferred<void> | undefined
  failNext: boolean
}

const probe: Probe = { runs: 0, gate: undefined, started: undefined, failNext: false }

/** Callers by credential: a session token (bearer) or an API key (`x-api-key`), each its own `Actor`. */
const userOf = (name: string) =>
  new User({ id: Schema.decodeSync(UserId)(typeid("usr").toString()), email: `${name}@example.com`, name, createdAt: new Date() })
const ada = userOf("ada")
const grace = userOf("grace")
const session = (user: User): Actor => ({
  user,
  credential: { _tag: "Session", sessionId: Schema.decodeSync(SessionId)(typeid("ses").toString()), ssoConnectionId: null, authenticatedAt: new Date() },
  organization: null,
  membership: null
})
const bearers = new Map<string, Actor>([["ada-session", session(ada)], ["ada-other-session", session(ada)], ["grace-session", session(grace)]])
const apiKeys = new Map<string, Actor>([["ada-api-key", {
  user: ada,
  credential: { _tag: "ApiKey", apiKeyId: Schema.decodeSync(ApiKeyId)(typeid("apk").toString()), scopes: null },
  organization: null,
  membership: null
}]])

const resolve = (callers: Map<string, Actor>, credential: Redacted.Redacted<string>) => {
  const actor = callers.get(Redacted.value(credential))
  return actor === undefined ? Effect.fail(Unauthorized.because("session_unknown")) : Effect.succeed(actor)
}

const AuthenticationLive = Layer.succeed(Authentication, Authentication.of({
  bearer: (httpEffect, { credential }) => Effect.flatMap(resolve(bearers, credential), (actor) => Effect.provideService(httpEffect, CurrentActor, actor)),
  apiKey: (httpEffect, { credential }) => Effect.flatMap(resolve(apiKeys, credential), (actor) => Effect.provideService(httpEffect, CurrentActor, actor))
}))

const noteExists = new Conflict({ error: "team_exists", message: "A note with this name exists." })

const ownerOf = CurrentActor.useSync((actor) => actor.user.name)

/** A note made in one transaction (the key commits with it), with a secret shown once. */
const createNote = (name: string, owner: string) =>
  transaction(SqlClient.SqlClient.use((sql) =>
    Effect.map(
      sql<{ name: string; owner: string; secret: string }>`INSERT INTO notes (name, owner, secret) VALUES (${name}, ${owner}, ${`secret-${crypto.randomUUID()}`}) RETURNING name, owner, secret`,
      (rows) => rows[0]!
    )).pipe(catchUniqueViolation(() => noteExists)))

const NotesLive = HttpApiBuilder.group(Api, "notes", (handlers) =>
  handlers
    .handle("create", Idempotency.around(({ payload }) =>
      Effect.flatMap(ownerOf, (owner) => Effect.andThen(Effect.sync(() => probe.runs++), createNote(payload.name, owner)))))
    .handle("rename", Idempotency.around(({ params, payload }) =>
      Effect.flatMap(ownerOf, (owner) =>
        transaction(SqlClient.SqlClient.use((sql) =>
          Effect.flatMap(
            sql<{ name: string; owner: string; secret: string }>`UPDATE notes SET name = ${payload.name} WHERE name = ${params.name} AND owner = ${owner} RETURNING name, owner, secret`,
            (rows) => rows[0] === undefined ? Effect.fail(new Conflict({ error: "team_exists", message: "No such note." })) : Effect.succeed(rows[0])
          )).pipe(catchUniqueViolation(() => noteExists))))))
    .handle("remove", Idempotency.around(({ params }) =>
      Effect.flatMap(ownerOf, (owner) =>
        transaction(SqlClient.SqlClient.use((sql) =>
          Effect.flatMap(
            sql<{ name: string }>`DELETE FROM notes WHERE name = ${params.name} AND owner = ${owner} RETURNING name`,
            (rows) => rows.length === 0 ? Effect.fail(new Conflict({ error: "team_exists", message: "No such note." })) : Effect.void
          ))))))
    .handle("publish", Idempotency.around(({ params }) =>
      Effect.gen(function*() {
        probe.runs++
        if (probe.started !== undefined) yield* Deferred.succeed(probe.started, undefined)
        if (probe.gate !== undefined) yield* Deferred.await(probe.gate)
        if (probe.failNext) {
          probe.failNext = false
          return yield* new ServiceUnavailable({ message: "The database is not available right now; retry later." })
        }
        return { name: params.name, owner: yield* ownerOf, secret: `published ${probe.runs}` }
      })))
    .handle("list", () =>
      orUnavailable(SqlClient.SqlClient.use((sql) => sql<{ name: string; owner: string; secret: string }>`SELECT name, owner, secret FROM notes ORDER BY name`)))
    .handle("addLine", Idempotency.around(({ params, payload }) =>
      transaction(SqlClient.SqlClient.use((sql) =>
        Effect.map(
          sql<{ id: number; note: string; text: string }>`INSERT INTO note_lines (note, text) VALUES (${params.name}, ${payload.text}) RETURNING id, note, text`,
          (rows) => rows[0]!
        ))))))

// Open to anyone: it takes no key, so its handler is not wrapped (HttpErrors.group wraps those of `idempotentOperations`).
const SignUpLive = HttpApiBuilder.group(Api, "open", (handlers) => handlers.handle("signUp", ({ payload }) => createNote(payload.name, "anonymous")))

const Prepared = Layer.effectDiscard(Effect.andThen(
  migrate(migrations),
  SqlClient.SqlClient.use((sql) =>
    Effect.andThen(
      sql`CREATE TABLE IF NOT EXISTS notes (name text PRIMARY KEY, owner text NOT NULL, secret text NOT NULL)`,
      sql`CREATE TABLE IF NOT EXISTS note_lines (id serial PRIMARY KEY, note text NOT NULL, text text NOT NULL)`
    ))
))

/** A server of the API on `database`, for the scope: its URL. */
const serveOn = (database: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  Effect.gen(function*() {
    const storage = Layer.provideMerge(Prepared, database)
    const app = Layer.mergeAll(HttpApiBuilder.layer(Api), Idempotency.middlewareLayer).pipe(
      Layer.provide([NotesLive, SignUpLive]),
      Layer.provide([HttpErrors.layer, AuthenticationLive]),
      // A lost COMMIT is looked for half a second, not the server's 2: these tests lose a few dozen.
      Layer.provide(Idempotency.layer.pipe(Layer.provide(Layer.succeed(Idempotency.CommitCheckTimeout, Duration.millis(500))))),
      Layer.provide(storage)
    )
    // The handlers read the database per request: the router serves them with it (one build of `storage`).
    const context = yield* Layer.build(
      HttpRouter.serve(app, { disableLogger: true }).pipe(
        Layer.provide(storage),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    return HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
  })

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly body: unknown
}

interface Sent {
  readonly token?: string | undefined
  readonly apiKey?: string | undefined
  readonly key?: string | undefined
  readonly body?: unknown
}

const send = (url: string, method: string, path: string, sent: Sent = {}) =>
  Effect.promise(async (): Promise<Answer> => {
    const headers: Record<string, string> = {}
    if (sent.token !== undefined) headers["authorization"] = `Bearer ${sent.token}`
    if (sent.apiKey !== undefined) headers["x-api-key"] = sent.apiKey
    if (sent.key !== undefined) headers["idempotency-key"] = sent.key
    if (sent.body !== undefined) headers["content-type"] = "application/json"
    const response = await fetch(`${url}${path}`, sent.body === undefined ? { method, headers } : { method, headers, body: JSON.stringify(sent.body) })
    const text = await response.text()
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = text
    }
    return { status: response.status, headers: response.headers, text, body }
  })

const replayed = (answer: Answer) => answer.headers.get("idempotent-replayed")

/** A member of an answer's JSON object (undefined when the body is no object). */
const member = (answer: Answer, name: string): unknown =>
  typeof answer.body === "object" && answer.body !== null ? Reflect.get(answer.body, name) : undefined
/** An error body's `error`. */
const errorOf = (answer: Answer) => member(answer, "error")
/** A note the API answered, read by its schema. */
const noteOf = (answer: Answer) => Schema.decodeUnknownSync(Note)(answer.body)

const noteNames = (url: string) =>
  Effect.map(send(url, "GET", "/v1/notes", { token: "ada-session" }), (answer) => Schema.decodeUnknownSync(Schema.Array(Note))(answer.body).map((note) => note.name))


/** One fresh database and a server on it, for the scope. */
const started = Effect.gen(function*() {
  const database = yield* TestDatabase.layer({ migrated: true })
  // One build of the database for the server and the test's own statements.
  const context = yield* Layer.build(database)
  const shared = Layer.succeedContext(context)
  const url = yield* serveOn(shared)
  return { url, sql: Context.get(context, SqlClient.SqlClient) }
})

const reset = () => {
  probe.runs = 0
  probe.gate = undefined
  probe.started = undefined
  probe.failNext = false
}

describe("StoredResponse", () => {
  it("seals and opens an answer, with the same credential only; an answer 0.1.0 kept opens", () => {
    const stored: StoredResponse.Stored = { status: 201, headers: { "content-type": "application/json" }, contentType: "application/json", body: Buffer.from(`{"key":"sk_1"}`).toString("base64") }
    // The secret 0.1.0 derived for this credential and use.
    expect(StoredResponse.secretOf("token-1", "answer").toString("hex")).toEqual("5e77565f452c2ad426f63843380eb8e4db58ecd540e53165cbc28b863cd04e7e")
    expect(StoredResponse.secretOf("token-1", "request")).not.toEqual(StoredResponse.secretOf("token-1", "answer"))
    const secret = StoredResponse.secretOf("token-1", "answer")
    const sealed = StoredResponse.seal(secret, "scope\nkey", stored)
    expect(StoredResponse.open(secret, "scope\nkey", sealed)).toEqual(stored)
    // `stored`, kept by 0.1.0's server for this credential, scope and key (with the IV above).
    const by010 = "v1:BwcHBwcHBwcHBwcH:wa_6vmRlHTKfoaW0KzGBrg:OwZaOLdOXUxUCLTuV1YLYWKpwMQc7bLh1mudHI__hhg4w7eN57BNIwyXHcIfOFZzA2l4WhsSO8Ier1XnrADdk1uyzCvDz6tRHs7dZtIHr0M_4wRYAUGKnU3RzpEz1Io7pCyCf7rP7nttspvGbf-_LtE6tZZG0pZzpWjP"
    expect(by010.startsWith(`v1:${fixedIv.toString("base64url")}:`)).toBe(true)
    expect(StoredResponse.open(secret, "scope\nkey", by010)).toEqual(stored)
    expect(StoredResponse.open(StoredResponse.secretOf("token-2", "answer"), "scope\nkey", sealed)).toBeUndefined()
    expect(StoredResponse.open(secret, "scope\nother", sealed)).toBeUndefined()
    expect(StoredResponse.open(secret, "scope\nkey", sealed.replace(/^v1:/, "v2:"))).toBeUndefined()
    const response = StoredResponse.toResponse(stored)
    // The response carries its body's length as a header, which is then kept with the rest (and is the same).
    expect([response.status, response.headers["content-type"], StoredResponse.capture(response)])
      .toEqual([201, "application/json", { ...stored, headers: { ...stored.headers, "content-length": "14" } }])
    expect(StoredResponse.capture(StoredResponse.toResponse({ status: 204, headers: {} }))).toEqual({ status: 204, headers: {} })
  })
})

describe(`a write with an Idempotency-Key (${TestDatabase.kind})`, () => {
  it("is taken by the writes that require credentials, the ones this API wraps in `around`", () => {
    expect([...idempotentOperations(Api).ids].sort()).toEqual(["notes.addLine", "notes.create", "notes.publish", "notes.remove", "notes.rename"])
  })

  it.live("is answered again, byte for byte, with Idempotent-Replayed, and makes its change once", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      const first = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Platform" }, key: "create-platform" })
      expect(first.status).toBe(201)
      expect(replayed(first)).toBeNull()
      const again = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Platform" }, key: "create-platform" })
      expect(again.status).toBe(201)
      expect(again.text).toBe(first.text)
      expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
      expect(replayed(again)).toBe("true")
      expect(probe.runs).toBe(1)
      expect(yield* noteNames(url)).toEqual(["Platform"])

      // A change and a removal too: without its key, the second DELETE would be a 409 here.
      const renamed = yield* send(url, "PATCH", "/v1/notes/Platform", { token: "ada-session", body: { name: "Infra" }, key: "rename" })
      const renamedAgain = yield* send(url, "PATCH", "/v1/notes/Platform", { token: "ada-session", body: { name: "Infra" }, key: "rename" })
      expect([renamed.status, renamedAgain.text, replayed(renamedAgain)]).toEqual([200, renamed.text, "true"])
      const removed = yield* send(url, "DELETE", "/v1/notes/Infra", { token: "ada-session", key: "remove" })
      const removedAgain = yield* send(url, "DELETE", "/v1/notes/Infra", { token: "ada-session", key: "remove" })
      expect([removed.status, removedAgain.status, removedAgain.text, replayed(removedAgain)]).toEqual([204, 204, "", "true"])
      expect((yield* send(url, "DELETE", "/v1/notes/Infra", { token: "ada-session" })).status).toBe(409)
    }).pipe(Effect.scoped))

  it.live("keeps an answer carrying a secret shown once sealed, and shows it again only to the same credential", () =>
    Effect.gen(function*() {
      reset()
      const { url, sql } = yield* started
      const created = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "nightly-release-pipeline" }, key: "ci-key" })
      expect(created.status).toBe(201)
      const again = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "nightly-release-pipeline" }, key: "ci-key" })
      expect(noteOf(again).secret).toBe(noteOf(created).secret)
      const kept = yield* sql<{ response: string }>`SELECT response FROM idempotency_keys WHERE key = 'ci-key'`
      expect(kept).toHaveLength(1)
      expect(kept[0]!.response).not.toContain(noteOf(created).secret)
      // A name long enough that random ciphertext never spells it by chance.
      expect(kept[0]!.response).not.toContain("nightly-release-pipeline")
      expect(kept[0]!.response.startsWith("v1:")).toBe(true)
      expect(yield* noteNames(url)).toEqual(["nightly-release-pipeline"])
    }).pipe(Effect.scoped))

  it.live("refuses the same key for another request with 422 idempotency_key_reused, changing nothing", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      const first = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "One" }, key: "k-reused" })
      expect(first.status).toBe(201)
      const otherBody = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Two" }, key: "k-reused" })
      expect(otherBody.status).toBe(422)
      expect(otherBody.body).toEqual({ error: "idempotency_key_reused", message: expect.stringContaining("another request") })
      const otherPath = yield* send(url, "PATCH", "/v1/notes/One", { token: "ada-session", body: { name: "One" }, key: "k-reused" })
      expect(otherPath.status).toBe(422)
      const otherQuery = yield* send(url, "POST", "/v1/notes?x=1", { token: "ada-session", body: { name: "One" }, key: "k-reused" })
      expect(otherQuery.status).toBe(422)
      expect(yield* noteNames(url)).toEqual(["One"])
    }).pipe(Effect.scoped))

  it.live("keeps the operation's own 4xx answer: the retry answers it again even once it would succeed", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      expect((yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Dup" } })).status).toBe(201)
      const taken = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Dup" }, key: "k-conflict" })
      expect(taken.status).toBe(409)
      expect(errorOf(taken)).toBe("team_exists")
      expect((yield* send(url, "DELETE", "/v1/notes/Dup", { token: "ada-session" })).status).toBe(204)
      const again = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Dup" }, key: "k-conflict" })
      expect([again.status, again.text, replayed(again)]).toEqual([409, taken.text, "true"])
      expect(yield* noteNames(url)).toEqual([])
    }).pipe(Effect.scoped))

  it.live("answers 409 idempotency_key_in_use while the first request runs, and a retry runs again after a 5xx", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      probe.gate = yield* Deferred.make<void>()
      probe.started = yield* Deferred.make<void>()
      probe.failNext = true
      const publish = (name: string) => send(url, "POST", "/v1/notes/Box/publish", { token: "ada-session", body: { name }, key: "k-upgrade" })
      const first = yield* Effect.forkChild(publish("2"))
      yield* Deferred.await(probe.started)
      const during = yield* publish("2")
      expect(during.status).toBe(409)
      expect(during.body).toEqual({ error: "idempotency_key_in_use", message: expect.any(String) })
      expect(during.headers.get("retry-after")).toBe("1")
      // The request is checked first: another body is 422 even while the key is in use.
      expect((yield* publish("3")).status).toBe(422)
      yield* Deferred.succeed(probe.gate, undefined)
      // The first fails for want of the database: 503, not kept.
      expect((yield* Fiber.join(first)).status).toBe(503)

      const retried = yield* publish("2")
      expect(retried.status).toBe(200)
      expect(replayed(retried)).toBeNull()
      expect(noteOf(retried).secret).toBe("published 2")
      expect(probe.runs).toBe(2)
      const replay = yield* publish("2")
      expect([replay.text, replayed(replay), probe.runs]).toEqual([retried.text, "true", 2])
    }).pipe(Effect.scoped))

  it.live("is scoped by the credential: another caller's, another session's or an API key's same key is a key of its own", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      const mine = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Mine" }, key: "k-shared" })
      expect(mine.status).toBe(201)
      const theirs = yield* send(url, "POST", "/v1/notes", { token: "grace-session", body: { name: "Theirs" }, key: "k-shared" })
      expect(theirs.status).toBe(201)
      // The same person in another session: the same key and body run anew (and find the note the first run made).
      const otherSession = yield* send(url, "POST", "/v1/notes", { token: "ada-other-session", body: { name: "Mine" }, key: "k-shared" })
      expect(otherSession.status).toBe(409)
      expect(replayed(otherSession)).toBeNull()
      const withKey = yield* send(url, "POST", "/v1/notes", { apiKey: "ada-api-key", body: { name: "Mine" }, key: "k-shared" })
      expect([withKey.status, replayed(withKey)]).toEqual([409, null])
      const again = yield* send(url, "POST", "/v1/notes", { apiKey: "ada-api-key", body: { name: "Mine" }, key: "k-shared" })
      expect([again.status, again.text, replayed(again)]).toEqual([409, withKey.text, "true"])
      const ownerAgain = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Mine" }, key: "k-shared" })
      expect([ownerAgain.status, ownerAgain.text]).toEqual([201, mine.text])
    }).pipe(Effect.scoped))

  it.live("is ignored by operations open to anonymous callers, and by reads", () =>
    Effect.gen(function*() {
      reset()
      const { url, sql } = yield* started
      const signedUp = yield* send(url, "POST", "/v1/open/sign-up", { body: { name: "Anon" }, key: "k-signup" })
      expect(signedUp.status).toBe(201)
      const again = yield* send(url, "POST", "/v1/open/sign-up", { body: { name: "Anon" }, key: "k-signup" })
      expect([again.status, errorOf(again), replayed(again)]).toEqual([409, "team_exists", null])
      // Not even checked: a bad key is no key for them.
      expect((yield* send(url, "POST", "/v1/open/sign-up", { body: { name: "Anon 2" }, key: "" })).status).toBe(201)
      expect((yield* send(url, "GET", "/v1/notes", { token: "ada-session", key: "\t" })).status).toBe(200)
      expect(yield* sql<{ key: string }>`SELECT key FROM idempotency_keys`).toEqual([])
    }).pipe(Effect.scoped))

  it.live("must be 1 to 255 printable ASCII characters, else 400 on the header", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      for (const key of ["", "x".repeat(256), "tab\there", "caf\u00e9"]) {
        const refused = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "T" }, key })
        expect(refused.status, JSON.stringify(key)).toBe(400)
        expect(member(refused, "details"), JSON.stringify(key)).toEqual([{ message: "Must be 1 to 255 printable ASCII characters.", path: ["idempotency-key"] }])
      }
      expect(probe.runs).toBe(0)
      expect((yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "T" }, key: "x".repeat(255) })).status).toBe(201)
    }).pipe(Effect.scoped))

  it.live("lives 24 hours: an older key is a new one, and the hourly job deletes it", () =>
    Effect.gen(function*() {
      reset()
      const { url, sql } = yield* started
      expect((yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Old" }, key: "k-expiry" })).status).toBe(201)
      // 23 hours on (the key's row made 23 hours earlier): still the key of "Old".
      yield* sql`UPDATE idempotency_keys SET created_at = created_at - interval '23 hours' WHERE key = 'k-expiry'`
      expect((yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "New" }, key: "k-expiry" })).status).toBe(422)
      yield* sql`UPDATE idempotency_keys SET created_at = created_at - interval '1 hour' WHERE key = 'k-expiry'`
      const later = yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "New" }, key: "k-expiry" })
      expect([later.status, replayed(later)]).toEqual([201, null])
      expect(yield* noteNames(url)).toEqual(["New", "Old"])

      const count = (key: string) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${key}`, (rows) => rows[0]!.n)
      expect((yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Old key" }, key: "k-old" })).status).toBe(201)
      yield* sql`UPDATE idempotency_keys SET created_at = created_at - interval '25 hours' WHERE key = 'k-old'`
      expect((yield* send(url, "POST", "/v1/notes", { token: "ada-session", body: { name: "Fresh" }, key: "k-fresh" })).status).toBe(201)
      // The job's statement, an hour on: k-old is 26 hours old, k-expiry was made anew just now, k-fresh too.
      const deleted = yield* IdempotencyKeys.deleteExpired({ now: new Date(Date.now() + 3_600_000) }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      expect(deleted).toBe(1)
      expect([yield* count("k-old"), yield* count("k-expiry"), yield* count("k-fresh")]).toEqual([0, 1, 1])
    }).pipe(Effect.scoped))
})

describe(`requests racing for one key (${TestDatabase.kind})`, () => {
  it.live("while one runs, every other gets 409 in use; once it answered, every retry gets its answer", () =>
    Effect.gen(function*() {
      reset()
      const { url } = yield* started
      probe.gate = yield* Deferred.make<void>()
      probe.started = yield* Deferred.make<void>()
      const publish = send(url, "POST", "/v1/notes/Race/publish", { token: "ada-session", body: { name: "race" }, key: "k-race" })
      const first = yield* Effect.forkChild(publish)
      yield* Deferred.await(probe.started)
      const during = yield* Effect.all(Array.from({ length: 8 }, () => publish), { concurrency: "unbounded" })
      expect(during.map((answer) => answer.status)).toEqual(Array(8).fill(409))
      expect(during.map(errorOf)).toEqual(Array(8).fill("idempotency_key_in_use"))
      yield* Deferred.succeed(probe.gate, undefined)
      const answered = yield* Fiber.join(first)
      expect(answered.status).toBe(200)
      const after = yield* Effect.all(Array.from({ length: 8 }, () => publish), { concurrency: "unbounded" })
      expect(after.map((answer) => [answer.status, answer.text, replayed(answer)])).toEqual(Array(8).fill([200, answered.text, "true"]))
      expect(probe.runs).toBe(1)
    }).pipe(Effect.scoped))
})

describe.skipIf(TestDatabase.postgresUrl === undefined)("claims colliding on Postgres, two servers on one database", () => {
  it.live("twelve requests with one key and body claim it together: one runs, the rest are told it is in use or replay it, nothing runs twice", () =>
    Effect.gen(function*() {
      reset()
      const databaseUrl = yield* TestDatabase.freshPostgres(TestDatabase.postgresUrl!, { migrated: true })
      const pool = () => Database.layerUrl(Redacted.make(databaseUrl), { maxConnections: 8 })
      const urls = [yield* serveOn(pool()), yield* serveOn(pool())]
      // The test's own connection holds a lock every claim's INSERT waits on, then lets them all go at once.
      const holder = new Pg.Client({ connectionString: databaseUrl })
      yield* Effect.acquireRelease(Effect.promise(() => holder.connect()), () => Effect.promise(() => holder.end()))
      yield* Effect.promise(() => holder.query("BEGIN"))
      yield* Effect.promise(() => holder.query("LOCK TABLE idempotency_keys IN SHARE MODE"))
      const pid: number = (yield* Effect.promise(() => holder.query("SELECT pg_backend_pid() AS pid"))).rows[0].pid
      const requests = yield* Effect.forkChild(Effect.all(
        Array.from({ length: 12 }, (_, i) => send(urls[i % 2]!, "POST", "/v1/notes", { token: "ada-session", body: { name: "Raced" }, key: "k-collide" })),
        { concurrency: "unbounded" }
      ))
      const waiting = Effect.promise(() =>
        holder.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`, [pid])
      ).pipe(Effect.map((result) => result.rows[0].n as number))
      // Each server's first claim waits on the lock (the others queue for its pool's connection: see the report of
      // this port, a server's pool did not open a second connection while the first waited on a lock).
      while ((yield* waiting) < 2) yield* Effect.sleep("20 millis")
      yield* Effect.sleep("200 millis")
      yield* Effect.promise(() => holder.query("ROLLBACK"))
      const answers = yield* Fiber.join(requests)
      const statuses = answers.map((answer) => answer.status)
      // The one that claimed made the note; every other either found the key in use or (once it answered) replays it.
      expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1)
      expect(statuses.every((status) => status === 201 || status === 409)).toBe(true)
      expect(answers.filter((answer) => answer.status === 409).every((answer) => errorOf(answer) === "idempotency_key_in_use")).toBe(true)
      expect(answers.filter((answer) => answer.status === 201 && replayed(answer) === null)).toHaveLength(1)
      expect(probe.runs).toBe(1)
      const retried = yield* send(urls[1]!, "POST", "/v1/notes", { token: "ada-session", body: { name: "Raced" }, key: "k-collide" })
      const made = answers.find((answer) => answer.status === 201 && replayed(answer) === null)!
      expect([retried.status, retried.text, replayed(retried)]).toEqual([201, made.text, "true"])
      expect(probe.runs).toBe(1)
    }).pipe(Effect.scoped), 60_000)
})

/** A line's transaction: its COMMIT, forwarded, then its connection cut, so the database commits and the server never hears so. */
const lostCommit = { statement: /^\s*COMMIT\b/i, after: /INSERT INTO note_lines\b/i }

/**
 * A fresh database behind the proxy, the servers to start on it (each with its own memory of keys), and the test's
 * own statements; `statementTimeout` for tests that freeze the database (their requests answer 503 after it and a second).
 */
const behindProxyWith = (timeouts: { readonly statementTimeout?: Duration.Input }) =>
  Effect.gen(function*() {
    const { proxy, layer } = yield* TestDatabase.behindProxy({ migrated: true, connectTimeout: "1 second", ...timeouts })
    const context = yield* Layer.build(layer)
    return { proxy, sql: Context.get(context, SqlClient.SqlClient), serve: serveOn(Layer.succeedContext(context)) }
  })
const behindProxy = behindProxyWith({})

/** Arms the proxy's next cut: then says whether it came. */
const armCut = (proxy: DatabaseProxy.DatabaseProxy, options: DatabaseProxy.CutOptions) => {
  let happened = false
  void proxy.cutAt(options).then(() => {
    happened = true
  })
  return () => happened
}

const addLine = (url: string, key: string) => send(url, "POST", "/v1/notes/Plan/lines", { token: "ada-session", body: { text: "ship it" }, key })

/** A line sent with `cut` armed and the database gone at the cut: the answer is 503 `service_unavailable`; then the database is back. */
const addLineCut = (proxy: DatabaseProxy.DatabaseProxy, url: string, key: string, cut: DatabaseProxy.CutOptions) =>
  Effect.gen(function*() {
    const happened = armCut(proxy, { ...cut, down: true })
    const lost = yield* addLine(url, key)
    expect(happened()).toBe(true)
    expect([lost.status, errorOf(lost)], lost.text).toEqual([503, "service_unavailable"])
    yield* Effect.promise(() => proxy.up())
  })

const lines = (sql: SqlClient.SqlClient) => sql<{ id: number; note: string; text: string }>`SELECT id, note, text FROM note_lines ORDER BY id`

describe(`a write whose COMMIT gets no answer (${TestDatabase.kind})`, () => {
  it.live("with the database still there: the server asks the key's row on another connection, and answers 201 at once", () =>
    Effect.gen(function*() {
      reset()
      const { proxy, sql, serve } = yield* behindProxy
      const url = yield* serve
      const cut = armCut(proxy, lostCommit)
      const added = yield* addLine(url, "k-asked")
      expect(cut()).toBe(true)
      expect([added.status, replayed(added)], added.text).toEqual([201, null])
      expect(yield* lines(sql)).toEqual([added.body])
      const again = yield* addLine(url, "k-asked")
      expect([again.status, again.text, replayed(again)]).toEqual([201, added.text, "true"])
      expect(yield* lines(sql)).toEqual([added.body])
    }).pipe(Effect.scoped), 30_000)

  it.live("with the database gone right after COMMIT: 503, and a retry to the same process answers the committed values without running the write again", () =>
    Effect.gen(function*() {
      reset()
      const { proxy, sql, serve } = yield* behindProxy
      const url = yield* serve
      yield* addLineCut(proxy, url, "k-remembered", lostCommit)
      // The COMMIT landed: the line is there, and the key's row says its transaction committed, with no answer.
      const committed = yield* lines(sql)
      expect(committed).toHaveLength(1)
      const key = yield* sql<{ markers: number; response: string | null }>`SELECT cardinality(commit_markers) AS markers, response FROM idempotency_keys WHERE key = 'k-remembered'`
      expect(key).toEqual([{ markers: 1, response: null }])

      const retried = yield* addLine(url, "k-remembered")
      expect([retried.status, replayed(retried), retried.body], retried.text).toEqual([201, "true", committed[0]])
      expect(yield* lines(sql)).toEqual(committed)
      // Now kept: answered again byte for byte.
      const again = yield* addLine(url, "k-remembered")
      expect([again.status, again.text, replayed(again)]).toEqual([201, retried.text, "true"])
      expect(yield* lines(sql)).toEqual(committed)
    }).pipe(Effect.scoped), 30_000)

  it.live("with the database gone before the COMMIT arrived: 503, and the retry runs the write, once (what it remembered did not commit)", () =>
    Effect.gen(function*() {
      reset()
      const { proxy, sql, serve } = yield* behindProxy
      const url = yield* serve
      yield* addLineCut(proxy, url, "k-not-committed", { ...lostCommit, forward: false })
      expect(yield* lines(sql)).toEqual([])

      const retried = yield* addLine(url, "k-not-committed")
      expect([retried.status, replayed(retried)], retried.text).toEqual([201, null])
      expect(yield* lines(sql)).toEqual([retried.body])
    }).pipe(Effect.scoped), 30_000)

  it.live("another process cannot give the lost answer: 409 in use while the first's lease runs, then idempotency_response_lost; the first still can", () =>
    Effect.gen(function*() {
      reset()
      const { proxy, sql, serve } = yield* behindProxy
      const first = yield* serve
      const second = yield* serve
      yield* addLineCut(proxy, first, "k-lost", lostCommit)
      const committed = yield* lines(sql)
      expect(committed).toHaveLength(1)

      // The first could not release its lease (the database was gone): the key is in use until the lease runs out.
      const during = yield* addLine(second, "k-lost")
      expect([during.status, errorOf(during), during.headers.get("retry-after")]).toEqual([409, "idempotency_key_in_use", "1"])
      // A minute on: the lease ran out.
      yield* sql`UPDATE idempotency_keys SET lease_expires_at = lease_expires_at - interval '61 seconds' WHERE key = 'k-lost'`
      const gone = yield* addLine(second, "k-lost")
      expect(gone.status, gone.text).toBe(409)
      expect(gone.body).toEqual({ error: "idempotency_response_lost", message: expect.stringContaining("read the resource") })
      expect(replayed(gone)).toBeNull()
      expect([errorOf(yield* addLine(second, "k-lost")), yield* lines(sql)]).toEqual(["idempotency_response_lost", committed])

      // The first process kept the transaction's values: it answers them.
      const remembered = yield* addLine(first, "k-lost")
      expect([remembered.status, replayed(remembered), remembered.body], remembered.text).toEqual([201, "true", committed[0]])
      expect(yield* lines(sql)).toEqual(committed)
    }).pipe(Effect.scoped), 30_000)
})

describe(`a claim whose answer is lost (${TestDatabase.kind})`, () => {
  it.live("the database stopped as the claim arrived (SIGSTOP): 503, and once it continues (and commits the claim), a retry runs the write once", () =>
    Effect.gen(function*() {
      reset()
      const { proxy, sql, serve } = yield* behindProxyWith({ statementTimeout: "1 second" })
      const url = yield* serve
      const frozen = proxy.freeze({ at: /INSERT INTO idempotency_keys\b/i })
      const refused = yield* addLine(url, "k-frozen-claim")
      yield* Effect.promise(() => frozen)
      expect([refused.status, errorOf(refused), refused.headers.get("retry-after")], refused.text).toEqual([503, "service_unavailable", "5"])
      // The database continues: the claim the server gave up on runs and commits, a lease no request runs under.
      proxy.resume()
      // (The embedded database takes one connection at a time: a new one is refused until the stopped one is done.)
      const claimed = sql<{ lease: string | null }>`SELECT lease_id AS lease FROM idempotency_keys WHERE key = 'k-frozen-claim'`.pipe(
        Effect.orElseSucceed(() => [])
      )
      while ((yield* claimed).length === 0) yield* Effect.sleep("20 millis")
      expect((yield* claimed)[0]!.lease).not.toBeNull()
      expect(yield* lines(sql)).toEqual([])

      const retried = yield* addLine(url, "k-frozen-claim")
      expect([retried.status, replayed(retried)], retried.text).toEqual([201, null])
      expect(yield* lines(sql)).toEqual([retried.body])
      const again = yield* addLine(url, "k-frozen-claim")
      expect([again.status, again.text, replayed(again)]).toEqual([201, retried.text, "true"])
      expect(yield* lines(sql)).toEqual([retried.body])
    }).pipe(Effect.scoped), 30_000)

  /**
   * Where an attempt's connection is lost, with the database gone at that moment (each then back): the statement
   * runs and its answer is lost (`lost`), or it never arrives (`unsent`).
   */
  const faults: Record<string, DatabaseProxy.CutOptions | undefined> = {
    "claim lost": { statement: /INSERT INTO idempotency_keys\b/i },
    "claim unsent": { statement: /INSERT INTO idempotency_keys\b/i, forward: false },
    "commit lost": lostCommit,
    "commit unsent": { ...lostCommit, forward: false },
    "kept answer lost": { statement: /SET response_status\b/i },
    "kept answer unsent": { statement: /SET response_status\b/i, forward: false },
    none: undefined
  }

  it.live("every two faults in a row, then a retry: the write made exactly once, and every 201 is its answer", () =>
    Effect.gen(function*() {
      reset()
      const { proxy, sql, serve } = yield* behindProxy
      const url = yield* serve
      const attempt = (note: string, key: string, fault: DatabaseProxy.CutOptions | undefined) =>
        Effect.gen(function*() {
          const happened = fault === undefined ? () => false : armCut(proxy, { ...fault, down: true })
          const answer = yield* send(url, "POST", `/v1/notes/${note}/lines`, { token: "ada-session", body: { text: "once" }, key })
          if (happened()) yield* Effect.promise(() => proxy.up())
          // A fault the attempt never reached (its answer was kept before) is disarmed: a cut that matches nothing.
          else void proxy.cutAt({ statement: /(?!)/ })
          return answer
        })
      const names = Object.keys(faults)
      for (const first of names.filter((name) => name !== "none")) {
        for (const second of names) {
          const note = `${first} then ${second}`.replaceAll(" ", "-")
          const key = `k-${note}`
          const answers = [yield* attempt(note, key, faults[first]), yield* attempt(note, key, faults[second]), yield* attempt(note, key, undefined)]
          const made = yield* sql<{ id: number; note: string; text: string }>`SELECT id, note, text FROM note_lines WHERE note = ${note}`
          const what = `${note}: ${answers.map((answer) => `${answer.status} ${answer.text}`).join(" | ")}`
          expect(made, what).toHaveLength(1)
          expect(answers[2]!.status, what).toBe(201)
          for (const answer of answers) {
            if (answer.status === 201) expect(answer.body, what).toEqual(made[0])
            else expect([answer.status, errorOf(answer)], what).toEqual([503, "service_unavailable"])
          }
        }
      }
    }).pipe(Effect.scoped), 180_000)
})
