/**
 * One version for the four published packages (a fixed changesets group), and every place that reports it says the
 * same: `orgplane --version`, the server's `/health`, the client's and the CLI's user agents. The published
 * tarballs are checked the same way by `.ci/pack-check.mjs`. The four packages are read at
 * `../../<name>`, the server is a real one (RealServer.ts).
 */
import { createClient, VERSION as clientVersion } from "@orgplane/client"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh } from "./Harness.js"
import * as RealServer from "./RealServer.js"

const versionOf = (name: string) =>
  JSON.parse(Fs.readFileSync(new URL(`../../${name}/package.json`, import.meta.url), "utf8")).version as string

const version = versionOf("cli")

let server: RealServer.RealServer
/** A server that records the user agent of each request it gets and answers like `/health`. */
let recorder: Http.Server
const userAgents: Array<string> = []

beforeAll(async () => {
  server = await RealServer.start()
  recorder = Http.createServer((request, response) => {
    userAgents.push(request.headers["user-agent"] ?? "")
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, version: "recorder" }))
  })
  await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve))
})
afterAll(async () => {
  await server?.close()
  await new Promise((resolve) => recorder?.close(resolve))
  await cleanup()
})

const recorderUrl = () => `http://127.0.0.1:${(recorder.address() as Net.AddressInfo).port}`

describe("the release version", { timeout: 60_000 }, () => {
  it("is the same in the four packages' package.json, and a release version", () => {
    expect(["schema", "server", "client"].map(versionOf)).toEqual([version, version, version])
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/)
  })

  it("is what orgplane --version prints and what the server's /health reports", async () => {
    const { cli } = await fresh()
    const printed = await cli(["--version"])
    expect(printed.code).toBe(0)
    expect(printed.stdout.trim()).toBe(version)
    const health = await (await fetch(`${server.url}/health`)).json()
    expect(health).toEqual({ ok: true, version })
  })

  it("is in the client's user agent, and the CLI's after it", async () => {
    expect(clientVersion).toBe(version)
    const client = createClient({ baseUrl: recorderUrl(), userAgent: "pack/1" })
    try {
      await client.system.health()
    } finally {
      await client.close()
    }
    const { cli } = await fresh()
    // `whoami` sends a credential-bearing request; what the server answers does not matter here.
    await cli(["whoami", "--url", recorderUrl(), "--token", "x"])
    expect(userAgents).toContain(`orgplane-client/${version} pack/1`)
    expect(userAgents).toContain(`orgplane-client/${version} orgplane-cli/${version}`)
  })
})
