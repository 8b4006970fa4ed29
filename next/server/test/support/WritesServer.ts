/**
 * A test-only API whose handlers are wrapped by hand the way packages/server's HttpErrors.ts `group` wraps a
 * server's (which next/server's does not do yet): each handler of an operation that writes through
 * `Authority.around`, and, when `audited`, that inside the audit recorder's `around` with the operation's action.
 * The caller is the one the test registered under the request's `x-caller` header, provided as its middleware would
 * provide it: `CurrentMember` with `MemberStanding` (the identity area's statement, test/support/Members.ts),
 * `CurrentScimClient` or `CurrentWorker` with a standing the test switches. Served by Node on a free port, over
 * the database layer given (migrated first), with `HttpErrors.layer`.
 */
import { NodeHttpServer } from "@effect/platform-node"
import {
  apiOf,
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
  UnauthorizedResponse,
  type WorkerCaller
} from "@orgplane-next/schema"
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
import * as Authority from "../../src/platform/Authority.js"
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

const handlers = (callers: Callers) =>
  HttpApiBuilder.group(Api, "writes", (group) =>
    group
      .handle("create", (request) => asCaller(callers)(Authority.around(create)(request)))
      .handle("list", () => asCaller(callers)(list()))
      .handle("leave", () => asCaller(callers)(Authority.around(leave)(undefined)))
      .handle("revokeOwnKey", () => asCaller(callers)(Authority.around(revokeOwnKey)(undefined))))

/** Serves the API over `database` (migrated first) on a free loopback port, for the scope. */
export const serve = Effect.fn("WritesServer.serve")(function*<E>(database: Layer.Layer<SqlClient.SqlClient, E>, callers: Callers) {
  const context = yield* Layer.build(
    HttpRouter.serve(
      HttpApiBuilder.layer(Api).pipe(Layer.provide(handlers(callers)), Layer.provide(HttpErrors.layer)),
      { disableLogger: true }
    ).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provideMerge(IdGenerator.layer),
      Layer.provideMerge(Layer.effectDiscard(migrate(migrations))),
      Layer.provideMerge(database)
    )
  )
  const sql = Context.get(context, SqlClient.SqlClient)
  const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
  return { url, sql }
})

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
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
    return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) }
  })

/** The served API, its database and its callers, shared by a file's tests (`Fixture.layer`). */
export class Fixture extends Context.Service<Fixture, {
  readonly url: string
  readonly sql: SqlClient.SqlClient
  readonly callers: Callers
}>()("test/WritesServer/Fixture") {
  static readonly layer = <E>(database: Layer.Layer<SqlClient.SqlClient, E>) =>
    Layer.effect(
      Fixture,
      Effect.gen(function*() {
        const callers: Callers = new Map()
        const { sql, url } = yield* serve(database, callers)
        return { url, sql, callers }
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
