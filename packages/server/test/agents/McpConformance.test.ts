/**
 * `/mcp` as the official MCP conformance suite judges it (`@modelcontextprotocol/conformance`, `conformance server`),
 * with the failures expected of it listed, each with why, in mcp-conformance-baseline.yml: the suite fails on any
 * other failure, and on a listed scenario that passes.
 *
 * The suite connects without a credential, as to a server of its own; here it reaches `/mcp` through a proxy on
 * loopback that adds an owner's session token and changes nothing else (its `Host` and `Origin` included), and the
 * server's public URL is the proxy's, as behind any gateway: the suite's DNS-rebinding scenario then sends the
 * server's own origin and a rebound one.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as NodeHttp from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const baseline = Path.join(here, "mcp-conformance-baseline.yml")
const suite = Path.join(here, "../../node_modules/.bin/conformance")

let server: TestServer.RunningServer
let proxy: NodeHttp.Server
let proxyUrl: string
let results: string

beforeAll(async () => {
  let target: URL | undefined
  let token = ""
  proxy = NodeHttp.createServer((incoming, outgoing) => {
    if (target === undefined) return void outgoing.writeHead(503).end()
    const forwarded = NodeHttp.request({
      host: target.hostname,
      port: target.port,
      method: incoming.method,
      path: incoming.url,
      headers: { ...incoming.headers, authorization: `Bearer ${token}` }
    }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    forwarded.on("error", () => outgoing.destroy())
    incoming.pipe(forwarded)
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const address = proxy.address()
  proxyUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  server = await TestServer.start({ mcp: true, publicUrl: proxyUrl })
  token = (await Http.owner(server.url)).token
  target = new URL(server.url)
  results = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-mcp-conformance-"))
})

afterAll(async () => {
  proxy?.closeAllConnections()
  await new Promise((resolve) => proxy?.close(resolve))
  await server?.close()
  if (results !== undefined) await Fs.rm(results, { recursive: true, force: true })
})

/** Every check the suite wrote that did not succeed, by scenario folder: what a failure message names. */
const unsuccessful = async () => {
  const found: Array<string> = []
  for (const folder of await Fs.readdir(results)) {
    const text = await Fs.readFile(Path.join(results, folder, "checks.json"), "utf8").catch(() => "[]")
    const checks: unknown = JSON.parse(text)
    if (!Array.isArray(checks)) continue
    for (const check of checks) {
      if (typeof check !== "object" || check === null) continue
      const status: unknown = Reflect.get(check, "status")
      if (status === "SUCCESS" || status === "INFO") continue
      found.push(`${folder.replace(/^server-|-\d{4}-\d\d-\d\dT.*$/g, "")}: ${String(Reflect.get(check, "id"))} ${String(Reflect.get(check, "errorMessage") ?? "")}`)
    }
  }
  return found.sort()
}

describe("the MCP conformance suite", { timeout: 120_000 }, () => {
  it("passes every scenario but the ones its baseline explains", async () => {
    const run = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        suite,
        ["server", "--url", `${proxyUrl}/mcp`, "--expected-failures", baseline, "--output-dir", results],
        { timeout: 100_000, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: `${stdout}\n${stderr}` })
      )
    })
    const summary = run.output.slice(run.output.indexOf("=== SUMMARY ==="))
    expect(run.code, `${summary}\n${(await unsuccessful()).join("\n")}`).toBe(0)
    // The suite ran its scenarios (an empty run would pass too).
    expect(summary).toMatch(/server-initialize: 1 passed, 0 failed/)
    expect(summary).toMatch(/dns-rebinding-protection: 2 passed, 0 failed/)
  })
})
