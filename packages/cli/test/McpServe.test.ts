/**
 * `orgplane mcp serve`: the official MCP SDK client starts the CLI (its sources, as `pnpm orgplane` runs them) as a
 * subprocess over stdio, as Claude Code does, against a real server (RealServer.ts). Between the two sits a loopback
 * proxy that records the headers of every request the MCP server sends, so a test sees what travelled (the channel,
 * the read-only narrowing, every path it sent to, the dry authorization asked before a confirmation) besides what the
 * server did.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { TeamPage, TeamResponse } from "@orgplane/schema"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Api from "../../../packages/testkit/src/Http.js"
import * as HostilePaths from "../../server/test/support/HostilePaths.js"
import { root } from "./Binary.js"
import { cleanup, fresh, PASSWORD } from "./Harness.js"
import { command as orgplaneCommand } from "../../client/test/RealServer.js"
import * as RealServer from "./RealServer.js"
import { asDescribed, asFailure, asFound, asResult, type Called, wire } from "../../mcp/test/ToolAnswers.js"

let server: RealServer.RealServer
let proxy: Recorder
let people: Awaited<ReturnType<typeof Api.staffed>>
let owner: Promise<Awaited<ReturnType<typeof connect>>> | undefined

/** A proxy to the server that keeps each request's method, path and headers. */
interface Recorder {
  readonly url: string
  readonly seen: Array<{ readonly method: string; readonly path: string; readonly headers: Http.IncomingHttpHeaders }>
  readonly close: () => Promise<void>
}

const record = (target: string) =>
  new Promise<Recorder>((resolve) => {
    const seen: Recorder["seen"] = []
    const upstream = new URL(target)
    const proxy = Http.createServer((request, response) => {
      seen.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers })
      const forwarded = Http.request(
        { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers: { ...request.headers, host: upstream.host } },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(response)
        }
      )
      forwarded.on("error", () => response.writeHead(502).end())
      request.pipe(forwarded)
    })
    proxy.listen(0, "127.0.0.1", () => {
      const address = proxy.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({ url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((done) => proxy.close(() => done())) })
    })
  })

beforeAll(async () => {
  server = await RealServer.start()
  proxy = await record(server.url)
  people = await Api.staffed(server.url)
})
afterAll(async () => {
  await (await owner)?.close()
  await proxy?.close()
  await server?.close()
  await cleanup()
})

/** How the subprocess is started: the run's `orgplane` bundle (the CLI's sources through tsx where there is none). */
const command = [process.execPath, ...orgplaneCommand()] as const

/** A clean environment: the config folder, the variables given, and what Node needs to start. */
const environment = (configDir: string, env: Record<string, string>) => ({
  PATH: process.env["PATH"] ?? "",
  HOME: Path.dirname(configDir),
  ORGPLANE_CONFIG_DIR: configDir,
  ...env
})

/**
 * An MCP client connected to `orgplane mcp serve ...flags`; stderr kept, any message that is not JSON-RPC an error.
 * With `person`, the client can ask its user (form elicitation), who answers with `person`.
 */
const connect = async (flags: ReadonlyArray<string>, env: Record<string, string>, person?: (message: string) => boolean) => {
  const { configDir } = await fresh()
  const [node, ...args] = command
  const transport = new StdioClientTransport({
    command: node,
    args: [...args, "mcp", "serve", ...flags],
    cwd: root,
    env: environment(configDir, env),
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const problems: Array<string> = []
  transport.onerror = (error) => void problems.push(error.message)
  const client = new Client({ name: "orgplane-cli-test", version: "1.0.0" }, person === undefined ? {} : { capabilities: { elicitation: { form: {} } } })
  if (person !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) =>
      person(request.params.message) ? { action: "accept", content: { confirm: true } } : { action: "decline" })
  }
  await client.connect(transport)
  return { client, problems, stderr: () => stderr, close: () => client.close() }
}

/** `orgplane mcp serve` with the owner's session token from the environment, through the recording proxy. */
const asOwner = (flags: ReadonlyArray<string> = [], person?: (message: string) => boolean) =>
  connect(flags, { ORGPLANE_URL: proxy.url, ORGPLANE_TOKEN: people.owner.token }, person)

/**
 * The one `orgplane mcp serve` with the owner's token, no flags and a client that cannot ask its user, that the tests
 * needing no other share (each starts from what the proxy has seen so far); closed after the file.
 */
const sharedOwner = () => (owner ??= asOwner())

/** A member of an answer that may be a success or a failure. */
const memberOf = (data: unknown, key: string): unknown => (typeof data === "object" && data !== null ? Reflect.get(data, key) : undefined)

/** A tool call's result: the structured content of a success, the JSON of a tool error. */
const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<Called> => {
  const result = await client.callTool({ name, arguments: args })
  const content = Array.isArray(result.content) ? result.content : []
  const text = content.map((part: { type: string; text?: string }) => (part.type === "text" ? part.text ?? "" : "")).join("")
  if (result.isError === true) return { isError: true, data: text.startsWith("{") ? JSON.parse(text) : { message: text } }
  return { isError: false, data: result.structuredContent }
}

const teamCount = async () =>
  Api.expectStatus<{ items: Array<unknown> }>("teams", await Api.request(server.url, "GET", "/v1/teams?limit=100", { token: people.owner.token }), 200).items.length

const newTeam = async (name: string) =>
  Api.expectStatus<{ team: { id: string } }>("team", await Api.request(server.url, "POST", "/v1/teams", { token: people.owner.token, body: { name } }), 201).team.id

const teamStatus = async (teamId: string) => (await Api.request(server.url, "GET", `/v1/teams/${teamId}`, { token: people.owner.token })).status

describe("orgplane mcp serve", () => {
  it("answers initialize and lists the four catalog tools, with nothing but JSON-RPC on stdout", async () => {
    const mcp = await sharedOwner()
    expect(mcp.client.getServerVersion()?.name).toBe("orgplane")
    const { tools } = await mcp.client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual(["call_operation", "describe_operation", "find_operations", "read_operation"])
    expect(tools.every((tool) => tool.outputSchema !== undefined)).toBe(true)
    const found = await call(mcp.client, "find_operations", { query: "team", group: "teams" })
    expect(found.isError).toBe(false)
    expect(asFound(found.data).operations.map((operation) => operation.name)).toContain("teams.create")
    expect(mcp.problems).toEqual([])
  })

  it("describes an operation, calls a read and pages a list", async () => {
    const prefix = `Paged ${Math.random().toString(36).slice(2, 8)}`
    const made = [await newTeam(`${prefix} 1`), await newTeam(`${prefix} 2`), await newTeam(`${prefix} 3`)]
    const mcp = await sharedOwner()
    const described = await call(mcp.client, "describe_operation", { name: "teams.create" })
    expect(described.isError).toBe(false)
    expect(described.data).toMatchObject({ name: "teams.create", method: "POST", path: "/v1/teams", readOnly: false })
    expect(asDescribed(described.data).inputSchema["properties"]).toHaveProperty("name")

    const read = await call(mcp.client, "call_operation", { name: "teams.get", arguments: { teamId: made[0] } })
    expect(read).toMatchObject({ isError: false, data: { status: 200, body: { team: { id: made[0], name: `${prefix} 1` } } } })

    const ids: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: Called = await call(mcp.client, "call_operation", { name: "teams.list", arguments: { limit: 2, ...(cursor === null ? {} : { cursor }) } })
      expect(page.isError).toBe(false)
      const teams = wire(TeamPage)(asResult(page.data).body)
      expect(teams.items.length).toBeLessThanOrEqual(2)
      ids.push(...teams.items.map((team) => team.id))
      cursor = teams.nextCursor
      pages++
    } while (cursor !== null && pages < 50)
    expect(pages).toBeGreaterThan(1)
    expect(ids).toEqual(expect.arrayContaining(made))
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("creates a team that the API then shows, sent as the mcp channel with the profile's credential", async () => {
    // The credential of a profile saved by `orgplane auth login`, as a person sets the CLI up once.
    const { configDir, cli } = await fresh()
    const login = await cli(["auth", "login", "--email", people.owner.email, "--url", proxy.url], { ORGPLANE_PASSWORD: PASSWORD })
    expect(login.code).toBe(0)
    const [node, ...args] = command
    const transport = new StdioClientTransport({ command: node, args: [...args, "mcp", "serve"], cwd: root, env: environment(configDir, {}), stderr: "pipe" })
    const client = new Client({ name: "orgplane-cli-test", version: "1.0.0" })
    await client.connect(transport)
    try {
      const name = `Made by an agent ${Math.random().toString(36).slice(2, 8)}`
      const sent = proxy.seen.length
      const created = await call(client, "call_operation", { name: "teams.create", arguments: { name } })
      expect(created).toMatchObject({ isError: false, data: { status: 201, body: { team: { name } } } })
      const teamId: string = wire(TeamResponse)(asResult(created.data).body).team.id
      const shown = await Api.request(server.url, "GET", `/v1/teams/${teamId}`, { token: people.owner.token })
      expect(Api.expectStatus<typeof TeamResponse.Encoded>("team", shown, 200).team.name).toBe(name)

      const write = proxy.seen.slice(sent).find((request) => request.method === "POST" && request.path === "/v1/teams")
      expect(write?.headers["orgplane-channel"]).toBe("mcp")
      expect(write?.headers["idempotency-key"]).toEqual(expect.any(String))
      expect(write?.headers["orgplane-read-only"]).toBeUndefined()
      expect(write?.headers["user-agent"]).toMatch(/^orgplane-cli\/\S+ \(mcp serve\)$/)

      const events = Api.expectStatus<{ items: Array<{ action: string; via: Record<string, unknown> }> }>(
        "audit",
        await Api.request(server.url, "GET", `/v1/audit/events?action=team.create&targetId=${teamId}`, { token: people.owner.token }),
        200
      ).items
      expect(events).toHaveLength(1)
      expect(events[0]?.via).toMatchObject({ channel: "mcp", userAgent: expect.stringMatching(/^orgplane-cli\//) })
    } finally {
      await client.close()
    }
  })

  it("with --read-only sends every request narrowed to reads, lists only reads and writes nothing", async () => {
    const mcp = await asOwner(["--read-only"])
    try {
      const before = await teamCount()
      const sent = proxy.seen.length
      const found = await call(mcp.client, "find_operations", { group: "teams", limit: 50 })
      expect(found.isError).toBe(false)
      const { operations } = asFound(found.data)
      expect(operations.length).toBeGreaterThan(0)
      expect(operations.every((operation) => operation.readOnly)).toBe(true)
      const refused = await call(mcp.client, "call_operation", { name: "teams.create", arguments: { name: "Not written" } })
      expect(refused.isError).toBe(true)
      // Called anyway, the write reaches the server narrowed, and the server refuses it.
      expect(refused.data).toMatchObject({ status: 403, body: { reason: "read_only_credential" } })
      const read = await call(mcp.client, "call_operation", { name: "teams.list", arguments: {} })
      expect(read).toMatchObject({ isError: false, data: { status: 200 } })
      expect(await teamCount()).toBe(before)
      // The guard is the credential's: the server itself refuses any write a request narrowed so carries.
      const requests = proxy.seen.slice(sent)
      expect(requests.length).toBeGreaterThan(0)
      expect(requests.every((request) => request.headers["orgplane-read-only"] === "true")).toBe(true)
      const narrowed = await Api.request(proxy.url, "POST", "/v1/teams", { token: people.owner.token, headers: { "orgplane-read-only": "true" }, body: { name: "Not written" } })
      expect(narrowed.status).toBe(403)
      expect(await teamCount()).toBe(before)
    } finally {
      await mcp.close()
    }
  })

  it("does not delete without confirmation, then deletes once with it", async () => {
    const teamId = await newTeam(`Doomed ${Math.random().toString(36).slice(2, 8)}`)
    const mcp = await sharedOwner()
    const unconfirmed = await call(mcp.client, "call_operation", { name: "teams.delete", arguments: { teamId } })
    expect(unconfirmed.isError).toBe(true)
    const { confirmation } = asFailure(unconfirmed.data)
    expect(confirmation).toEqual(expect.any(String))
    expect(await teamStatus(teamId)).toBe(200)

    const confirmed = await call(mcp.client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation })
    expect(confirmed.isError).toBe(false)
    expect(asResult(confirmed.data).status).toBeLessThan(300)
    expect(await teamStatus(teamId)).toBe(404)

    const again = await call(mcp.client, "call_operation", { name: "teams.delete", arguments: { teamId }, confirmation })
    expect(again.isError).toBe(true)
    const deletes = proxy.seen.filter((request) => request.method === "DELETE" && request.path === `/v1/teams/${teamId}`)
    expect(deletes).toHaveLength(1)
  })

  it("asks the person through a client that can ask its user, and deletes only on their yes, with no token", async () => {
    const kept = await newTeam(`Kept ${Math.random().toString(36).slice(2, 8)}`)
    const doomed = await newTeam(`Doomed ${Math.random().toString(36).slice(2, 8)}`)
    const asked: Array<string> = []
    const mcp = await asOwner([], (message) => {
      asked.push(message)
      return message.includes(doomed)
    })
    try {
      const refused = await call(mcp.client, "call_operation", { name: "teams.delete", arguments: { teamId: kept } })
      expect(refused).toMatchObject({ isError: true, data: { message: expect.stringContaining("did not confirm") } })
      expect(refused.data).not.toHaveProperty("confirmation")
      expect(await teamStatus(kept)).toBe(200)

      const deleted = await call(mcp.client, "call_operation", { name: "teams.delete", arguments: { teamId: doomed } })
      expect(deleted.isError).toBe(false)
      expect(await teamStatus(doomed)).toBe(404)
      expect(asked).toEqual([expect.stringContaining(kept), expect.stringContaining(doomed)])
    } finally {
      await mcp.close()
    }
  })

  it("runs an operation only as itself: no path argument takes a request to another route, confirmed or not", async () => {
    const target = await Api.join(server.url, people.owner.token, "member", "Target")
    const newest = async () =>
      Api.expectStatus<{ items: Array<{ id: string }> }>("audit", await Api.request(server.url, "GET", "/v1/audit/events?limit=1", { token: people.owner.token }), 200).items[0]?.id
    const mcp = await sharedOwner()
    /** The call, and, when it answers a confirmation, the call again with it (as the person would confirm it). */
    const confirmed = async (name: string, args: Record<string, unknown>) => {
      const first = await call(mcp.client, "call_operation", { name, arguments: args })
      const confirmation = memberOf(first.data, "confirmation")
      return typeof confirmation === "string" ? call(mcp.client, "call_operation", { name, arguments: args, confirmation }) : first
    }
    // DELETE /v1/teams/../members/{id}, sent as fetch resolves it, is DELETE /v1/members/{id}: the member removed.
    const removed = await confirmed("teams.removeMember", { teamId: "..", memberId: target.membership.id })
    expect(removed.isError).toBe(true)
    expect(asFailure(removed.data).message).toContain("teamId")
    const member = Api.expectStatus<{ member: { removedAt: string | null } }>(
      "member",
      await Api.request(server.url, "GET", `/v1/members/${target.membership.id}`, { token: people.owner.token }),
      200
    )
    expect(member.member.removedAt).toBeNull()

    // Every served operation with a path parameter, each parameter given values that name another path: whatever
    // was sent is the operation's own request, exactly as built, or the caller read, or its authorization's check.
    const before = await newest()
    const checked = await HostilePaths.tryAll(async ({ operation, args: argsWith }, value) => {
      const args = argsWith(value)
      const sent = proxy.seen.length
      const result = await confirmed(operation.id, args)
      const where = `${operation.id} ${JSON.stringify(args)}`
      expect(result.isError, where).toBe(true)
      const status = memberOf(result.data, "status")
      if (typeof status === "number") expect(status, where).toBeGreaterThanOrEqual(400)
      const own = operation.pathParameters.reduce((path, name) => path.replace(`:${name}`, encodeURIComponent(args[name] ?? "")), operation.path)
      for (const request of proxy.seen.slice(sent)) {
        const route = `${request.method} ${request.path.split("?")[0]}`
        expect(["GET /v1/me", "POST /v1/authorization-checks", `${operation.method} ${own}`], `${where} sent ${route}`).toContain(route)
      }
    })
    expect(checked).toBeGreaterThan(1000)
    expect(await newest()).toBe(before)
    expect(mcp.problems).toEqual([])
  })

  it("gives a confirmation only for a call the server authorizes: a member's removal of another is refused, with the API's answer", async () => {
    const carol = await Api.join(server.url, people.owner.token, "member", "Carol")
    const mcp = await connect([], { ORGPLANE_URL: proxy.url, ORGPLANE_TOKEN: people.member.token })
    try {
      const sent = proxy.seen.length
      const minted = await call(mcp.client, "call_operation", { name: "members.remove", arguments: { memberId: carol.membership.id } })
      expect(minted).toMatchObject({ isError: true, data: { status: 403, body: { reason: "insufficient_role" } } })
      expect(asFailure(minted.data).confirmation).toBeUndefined()
      // Asked of the server's dry authorization, over HTTP like any request of this credential; the removal never sent.
      const requests = proxy.seen.slice(sent).map((request) => `${request.method} ${request.path}`)
      expect(requests).toEqual(["POST /v1/authorization-checks"])
      const member = Api.expectStatus<{ member: { removedAt: string | null } }>(
        "member",
        await Api.request(server.url, "GET", `/v1/members/${carol.membership.id}`, { token: people.owner.token }),
        200
      )
      expect(member.member.removedAt).toBeNull()
    } finally {
      await mcp.close()
    }
  })

  it("serves typed tools for the toolsets named, with an API key from ORGPLANE_API_KEY", async () => {
    const key = Api.expectStatus<{ key: string }>(
      "api key",
      await Api.request(server.url, "POST", "/v1/api-keys", { token: people.owner.token, body: { name: "mcp serve" } }),
      201
    ).key
    const mcp = await connect(["--toolsets", "teams, members"], { ORGPLANE_URL: proxy.url, ORGPLANE_API_KEY: key })
    try {
      const { tools } = await mcp.client.listTools()
      const names = tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(["find_operations", "describe_operation", "call_operation", "teams_list", "teams_create", "members_list"]))
      expect(names.some((name) => name.startsWith("invitations_"))).toBe(false)
      const create = tools.find((tool) => tool.name === "teams_create")
      expect(create?.inputSchema.properties).toHaveProperty("name")
      expect(create?.annotations).toMatchObject({ readOnlyHint: false })
      const listed = await call(mcp.client, "teams_list", { limit: 1 })
      expect(listed).toMatchObject({ isError: false, data: { status: 200 } })
      expect(proxy.seen.at(-1)?.headers["x-api-key"]).toBe(key)
    } finally {
      await mcp.close()
    }
  })

  it("answers a request sent before initialize with the protocol's Invalid Request, not an internal error", async () => {
    const { configDir } = await fresh()
    const [node, ...args] = command
    const child = spawn(node, [...args, "mcp", "serve"], {
      cwd: root,
      env: environment(configDir, { ORGPLANE_URL: proxy.url, ORGPLANE_TOKEN: people.owner.token }),
      stdio: ["pipe", "pipe", "pipe"]
    })
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        let stdout = ""
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString("utf8")
          if (stdout.includes("\n")) resolve(stdout.slice(0, stdout.indexOf("\n")))
        })
        child.on("close", () => reject(new Error(`closed before answering: ${stdout}`)))
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })}\n`)
      })
      expect(JSON.parse(answer)).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32600, message: expect.stringContaining("send initialize first") }
      })
    } finally {
      child.kill("SIGTERM")
    }
  })

  it("refuses an unknown toolset at start, with a usage error on stderr and nothing on stdout", async () => {
    const { configDir } = await fresh()
    const [node, ...args] = command
    const child = spawn(node, [...args, "mcp", "serve", "--toolsets", "teams,nonsense"], {
      cwd: root,
      env: environment(configDir, { ORGPLANE_URL: proxy.url, ORGPLANE_TOKEN: people.owner.token }),
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(code).toBe(2)
    expect(stdout).toBe("")
    expect(stderr).toMatch(/--toolsets: Unknown toolset nonsense/)
  })
})
