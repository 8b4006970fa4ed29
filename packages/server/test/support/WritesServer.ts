/**
 * A test-only API whose handlers are wrapped by hand the way platform/HttpErrors.ts's `group` wraps a server's:
 * each handler of an operation that writes through
 * `Authority.around`, and, when `audited`, that inside the audit recorder's `around` with the operation's action
 * (`AuditRecorder.layer` over `Config.layer()`'s settings).
 * The caller is the one the test registered under the request's `x-caller` header, provided as its middleware would
 * provide it: `CurrentMember` with `MemberStanding` (the identity area's statement, test/support/Members.ts),
 * `CurrentScimClient` or `CurrentWorker` with a standing the test switches. Served by Node on a free port, over
 * the database layer given (migrated first), with `HttpErrors.layer`.
 */
import { NodeHttpServer } from "@effect/platform-node"
import {
  apiOf,
  type AuditAction,
  Conflict,
  ConflictResponse,
  CurrentActor,
  CurrentMember,
  CurrentScimClient,
  CurrentWorker,
  Forbidden,
  ForbiddenResponse,
  type MemberContext,
  type OrganizationId,
  type ScimClient,
  ScimUnauthorizedResponse,
  ServiceUnavailableResponse,
  TeamId,
  Unauthorized,
  UnauthorizedResponse,
  type WorkerCaller
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { HttpRouter, HttpServer, HttpServerRequest } from "effect/http"
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import * as SqlClient from "effect/sql/SqlClient"
import { createServer } from "node:http"
import { migrations } from "../../src/migrations/index.js"
import * as Recorder from "../../src/platform/AuditRecorder.js"
import * as Authority from "../../src/platform/Authority.js"
import * as Config from "../../src/platform/Config.js"
import * as HttpErrors from "../../src/platform/HttpErrors.js"
import { IdGenerator, makeId } from "../../src/platform/Ids.js"
import { migrate } from "../../src/platform/Migrator.js"
import * as Principal from "../../src/platform/Principal.js"
import { catchUniqueViolation, orUnavailable, transaction } from "../../src/platform/Sql.js"
import * as Members from "./Members.js"

const Team = Schema.Struct({ id: TeamId, name: Schema.String })
const TeamResponse = Schema.Struct({ team: Team })
const refusals = [UnauthorizedResponse, ForbiddenResponse, ScimUnauthorizedResponse, ServiceUnavailableResponse] as const

class WritesApi extends HttpApiGroup.make("writes")
  .add(HttpApiEndpoint.post("create", "/teams", {
    payload: Schema.Struct({ name: Schema.String }),
    success: TeamResponse.pipe(HttpApiSchema.status(201)),
    error: [...refusals, ConflictResponse]
  }))
  .add(HttpApiEndpoint.get("list", "/teams", { success: Schema.Struct({ items: Schema.Array(Team) }), error: [...refusals] }))
  .add(HttpApiEndpoint.post("leave", "/leave", { success: HttpApiSchema.NoContent, error: [...refusals] }))
  .add(HttpApiEndpoint.delete("revokeOwnKey", "/own-key", { success: HttpApiSchema.NoContent, error: [...refusals] }))
  .add(HttpApiEndpoint.patch("rename", "/teams/:teamId", {
    params: { teamId: TeamId },
    payload: Schema.Struct({ name: Schema.String }),
    success: TeamResponse,
    error: [...refusals, ConflictResponse]
  }))
  .add(HttpApiEndpoint.post("signInFailed", "/sign-in-failed", { payload: Schema.Struct({ email: Schema.String }), error: [...refusals] }))
  .add(HttpApiEndpoint.put("auditSettings", "/audit-settings", { success: HttpApiSchema.NoContent, error: [...refusals] }))
  .add(HttpApiEndpoint.post("signOut", "/sign-out", { success: HttpApiSchema.NoContent, error: [...refusals] }))
{}

export const Api = apiOf(WritesApi)

/** Who a request acts as: registered by the test under the name its `x-caller` header sends. */
export type Caller =
  | { readonly _tag: "Member"; readonly member: MemberContext }
  | { readonly _tag: "Scim"; readonly client: ScimClient; live: boolean }
  | { readonly _tag: "Worker"; readonly worker: WorkerCaller; live: boolean }

export type Callers = Map<string, Caller>

const callerOf = (callers: Callers) =>
  Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) => callers.get(request.headers["x-caller"] ?? ""))

/** Provides the caller as its middleware would, with the standing its area provides beside it. */
const asCaller = (callers: Callers) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(callerOf(callers), (caller) =>
    Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => {
      if (caller === undefined) return effect
      switch (caller._tag) {
        case "Member":
          return effect.pipe(
            Effect.provideService(CurrentMember, caller.member),
            Effect.provideService(CurrentActor, caller.member),
            Effect.provideService(Authority.MemberStanding, Members.standing(sql))
          )
        case "Scim":
          return effect.pipe(
            Effect.provideService(CurrentScimClient, caller.client),
            Effect.provideService(Authority.ScimTokenStanding, () => Effect.sync(() => caller.live))
          )
        case "Worker":
          return effect.pipe(
            Effect.provideService(CurrentWorker, caller.worker),
            Effect.provideService(Authority.WorkerTokenStanding, () => Effect.sync(() => caller.live))
          )
      }
    }))

/** The organization the caller acts in, and the member's role check (a directory or a worker passes). */
const acting = (action: "teams.manage" | "teams.read") =>
  Effect.gen(function*() {
    const member = yield* Effect.serviceOption(CurrentMember)
    if (Option.isSome(member)) {
      yield* Principal.authorize(member.value, action)
      return { organizationId: member.value.organization.id, membershipId: member.value.membership.id }
    }
    const scim = yield* Effect.serviceOption(CurrentScimClient)
    const worker = yield* Effect.serviceOption(CurrentWorker)
    const organizationId: OrganizationId | undefined = Option.getOrUndefined(scim)?.organizationId ?? Option.getOrUndefined(worker)?.organizationId
    if (organizationId === undefined) return yield* Effect.fail(new Forbidden({ reason: "insufficient_role", message: "Nobody." }))
    return { organizationId, membershipId: null }
  })

const create = ({ payload }: { readonly payload: { readonly name: string } }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { membershipId, organizationId } = yield* acting("teams.manage")
    const id = yield* makeId("tem")
    return yield* transaction(Effect.gen(function*() {
      const now = new Date()
      yield* sql`INSERT INTO teams (id, organization_id, name, created_by_membership_id, created_at, updated_at)
                 VALUES (${id}, ${organizationId}, ${payload.name}, ${membershipId}, ${now}, ${now})`
      return { team: { id, name: payload.name } }
    }).pipe(catchUniqueViolation(() => new Conflict({ error: "team_exists", message: "A team of that name exists." }))))
  })

const list = () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { organizationId } = yield* acting("teams.read")
    const rows = yield* orUnavailable(sql<{ readonly id: string; readonly name: string }>`SELECT id, name FROM teams WHERE organization_id = ${organizationId} ORDER BY id`)
    return { items: rows.map((row) => ({ id: Schema.decodeUnknownSync(TeamId)(row.id), name: row.name })) }
  })

/** The member the request acts as. */
const currentMember = Effect.flatMap(Effect.serviceOption(CurrentMember), (member) =>
  Option.isSome(member) ? Effect.succeed(member.value) : Effect.fail(new Forbidden({ reason: "insufficient_role", message: "Members only." })))

/** The caller leaves: its own membership ended in the write, decided under the lock its change takes. */
const leave = () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const member = yield* currentMember
    yield* transaction(Effect.gen(function*() {
      yield* sql`UPDATE memberships SET removed_at = now() WHERE id = ${member.membership.id}`
      yield* Authority.changedHere({ membershipId: member.membership.id, ended: true })
    }))
  })

/** The caller revokes the API key it is made with. */
const revokeOwnKey = () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const member = yield* currentMember
    const credential = member.credential
    if (credential._tag !== "ApiKey") return
    yield* transaction(Effect.gen(function*() {
      yield* sql`DELETE FROM api_keys WHERE id = ${credential.apiKeyId}`
      yield* Authority.changedHere({ apiKeyId: credential.apiKeyId })
    }))
  })

/** Renames a team, describing the change (`describeChange`) inside its transaction. */
const rename = ({ params, payload }: { readonly params: { readonly teamId: TeamId }; readonly payload: { readonly name: string } }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { organizationId } = yield* acting("teams.manage")
    return yield* transaction(Effect.gen(function*() {
      const [row] = yield* sql<{ readonly name: string }>`SELECT name FROM teams WHERE organization_id = ${organizationId} AND id = ${params.teamId} FOR UPDATE`
      const before = { id: params.teamId, name: row?.name ?? "" }
      const after = { id: params.teamId, name: payload.name }
      yield* sql`UPDATE teams SET name = ${payload.name}, updated_at = now() WHERE id = ${params.teamId}`
      yield* Recorder.describeChange(Team, before, after)
      return { team: after }
    }))
  })

/** A sign-in with a wrong password: the attempt is recorded as failed in each organization of the person it named. */
const signInFailed = ({ payload }: { readonly payload: { readonly email: string } }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* orUnavailable(sql<{ readonly id: string; readonly name: string; readonly email: string; readonly organizationId: OrganizationId }>`
      SELECT u.id, u.name, u.email, m.organization_id AS "organizationId" FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = ${payload.email}`)
    const person = rows[0]
    if (person !== undefined) {
      yield* Recorder.describe({
        failure: { reason: "invalid_password", person: { id: person.id, name: person.name, email: person.email }, organizationIds: rows.map((row) => row.organizationId) }
      })
    }
    return yield* Effect.fail(Unauthorized.because("invalid_credentials"))
  })

/** How a write's handler is wrapped (HttpErrors.group's order): the recorder, when audited, around `Authority.around`. */
const write = (audited: boolean) =>
<Request extends object, A, E, R>(action: AuditAction, handler: (request: Request) => Effect.Effect<A, E, R>) =>
(request: Request): Effect.Effect<A, E | Authority.Refusal, R | Recorder.AuditRecorder> =>
  audited ? Recorder.around(action, Authority.around(handler))(request) : Authority.around(handler)(request)

const handlers = (callers: Callers, audited: boolean) =>
  HttpApiBuilder.group(Api, "writes", (group) =>
    group
      .handle("create", (request) => asCaller(callers)(write(audited)("team.create", create)(request)))
      .handle("list", () => asCaller(callers)(list()))
      .handle("leave", () => asCaller(callers)(write(audited)("member.remove", leave)({})))
      .handle("revokeOwnKey", () => asCaller(callers)(write(audited)("api_key.revoke", revokeOwnKey)({})))
      .handle("rename", (request) => asCaller(callers)(write(audited)("team.update", rename)(request)))
      .handle("signInFailed", (request) => asCaller(callers)(write(audited)("session.create", signInFailed)(request)))
      .handle("auditSettings", () => asCaller(callers)(write(audited)("audit.settings.update", () => Effect.asVoid(acting("teams.manage")))({})))
      .handle("signOut", () => asCaller(callers)(write(audited)("session.revoke", () => Effect.void)({}))))

/**
 * The audit log's partitions of this month and the next, which the server's start makes (platform/MonthlyPartitions.ts)
 * and this probe server does not run: `audit_events` has no DEFAULT partition.
 */
const auditPartitions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const now = new Date()
  for (const offset of [0, 1]) {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1))
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1))
    const name = `audit_events_p${start.getUTCFullYear()}${String(start.getUTCMonth() + 1).padStart(2, "0")}`
    yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF audit_events FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`)
  }
})

/** Serves the API over `database` (migrated first) on a free loopback port, for the scope. */
export const serve = Effect.fn("WritesServer.serve")(function*<E>(database: Layer.Layer<SqlClient.SqlClient, E>, callers: Callers, audited: boolean) {
  const context = yield* Layer.build(
    HttpRouter.serve(
      HttpApiBuilder.layer(Api).pipe(Layer.provide(handlers(callers, audited)), Layer.provide(HttpErrors.layer)),
      { disableLogger: true }
    ).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provideMerge(Recorder.AuditRecorder.layer),
      Layer.provideMerge(Config.layer()),
      Layer.provideMerge(IdGenerator.layer),
      Layer.provideMerge(Layer.effectDiscard(Effect.andThen(migrate(migrations), auditPartitions))),
      Layer.provideMerge(database)
    )
  )
  const sql = Context.get(context, SqlClient.SqlClient)
  const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
  return { url, sql, recorder: Context.get(context, Recorder.AuditRecorder) }
})

/** What the API's answers say, read loosely: a team made, or a refusal's `error` and `reason`. */
export interface Reply {
  readonly team?: { readonly id: string; readonly name: string }
  readonly error?: string
  readonly reason?: string
  readonly [member: string]: unknown
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  /** The JSON body; `{}` when there is none. */
  readonly body: Reply
}

/** A request as `caller`, the body read as JSON when it is some. */
export const request = (url: string, method: string, path: string, caller: string, body?: unknown) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { "x-caller": caller, "user-agent": "writes-test/1.0", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    const reply: Reply = text === "" ? {} : JSON.parse(text)
    return { status: response.status, headers: response.headers, body: reply }
  })

/** The served API, its database and its callers, shared by a file's tests (`Fixture.layer`). */
export class Fixture extends Context.Service<Fixture, {
  readonly url: string
  readonly sql: SqlClient.SqlClient
  readonly callers: Callers
  readonly recorder: Recorder.AuditRecorder["Service"]
}>()("test/WritesServer/Fixture") {
  /** `audited`: the writes' handlers run inside the audit recorder too. */
  static readonly layer = <E>(database: Layer.Layer<SqlClient.SqlClient, E>, options: { readonly audited?: boolean } = {}) =>
    Layer.effect(
      Fixture,
      Effect.gen(function*() {
        const callers: Callers = new Map()
        const { recorder, sql, url } = yield* serve(database, callers, options.audited ?? false)
        return { url, sql, callers, recorder }
      })
    )
}

/** Registers a member (its rows inserted) under a new name: what its requests send as `x-caller`. */
export const asMember = Effect.fn("WritesServer.asMember")(function*(member: MemberContext) {
  const { callers, sql } = yield* Fixture
  yield* Effect.provideService(Members.seed(member), SqlClient.SqlClient, sql)
  const name = member.membership.id
  callers.set(name, { _tag: "Member", member })
  return name
})
