/**
 * The MCP tools against a real orgplane server (embedded database, or Postgres at DATABASE_URL), through effect/ai's
 * in-memory MCP client, each person with their own credential over `Transport.fromHttpClient`: what each may find,
 * describing, calling and paging, arguments refused, the confirmation of destructive operations, toolsets, read-only.
 */
import * as McpTest from "effect/ai/McpTest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HttpServer from "../../server/test/support/HttpServer.js"
import * as Http from "../../testkit/src/Http.js"
import { Server, type Tools, Transport } from "../src/index.js"

let server: HttpServer.RunningServer
let people: Awaited<ReturnType<typeof Http.staffed>>

beforeAll(async () => {
  server = await HttpServer.start()
  people = await Http.staffed(server.url)
})
afterAll(() => server.close())

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Runs `use` with an MCP client acting with `credential`, the tools made with `options`. */
const withClient = <A>(
  credential: Record<string, string>,
  use: (client: McpTest.Client) => Effect.Effect<A, unknown>,
  options: Tools.Options & { readonly clock?: Clock.Clock } = {}
): Promise<A> => {
  const { clock, ...toolOptions } = options
  const program = Effect.gen(function*() {
    const transport = yield* Transport.fromHttpClient({ baseUrl: server.url, credential })
    const client = yield* McpTest.makeClient(Server.registrations({ ...toolOptions, transport }), { protocols: Server.protocols })
    return yield* use(client)
  }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
  return Effect.runPromise(clock === undefined ? program : Effect.provideService(program, Clock.Clock, clock))
}

interface Called {
  readonly isError: boolean
  readonly data: any
}

/** A tool call's result: the structured content of a success, the JSON data of a tool error. */
const call = (client: McpTest.Client, name: string, args: Record<string, unknown>) =>
  Effect.map(client.callTool({ name, arguments: args }), (result): Called => {
    const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("")
    return { isError: result.isError === true, data: result.isError === true ? (text.startsWith("{") ? JSON.parse(text) : { message: text }) : result.structuredContent }
  })

/** Every operation name find_operations answers, page after page. */
const allNames = (client: McpTest.Client, args: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const names: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Called = yield* call(client, "find_operations", { ...args, limit: 50, ...(cursor === null ? {} : { cursor }) })
      expect(page.isError).toBe(false)
      names.push(...page.data.operations.map((operation: { name: string }) => operation.name))
      cursor = page.data.nextCursor
    } while (cursor !== null)
    return names
  })

const teamExists = async (teamId: string) => (await Http.request(server.url, "GET", `/v1/teams/${teamId}`, { token: people.owner.token })).status === 200

const newTeam = async (name: string) =>
  Http.expectStatus<{ team: { id: string } }>("team", await Http.request(server.url, "POST", "/v1/teams", { token: people.owner.token, body: { name } }), 201).team.id

describe("MCP tools on a real server", () => {
  it("lists for each caller only the operations their role allows", async () => {
    const owner = await withClient(bearer(people.owner.token), (client) => allNames(client))
    const member = await withClient(bearer(people.member.token), (client) => allNames(client))
    expect(owner).toContain("teams.create")
    expect(owner).toContain("teams.delete")
    expect(member).toContain("teams.list")
    expect(member).not.toContain("teams.create")
    expect(member.every((name) => owner.includes(name))).toBe(true)
    expect(member.length).toBeLessThan(owner.length)
    // An operation whose actions are alternatives is shown to whoever may take one of them: a member leaves through
    // members.remove (members.leave), but never changes a role.
    expect(member).toContain("members.remove")
    expect(member).not.toContain("members.changeRole")
    // Excluded operations are found by nobody.
    expect(owner).not.toContain("audit.exportEvents")
    expect(owner).not.toContain("auth.signIn")
  })

  it("finds by words and group, describes, and answers a hidden operation as a missing one", async () => {
    await withClient(bearer(people.member.token), (client) =>
      Effect.gen(function*() {
        const found = yield* call(client, "find_operations", { query: "team", group: "teams" })
        expect(found.data.operations.map((operation: { name: string }) => operation.name)).toEqual(["teams.list", "teams.get"])
        const described = yield* call(client, "describe_operation", { name: "teams.get" })
        expect(described.isError).toBe(false)
        expect(described.data.inputSchema.required).toEqual(["teamId"])
        expect(described.data.outputSchema.$defs).toHaveProperty("TeamResponse")
        const hidden = yield* call(client, "describe_operation", { name: "teams.create" })
        const missing = yield* call(client, "describe_operation", { name: "teams.nothing" })
        expect(hidden).toEqual({ isError: true, data: { message: "No operation named teams.create. find_operations lists the ones you may take." } })
        expect(missing.data.message).toBe("No operation named teams.nothing. find_operations lists the ones you may take.")
        const unknownGroup = yield* call(client, "find_operations", { group: "nope" })
        expect(unknownGroup.isError).toBe(true)
      }))
  })

  it("calls, pages, and refuses an argument the operation does not take", async () => {
    await withClient(bearer(people.admin.token), (client) =>
      Effect.gen(function*() {
        for (const name of ["Paged A", "Paged B", "Paged C"]) {
          const created = yield* call(client, "call_operation", { name: "teams.create", arguments: { name } })
          expect(created.isError).toBe(false)
          expect(created.data.status).toBe(201)
          expect(created.data.body.team.name).toBe(name)
        }
        const first = yield* call(client, "call_operation", { name: "teams.list", arguments: { q: "Paged", limit: 2 } })
        expect(first.data.body.items.map((team: { name: string }) => team.name)).toHaveLength(2)
        expect(first.data.body.nextCursor).toEqual(expect.any(String))
        const second = yield* call(client, "call_operation", { name: "teams.list", arguments: { q: "Paged", limit: 2, cursor: first.data.body.nextCursor } })
        expect(second.data.body.items).toHaveLength(1)
        const refused = yield* call(client, "call_operation", { name: "teams.create", arguments: { name: "X", colour: "red" } })
        expect(refused.isError).toBe(true)
        expect(refused.data.message).toContain("does not take colour")
        expect(refused.data.takes).toEqual(["name", "memberIds", "externalKey"])
        // An API error is a tool error carrying the API's body.
        const notFound = yield* call(client, "call_operation", { name: "teams.get", arguments: { teamId: "tem_01m6dsg7e0f6xbks25eta8m5bm" } })
        expect(notFound.isError).toBe(true)
        expect(notFound.data.status).toBe(404)
        expect(notFound.data.body.error).toEqual(expect.any(String))
      }))
  })

  it("does not run a destructive operation without its confirmation, and runs it once with it", async () => {
    const teamId = await newTeam("Doomed")
    const other = await newTeam("Other")
    const confirmationKey = "test-confirmation-key"
    const token = await withClient(bearer(people.owner.token), (client) =>
      Effect.gen(function*() {
        const unconfirmed = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId } })
        expect(unconfirmed.isError).toBe(true)
        expect(unconfirmed.data.message).toContain("Not executed")
        expect(unconfirmed.data.confirmation).toEqual(expect.any(String))
        return unconfirmed.data.confirmation as string
      }), { confirmationKey })
    expect(await teamExists(teamId)).toBe(true)

    // Expired: another process with the same key, its clock six minutes on.
    const real = Effect.runSync(Effect.service(Clock.Clock))
    const shifted = () => real.currentTimeMillisUnsafe() + 6 * 60_000
    const later: Clock.Clock = {
      currentTimeMillisUnsafe: shifted,
      currentTimeMillis: Effect.sync(shifted),
      currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe(),
      currentTimeNanos: real.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: real.monotonicTimeNanos,
      sleep: real.sleep
    }
    const expired = await withClient(bearer(people.owner.token), (client) =>
      call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token }), { confirmationKey, clock: later })
    expect(expired.data.message).toContain("expired")
    expect(await teamExists(teamId)).toBe(true)

    await withClient(bearer(people.owner.token), (client) =>
      Effect.gen(function*() {
        const wrongArgs = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId: other }, confirmation: token })
        expect(wrongArgs.isError).toBe(true)
        expect(wrongArgs.data.message).toContain("other arguments")
        const forged = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: `${token}x` })
        expect(forged.data.message).toContain("not a token this server issued")
        const confirmed = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token })
        expect(confirmed.isError).toBe(false)
        expect(confirmed.data.status).toBe(204)
        const reused = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token })
        expect(reused.isError).toBe(true)
        expect(reused.data.message).toContain("already used")
      }), { confirmationKey })
    expect(await teamExists(teamId)).toBe(false)
    expect(await teamExists(other)).toBe(true)
  })

  it("serves toolsets, each tool shown only to callers who may take its operation", async () => {
    const listed = (token: string) =>
      withClient(bearer(token), (client) => Effect.map(client.listTools(), (result) => result.tools.map((tool) => tool.name)), { toolsets: ["teams"] })
    const forOwner = await listed(people.owner.token)
    const forMember = await listed(people.member.token)
    expect(forOwner).toEqual(expect.arrayContaining(["find_operations", "teams_create", "teams_list", "teams_delete"]))
    expect(forMember).toEqual(expect.arrayContaining(["teams_list", "teams_get"]))
    expect(forMember).not.toContain("teams_create")
    const teamId = await newTeam("Toolset")
    await withClient(bearer(people.owner.token), (client) =>
      Effect.gen(function*() {
        const got = yield* call(client, "teams_get", { teamId })
        expect(got.data.body.team.name).toBe("Toolset")
        const unconfirmed = yield* call(client, "teams_delete", { teamId })
        expect(unconfirmed.data.confirmation).toEqual(expect.any(String))
        const confirmed = yield* call(client, "teams_delete", { teamId, confirmation: unconfirmed.data.confirmation })
        expect(confirmed.data.status).toBe(204)
      }), { toolsets: ["teams"] })
    expect(await teamExists(teamId)).toBe(false)
  })

  it("with readOnly lists only reads", async () => {
    const names = await withClient(bearer(people.owner.token), (client) => allNames(client), { readOnly: true })
    expect(names).toContain("teams.list")
    expect(names).not.toContain("teams.create")
    // A write called anyway goes to the server, which refuses the narrowed credential (the guard is the server's).
    const refused = await withClient(bearer(people.owner.token), (client) => call(client, "call_operation", { name: "teams.create", arguments: { name: "No" } }), { readOnly: true })
    expect(refused).toMatchObject({ isError: true, data: { status: 403, body: { reason: "read_only_credential" } } })
  })
})
