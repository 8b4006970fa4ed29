/**
 * `Orgplane-Read-Only: true` narrows a session or an API key to reads, and `Orgplane-Channel` names the channel the
 * audit log records: the model is `isReadOnlyMethod`, held over every operation a person's credential may call
 * (`operationsOf(Api)`), for the owner's session and an API key of the owner's whole role.
 */
import { Actions, allows, Api, isReadOnlyMethod, openApiDocument, type Operation, operationsOf } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import { defaultPrefix } from "../../src/platform/Durable.js"
import * as TestServer from "../support/HttpServer.js"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let org: Awaited<ReturnType<typeof Http.staffed>>
/** An API key of the owner's, made without scopes: every action the owner's role allows, as its scopes. */
let fullKey: string
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
  org = await Http.staffed(server.url, "Narrowed")
  const key = await Http.request(server.url, "POST", "/v1/api-keys", { token: org.owner.token, body: { name: "everything" } })
  fullKey = Http.expectStatus<{ key: string }>("api key", key, 201).key
}, 120_000)
afterAll(() => server.close())

const { users } = calls(() => server.url)

const readOnly = { "orgplane-read-only": "true" }

/** The operations a person's session or API key may call. */
const memberOperations = operationsOf(Api).filter((operation) => operation.credential === "member")

const document = openApiDocument()

/** The published operation of `operation`: its parameters' examples and its body's media types. */
const published = (operation: Operation): Record<string, unknown> => {
  const template = operation.path.replace(/:(\w+)/g, "{$1}")
  const item = (document.paths as Record<string, Record<string, Record<string, unknown>>>)[template]
  const found = item?.[operation.method.toLowerCase()]
  if (found === undefined) throw new Error(`${operation.id}: not in the document at ${template}`)
  return found
}

/** The operation's path with each parameter's documented example: a well-formed id, of nothing that exists. */
const examplePath = (operation: Operation) => {
  const parameters = (published(operation)["parameters"] ?? []) as ReadonlyArray<{ name: string; in: string; examples?: { example?: { value?: string } } }>
  return operation.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = parameters.find((parameter) => parameter.in === "path" && parameter.name === name)?.examples?.example?.value
    if (value === undefined) throw new Error(`${operation.id}: no example for ${name}`)
    return encodeURIComponent(value)
  })
}

/**
 * A request of the operation as a credential sends it, well-formed: where it reads JSON, its documented example body
 * (so a write would be made if the credential let it through).
 */
const send = (operation: Operation, credential: Http.Options, headers: Record<string, string> = {}) => {
  const content = (published(operation)["requestBody"] as { content?: Record<string, { examples?: { example?: { value?: unknown } } }> } | undefined)
    ?.content ?? {}
  const json = content["application/json"]
  const body = json === undefined ? {} : { body: json.examples?.example?.value ?? {} }
  return Http.request(server.url, operation.method, examplePath(operation), { ...credential, headers, ...body })
}

/** A body with its timestamps masked: two reads a moment apart may say when they were answered. */
const untimed = (body: unknown): unknown =>
  JSON.parse(JSON.stringify(body ?? null), (_, value) => typeof value === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value) ? "<time>" : value)

/**
 * Every row of every table, read back as one text per table (a credential's `last_used_at` aside: recording a use is
 * not a change the request made): what a refused request must leave as it was. The durable engine's own tables are
 * left out: its runner's registration and its minutely jobs' messages are written on its clock, whatever the requests
 * do (a run across a minute's turn saw a cron message appear).
 */
const fingerprint = () =>
  server.sql((sql: SqlClient.SqlClient) =>
    Effect.gen(function*() {
      const tables = yield* sql<{ name: string; tenant: boolean }>`SELECT c.relname AS name, EXISTS (SELECT 1 FROM pg_attribute a
          WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND a.attnum > 0 AND NOT a.attisdropped) AS tenant
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND c.relname NOT LIKE ${`${defaultPrefix.replaceAll("_", "\\_")}\\_%`} ORDER BY c.relname`
      const rows: Record<string, string> = {}
      for (const { name, tenant } of tables) {
        // A tenant table is read for the organization the credentials act in (every statement names one).
        const [row] = yield* sql<{ rows: string | null }>`SELECT string_agg(r, ',' ORDER BY r) AS rows
          FROM (SELECT (to_jsonb(t) - 'last_used_at')::text AS r FROM ${sql(name)} t
            ${tenant ? sql`WHERE t.organization_id = ${org.organizationId}` : sql``}) s`
        rows[name] = row?.rows ?? ""
      }
      return rows
    }))

const auditCount = () =>
  server.sql((sql: SqlClient.SqlClient) =>
    Effect.map(sql<{ count: number }>`SELECT count(*)::int AS count FROM audit_events WHERE organization_id = ${org.organizationId}`, ([row]) => row?.count ?? 0))

describe("Orgplane-Read-Only: true", () => {
  const credentials = () => [["owner's session", { token: org.owner.token }], ["full API key", { apiKey: fullKey }]] as const

  it("refuses every write a person's credential may call with 403 read_only_credential, changing nothing", async () => {
    const writes = memberOperations.filter((operation) => !isReadOnlyMethod(operation.method))
    expect(writes.length).toBeGreaterThan(50)
    const before = await fingerprint()
    const events = await auditCount()
    for (const [who, credential] of credentials()) {
      for (const operation of writes) {
        const answer = await send(operation, credential, readOnly)
        expect({ who, operation: operation.id, status: answer.status, reason: Json.at(answer.body, "reason") }).toEqual({
          who,
          operation: operation.id,
          status: 403,
          reason: "read_only_credential"
        })
        expect(Json.string(Json.at(answer.body, "message"), `${who} ${operation.id}: the message`)).toContain("Orgplane-Read-Only")
      }
    }
    expect(await auditCount()).toBe(events)
    expect(await fingerprint()).toEqual(before)
  }, 300_000)

  it("answers every read as without the header, but for the credential GET /v1/me describes", async () => {
    const reads = memberOperations.filter((operation) => isReadOnlyMethod(operation.method))
    expect(reads.length).toBeGreaterThan(50)
    for (const [who, credential] of credentials()) {
      for (const operation of reads) {
        const plain = await send(operation, credential)
        const narrowed = await send(operation, credential, readOnly)
        const expected = operation.id === "users.me"
          ? { ...Json.object(plain.body, "users.me"), credential: { ...Json.object(Json.at(plain.body, "credential"), "users.me's credential"), readOnly: true } }
          : plain.body
        expect({ who, operation: operation.id, status: narrowed.status }).toEqual({ who, operation: operation.id, status: plain.status })
        if (operation.id !== "audit.listEvents" && operation.id !== "audit.exportEvents") {
          expect(untimed(narrowed.body), `${who} ${operation.id}`).toEqual(untimed(expected))
        }
      }
    }
  }, 300_000)

  it("is the credential as it is with `false`, and 400 naming the header with any other value, before authentication", async () => {
    const asItIs = await Http.request(server.url, "POST", "/v1/teams", {
      token: org.owner.token,
      headers: { "orgplane-read-only": "false" },
      body: { name: "Written anyway" }
    })
    expect(asItIs.status).toBe(201)
    for (const value of ["TRUE", "yes", "1", ""]) {
      const refused = await Http.request(server.url, "GET", "/v1/teams?limit=5", { headers: { "orgplane-read-only": value } })
      expect(refused.status, value).toBe(400)
      expect(invalid(refused).details).toEqual([{ path: ["headers", "Orgplane-Read-Only"], message: expect.stringContaining("`true` or `false`") }])
    }
  })

  it("GET /v1/me says what the credential is and what it may do", async () => {
    const session = ok(await users.me({ token: org.member.token, headers: readOnly }), 200)
    // A member's session: the actions a member's role allows, as the server checks them (credentialAllows).
    expect(session.credential).toEqual({
      type: "session",
      id: expect.stringMatching(/^ses_/),
      scopes: null,
      readOnly: true,
      actions: Actions.filter((action) => allows("member", action))
    })
    const scoped = await Http.request(server.url, "POST", "/v1/api-keys", {
      token: org.owner.token,
      body: { name: "readers", scopes: ["teams.read", "members.read"] }
    })
    const made = Http.expectStatus<{ key: string; apiKey: { id: string } }>("scoped key", scoped, 201)
    const key = ok(await users.me({ apiKey: made.key }), 200)
    // A scoped key: its scopes within its maker's role, and nothing else.
    expect(key.credential).toEqual({ type: "api_key", id: made.apiKey.id, scopes: expect.arrayContaining(["teams.read", "members.read"]), readOnly: false, actions: ["members.read", "teams.read"] })
    const full = ok(await users.me({ apiKey: fullKey }), 200)
    expect(full.credential).toMatchObject({ type: "api_key", scopes: expect.arrayContaining(["teams.manage", "audit.read"]), readOnly: false })
  })

  it("refuses accepting an invitation with a narrowed session, even with signUp, and makes no account", async () => {
    const invited = await Http.request(server.url, "POST", "/v1/invitations", { token: org.owner.token, body: { email: "narrowed.invitee@example.com", role: "member" } })
    const token = Http.expectStatus<{ inviteToken: string }>("invitation", invited, 201).inviteToken
    const accepted = await Http.request(server.url, "POST", "/v1/invitations/accept", {
      token: org.member.token,
      headers: readOnly,
      body: { token, signUp: { name: "Narrowed", password: "correct horse battery" } }
    })
    expect({ status: accepted.status, reason: Json.at(accepted.body, "reason") }).toEqual({ status: 403, reason: "read_only_credential" })
    const signIn = await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: "narrowed.invitee@example.com", password: "correct horse battery" } })
    expect(signIn.status).toBe(401)
  })
})

describe("Orgplane-Channel", () => {
  /** The newest `team.create` event's `via`. */
  const lastVia = async () => {
    const events = await Http.request(server.url, "GET", "/v1/audit/events?action=team.create&limit=1", { token: org.owner.token })
    return Http.expectStatus<{ items: Array<{ via: { channel: string } }> }>("audit events", events, 200).items[0]?.via
  }

  it("lands in the audit event's via.channel: mcp as declared, api without the header", async () => {
    const mcp = await Http.request(server.url, "POST", "/v1/teams", { apiKey: fullKey, headers: { "orgplane-channel": "mcp" }, body: { name: "By an agent" } })
    expect(mcp.status).toBe(201)
    expect(await lastVia()).toMatchObject({ channel: "mcp", credentialId: expect.stringMatching(/^apk_/) })
    const api = await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, body: { name: "By hand" } })
    expect(api.status).toBe(201)
    expect(await lastVia()).toMatchObject({ channel: "api", credentialId: expect.stringMatching(/^ses_/) })
    const exported = await Http.request(server.url, "GET", "/v1/audit/export?format=csv&action=team.create", { token: org.owner.token })
    const [header, ...rows] = exported.text.trim().split("\r\n")
    expect(header?.endsWith(",\"channel\",\"planHash\"")).toBe(true)
    // The channel, then an empty planHash: the last two cells.
    expect(rows.map((row) => row.split(",").slice(-2).join(",")).sort()).toEqual(["\"api\",\"\"", "\"api\",\"\"", "\"mcp\",\"\""])
  })

  it("answers 400 naming the header for a channel it does not know, and records nothing", async () => {
    const before = await lastVia()
    const refused = await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, headers: { "orgplane-channel": "cli" }, body: { name: "Nowhere" } })
    expect(refused.status).toBe(400)
    expect(invalid(refused).details).toEqual([{ path: ["headers", "Orgplane-Channel"], message: expect.stringContaining("`api` or `mcp`") }])
    expect(await lastVia()).toEqual(before)
  })
})
