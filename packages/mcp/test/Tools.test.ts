/**
 * The MCP tools against a real orgplane server (embedded database, or Postgres at DATABASE_URL), through effect/ai's
 * in-memory MCP client, each person with their own credential over `Transport.fromHttpClient`: what each may find,
 * describing, calling and paging, arguments refused, the confirmation of destructive operations, toolsets, read-only.
 */
import { TeamPage, TeamResponse } from "@orgplane/schema"
import * as McpTest from "effect/ai/McpTest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as HttpServer from "../../server/test/support/HttpServer.js"
import * as Http from "../../testkit/src/Http.js"
import { Catalog, Server, Tools, Transport } from "../src/index.js"
import { asDescribed, asFailure, asFound, asResult, type Called, wire } from "./ToolAnswers.js"

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
      const found = asFound(page.data)
      names.push(...found.operations.map((operation) => operation.name))
      cursor = found.nextCursor
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
        expect(asFound(found.data).operations.map((operation) => operation.name)).toEqual(["teams.list", "teams.get"])
        const described = yield* call(client, "describe_operation", { name: "teams.get" })
        expect(described.isError).toBe(false)
        expect(asDescribed(described.data).inputSchema["required"]).toEqual(["teamId"])
        // The answer in a few words by default; its whole schema on request.
        expect(asDescribed(described.data).output).toEqual({ team: "Team" })
        expect(asDescribed(described.data).outputSchema).toBeNull()
        const whole = yield* call(client, "describe_operation", { name: "teams.get", outputSchema: true })
        expect(asDescribed(whole.data).outputSchema?.["$defs"]).toHaveProperty("TeamResponse")
        const page = yield* call(client, "describe_operation", { name: "teams.list" })
        expect(asDescribed(page.data).output).toEqual({ items: "array of Team", nextCursor: "Cursor | null" })
        // The summary is what makes the answer short (the whole schema is most of its size).
        expect(JSON.stringify(described.data).length).toBeLessThan(JSON.stringify(whole.data).length / 2)
        const hidden = yield* call(client, "describe_operation", { name: "teams.create" })
        const missing = yield* call(client, "describe_operation", { name: "teams.nothing" })
        expect(hidden).toEqual({ isError: true, data: { message: "No operation named teams.create. find_operations lists the ones you may take." } })
        expect(asFailure(missing.data).message).toBe("No operation named teams.nothing. find_operations lists the ones you may take.")
        const unknownGroup = yield* call(client, "find_operations", { group: "nope" })
        expect(unknownGroup.isError).toBe(true)
      }))
  })

  it("ranks what it finds by how well an operation's words match the query, not every word needed", async () => {
    await withClient(bearer(people.owner.token), (client) =>
      Effect.gen(function*() {
        const names = (found: Called) => asFound(found.data).operations.map((operation) => operation.name)
        // "api key" was in every description's errors: the API keys' own operations come first.
        const keys = names(yield* call(client, "find_operations", { query: "api key" }))
        expect(keys.slice(0, 3).sort()).toEqual(["apiKeys.create", "apiKeys.list", "apiKeys.revoke"])
        // A sentence: its words rank the operations that match most of them first.
        const sentence = names(yield* call(client, "find_operations", { query: "create a team and add a member" }))
        expect(sentence.slice(0, 5)).toEqual(expect.arrayContaining(["teams.create", "teams.addMembers"]))
        // Plurals and letter case: "Teams" finds what "team" finds.
        expect(names(yield* call(client, "find_operations", { query: "Teams", group: "teams" }))).toEqual(names(yield* call(client, "find_operations", { query: "team", group: "teams" })))
        // Words that name nothing find nothing.
        expect(names(yield* call(client, "find_operations", { query: "zzyzx qwerty" }))).toEqual([])
      }))
  })

  it("calls, pages, and refuses an argument the operation does not take", async () => {
    await withClient(bearer(people.admin.token), (client) =>
      Effect.gen(function*() {
        for (const name of ["Paged A", "Paged B", "Paged C"]) {
          const created = yield* call(client, "call_operation", { name: "teams.create", arguments: { name } })
          expect(created.isError).toBe(false)
          expect(asResult(created.data).status).toBe(201)
          expect(wire(TeamResponse)(asResult(created.data).body).team.name).toBe(name)
        }
        const first = yield* call(client, "call_operation", { name: "teams.list", arguments: { q: "Paged", limit: 2 } })
        const firstPage = wire(TeamPage)(asResult(first.data).body)
        expect(firstPage.items.map((team) => team.name)).toHaveLength(2)
        expect(firstPage.nextCursor).toEqual(expect.any(String))
        const second = yield* call(client, "call_operation", { name: "teams.list", arguments: { q: "Paged", limit: 2, cursor: firstPage.nextCursor } })
        expect(wire(TeamPage)(asResult(second.data).body).items).toHaveLength(1)
        const refused = yield* call(client, "call_operation", { name: "teams.create", arguments: { name: "X", colour: "red" } })
        expect(refused.isError).toBe(true)
        expect(asFailure(refused.data).message).toContain("does not take colour")
        expect(asFailure(refused.data).takes).toEqual(["name", "memberIds", "externalKey"])
        // An API error is a tool error carrying the API's body.
        const notFound = yield* call(client, "call_operation", { name: "teams.get", arguments: { teamId: "tem_01m6dsg7e0f6xbks25eta8m5bm" } })
        expect(notFound.isError).toBe(true)
        const failure = asFailure(notFound.data)
        expect(failure.status).toBe(404)
        expect(failure.body).toEqual(expect.objectContaining({ error: expect.any(String) }))
      }))
  })

  it("does not run a destructive operation without its confirmation, and runs it once with it, in the session it was given in", async () => {
    const teamId = await newTeam("Doomed")
    const other = await newTeam("Other")
    const confirmationKey = "test-confirmation-key"
    // The tools' clock, moved on to see a token expire.
    const real = Effect.runSync(Effect.service(Clock.Clock))
    let skew = 0
    const now = () => real.currentTimeMillisUnsafe() + skew
    const clock: Clock.Clock = {
      currentTimeMillisUnsafe: now,
      currentTimeMillis: Effect.sync(now),
      currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe(),
      currentTimeNanos: real.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: real.monotonicTimeNanos,
      sleep: real.sleep
    }
    await withClient(bearer(people.owner.token), (client) =>
      Effect.gen(function*() {
        const unconfirmed = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId } })
        expect(unconfirmed.isError).toBe(true)
        expect(asFailure(unconfirmed.data).message).toContain("Not executed")
        const token = asFailure(unconfirmed.data).confirmation
        expect(token).toEqual(expect.any(String))
        expect(yield* Effect.promise(() => teamExists(teamId))).toBe(true)

        // Another MCP session of the same credential (another process with the same key): not the caller it was given to.
        const elsewhere = yield* Effect.promise(() =>
          withClient(bearer(people.owner.token), (other) => call(other, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token }), { confirmationKey })
        )
        expect(asFailure(elsewhere.data).message).toContain("another caller")
        skew = 6 * 60_000
        const expired = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token })
        expect(asFailure(expired.data).message).toContain("expired")
        skew = 0
        expect(yield* Effect.promise(() => teamExists(teamId))).toBe(true)

        const wrongArgs = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId: other }, confirmation: token })
        expect(wrongArgs.isError).toBe(true)
        expect(asFailure(wrongArgs.data).message).toContain("other arguments")
        const forged = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: `${token}x` })
        expect(asFailure(forged.data).message).toContain("not a token this server issued")
        const confirmed = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token })
        expect(confirmed.isError).toBe(false)
        expect(asResult(confirmed.data).status).toBe(204)
        const reused = yield* call(client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation: token })
        expect(reused.isError).toBe(true)
        expect(asFailure(reused.data).message).toContain("already used")
      }), { confirmationKey, clock })
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
        expect(wire(TeamResponse)(asResult(got.data).body).team.name).toBe("Toolset")
        const unconfirmed = yield* call(client, "teams_delete", { teamId })
        const { confirmation } = asFailure(unconfirmed.data)
        expect(confirmation).toEqual(expect.any(String))
        const confirmed = yield* call(client, "teams_delete", { teamId, confirmation })
        expect(asResult(confirmed.data).status).toBe(204)
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

  it("registers a toolset given to a loader when it is first asked for, once however often and however many at once", async () => {
    const toolNames = (client: McpTest.Client) => Effect.map(client.listTools(), (listed) => listed.tools.map((tool) => tool.name))
    const loader = Tools.makeToolsetLoader()
    const [before, after, calledAfter] = await Effect.runPromise(Effect.gen(function*() {
      const transport = yield* Transport.fromHttpClient({ baseUrl: server.url, credential: bearer(people.owner.token) })
      const registrations = Tools.layer({}, loader).pipe(Layer.provide(Server.transportMiddleware(transport, "session").layer))
      const client = yield* McpTest.makeClient(registrations, { protocols: Server.protocols })
      const before = yield* toolNames(client)
      yield* Effect.all([loader.ensure(["teams"]), loader.ensure(["teams", "members"]), loader.ensure(["teams"])], { concurrency: "unbounded" })
      yield* loader.ensure(["members"])
      const after = yield* toolNames(client)
      const calledAfter = yield* call(client, "teams_list", {})
      return [before, after, calledAfter] as const
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer)))
    expect(before).toEqual(["find_operations", "describe_operation", "read_operation", "call_operation"])
    const groups = Catalog.groups()
    const served = (group: string) => Catalog.served().filter((operation) => operation.group === group).map(Catalog.toolNameOf)
    expect(groups).toEqual(expect.arrayContaining(["teams", "members"]))
    expect([...after].sort()).toEqual([...before, ...served("teams"), ...served("members")].sort())
    expect(calledAfter).toMatchObject({ isError: false, data: { status: 200 } })
  })
})
