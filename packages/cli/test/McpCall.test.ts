/**
 * `orgplane mcp call` and `orgplane mcp tools`: the CLI in-process (see Harness.ts) against a real server
 * (RealServer.ts) and MCP fakes.
 */
import { McpToolCatalog } from "@orgplane/schema"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"

let server: RealServer.RealServer
let keyed: FakeMcp.FakeMcp
let media: FakeMcp.FakeMcp
const API_KEY = "sk-cli-call-secret-31337"

beforeAll(async () => {
  // The fake listens on loopback, which only private mode lets the server reach.
  ;[server, keyed, media] = await Promise.all([
    RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" }),
    FakeMcp.start({ auth: { apiKey: API_KEY } }),
    FakeMcp.start({ mediaTool: true })
  ])
})
afterAll(async () => {
  await Promise.all([server?.close(), keyed?.close(), media?.close()])
  await cleanup()
})

const setUp = async () => {
  const org = await Http.staffed(server.url)
  const created = await Http.request(server.url, "POST", "/v1/mcp-connections", {
    token: org.owner.token,
    body: { name: "Keyed Docs", url: keyed.url, authType: "apikey", apiKey: API_KEY }
  })
  const connection = Http.expectStatus<{ item: { id: string } }>("creating", created, 201).item
  Http.expectStatus("granting", await Http.request(server.url, "POST", `/v1/mcp-connections/${connection.id}/access`, { token: org.owner.token, body: { role: "viewer", orgWide: true } }), 201)
  return { org, connection }
}

describe("orgplane mcp", { timeout: 120_000 }, () => {
  it("runs a tool by connection name or id and prints the result and the exchange, redacted", async () => {
    const { connection, org } = await setUp()
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }

    const human = await cli(["mcp", "call", "keyed docs", "echo", "--args", '{"text":"hello from the cli"}'], env)
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toContain("hello from the cli")
    expect(human.stdout).toContain(`Request: POST ${keyed.url}`)
    expect(human.stdout).toContain("authorization: Bearer [redacted]  (redacted)")
    expect(human.stdout).toMatch(/Response: 200 .*in \d+ ms/)
    expect(human.stdout).toContain("Diagnosis: The tool ran and answered a result.")
    expect(human.stdout + human.stderr).not.toContain(API_KEY)

    const asJson = await cli(["mcp", "call", connection.id, "add", "--args", '{"a":1,"b":2}', "--json"], env)
    expect(asJson.code, asJson.stderr).toBe(0)
    const body = json(asJson)
    expect(body.result.structuredContent).toEqual({ sum: 3 })
    expect(body.inspection.request.headers).toContainEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })

    const directory = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-mcp-"))
    const file = Path.join(directory, "args.json")
    await Fs.writeFile(file, '{"text":"from a file"}')
    const fromFile = await cli(["mcp", "call", connection.id, "echo", "--args-file", file], env)
    expect(fromFile.code, fromFile.stderr).toBe(0)
    expect(fromFile.stdout).toContain("from a file")
    await Fs.rm(directory, { recursive: true, force: true })
  })

  it("shows images, audio, resource links and resources by type, MIME type, size and URI, never their base64; --json keeps it all", async () => {
    const org = await Http.staffed(server.url)
    const created = await Http.request(server.url, "POST", "/v1/mcp-connections", {
      token: org.owner.token,
      body: { name: "Media", url: media.url, authType: "none" }
    })
    const connection = Http.expectStatus<{ item: { id: string } }>("creating", created, 201).item
    Http.expectStatus("granting", await Http.request(server.url, "POST", `/v1/mcp-connections/${connection.id}/access`, { token: org.owner.token, body: { role: "viewer", orgWide: true } }), 201)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }

    const [human, asJson] = await Promise.all([cli(["mcp", "call", connection.id, "snapshot"], env), cli(["mcp", "call", connection.id, "snapshot", "--json"], env)])
    expect(human.code, human.stderr).toBe(0)
    const result = human.stdout.slice(0, human.stdout.indexOf("\nRequest:"))
    expect(result.split("\n").slice(1)).toEqual([
      "A snapshot of the board.",
      "image (image/png, 852 bytes)",
      "audio (audio/wav, 44 bytes)",
      "resource link: board.pdf (The board) — https://files.example.com/board.pdf (application/pdf)",
      "resource: file:///notes.txt (text/plain)",
      "Embedded notes.",
      "resource: file:///raw.bin (application/octet-stream, 44 bytes)",
      ""
    ])
    // Nowhere, the exchange's body excerpt included: a long base64 run is shown as its size.
    expect(human.stdout).not.toContain(FakeMcp.MEDIA.png.slice(0, 100))
    expect(human.stdout).toMatch(/\[852 bytes of base64\]/)
    expect(result).not.toContain(FakeMcp.MEDIA.wav)

    expect(asJson.code, asJson.stderr).toBe(0)
    expect(json(asJson).result.content).toEqual([
      { type: "text", text: "A snapshot of the board." },
      { type: "image", data: FakeMcp.MEDIA.png, mimeType: "image/png" },
      { type: "audio", data: FakeMcp.MEDIA.wav, mimeType: "audio/wav" },
      { type: "resource_link", uri: "https://files.example.com/board.pdf", name: "board.pdf", title: "The board", mimeType: "application/pdf" },
      { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "Embedded notes." } },
      { type: "resource", resource: { uri: "file:///raw.bin", mimeType: "application/octet-stream", blob: FakeMcp.MEDIA.wav } }
    ])
  })

  it("prints the diagnostic and the exchange of a failed call, and exits 1", async () => {
    const { connection, org } = await setUp()
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }
    const failed = await cli(["mcp", "call", connection.id, "fail"], env)
    expect(failed.code).toBe(1)
    expect(failed.stderr).toMatch(/code\s+MCP_PROVIDER_TOOL_ERROR/)
    expect(failed.stderr).toMatch(/category\s+provider_tool_error/)
    expect(failed.stderr).toMatch(/what to do\s+\S/)
    expect(failed.stderr).toContain("Response: 200")
    expect(failed.stderr).toContain('tool_execution_failed (502): Could not run "fail" on "Keyed Docs"')

    const asJson = await cli(["mcp", "call", connection.id, "fail", "--json"], env)
    expect(asJson.code).toBe(1)
    const body = JSON.parse(asJson.stderr)
    expect(body).toMatchObject({ error: "tool_execution_failed", diagnostic: { code: "MCP_PROVIDER_TOOL_ERROR" } })
    expect(body.inspection.response.status).toBe(200)
  })

  it("refuses bad arguments and unknown connections before calling", async () => {
    const { connection, org } = await setUp()
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }
    const notObject = await cli(["mcp", "call", connection.id, "echo", "--args", "[1,2]"], env)
    expect(notObject.code).toBe(2)
    const both = await cli(["mcp", "call", connection.id, "echo", "--args", "{}", "--args-file", "x.json"], env)
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("not both")
    const unknown = await cli(["mcp", "call", "No such connection", "echo"], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('no MCP connection is named "No such connection"')
  })

  it("lists a connection's tools", async () => {
    const { connection, org } = await setUp()
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token }
    const listed = await cli(["mcp", "tools", connection.id], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/^NAME\s+ENABLED\s+HINTS\s+DESCRIPTION/)
    expect(listed.stdout).toMatch(/delete_item\s+yes\s+destructive/)
    const asJson = await cli(["mcp", "tools", "Keyed Docs", "--json"], env)
    expect(wire(McpToolCatalog, asJson).tools.map((tool) => tool.name)).toContain("echo")
  })
})
