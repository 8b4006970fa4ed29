/**
 * `orgplane workers`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts) and a fake worker
 * runtime.
 */
import { WorkerActivityPage, WorkerPage } from "@orgplane/schema"
import * as FakeWorkerRuntime from "../../../packages/testkit/src/FakeWorkerRuntime.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"

let server: RealServer.RealServer
let runtime: FakeWorkerRuntime.FakeWorkerRuntime

beforeAll(async () => {
  // The fake runtime listens on loopback, which only private mode lets the upgrade reach.
  ;[server, runtime] = await Promise.all([RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" }), FakeWorkerRuntime.start()])
})
afterAll(async () => {
  await Promise.all([server?.close(), runtime?.close()])
  await cleanup()
})

describe("orgplane workers", { timeout: 120_000 }, () => {
  it("registers, lists, reads, updates, rotates, upgrades and deletes workers", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }

    const registered = await cli(["workers", "register", "Laptop", "--sandbox-backend", "docker", "--workspace-path", "/work", "--json"], env)
    expect(registered.code, registered.stderr).toBe(0)
    const { token, worker } = json(registered)
    expect(token).toMatch(/^opw_/)
    expect(worker).toMatchObject({ name: "Laptop", destination: "local", status: "provisioning", sandboxBackend: "docker", isMine: true })

    const human = await cli(["workers", "register", "Cloud box", "--destination", "cloud"], { ...env, ORGPLANE_TOKEN: org.admin.token })
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toContain("shown only this once")
    expect(human.stdout).toMatch(/opw_[A-Za-z0-9_-]{43}/)

    const listed = await cli(["workers", "list", "--json"], env)
    expect(wire(WorkerPage, listed).items.map((w) => [w.name, w.isMine])).toEqual([["Laptop", true], ["Cloud box", false]])
    const mine = await cli(["workers", "list", "--mine"], env)
    expect(mine.stdout).toContain("Laptop")
    expect(mine.stdout).not.toContain("Cloud box")

    // The runtime reports its instance with its token; `get` shows it, never its credential.
    Http.expectStatus("instance", await Http.request(server.url, "POST", "/v1/worker-runtime/instance", {
      token,
      body: { provider: "static", status: "running", url: runtime.url, credential: runtime.credential }
    }), 201)
    const read = await cli(["workers", "get", worker.id], env)
    expect(read.code, read.stderr).toBe(0)
    expect(read.stdout).toContain(`instance: static, running, ${runtime.url}`)
    expect(read.stdout).not.toContain(runtime.credential)

    const updated = await cli(["workers", "update", worker.id, "--name", "Renamed", "--json"], env)
    expect(json(updated).worker.name).toBe("Renamed")

    const upgraded = await cli(["workers", "upgrade", worker.id, "--body", "{\"version\":\"2.0.0\"}", "--json"], env)
    expect(upgraded.code, upgraded.stderr).toBe(0)
    expect(json(upgraded)).toEqual({ status: 200, body: { ok: true, upgraded: true, requested: { version: "2.0.0" } } })
    const file = Path.join(await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-upgrade-")), "upgrade.json")
    await Fs.writeFile(file, "{\"channel\":\"beta\"}")
    const fromFile = await cli(["workers", "upgrade", worker.id, "--file", file], env)
    expect(fromFile.code, fromFile.stderr).toBe(0)
    expect(fromFile.stdout).toContain("The runtime answered 200")
    expect(fromFile.stdout).toContain("\"channel\": \"beta\"")

    const rotated = await cli(["workers", "rotate-token", worker.id, "--json"], env)
    expect(json(rotated).token).not.toBe(token)

    const deleted = await cli(["workers", "delete", worker.id, "--json"], env)
    expect(json(deleted)).toEqual({ ok: true, deleted: worker.id })
    const gone = await cli(["workers", "get", worker.id], env)
    expect(gone.code).not.toBe(0)
    expect(gone.stderr).toContain("worker_not_found")
  })

  it("checks its input with the API's schemas before sending", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }
    const badBackend = await cli(["workers", "register", "X", "--sandbox-backend", "Not A Slug"], env)
    expect(badBackend.code).toBe(2)
    expect(badBackend.stderr).toContain("--sandbox-backend")
    const badId = await cli(["workers", "get", "tem_01h455vb4pex5vsknk084sn02q"], env)
    expect(badId.code).toBe(2)
    const array = await cli(["workers", "upgrade", "wrk_01h455vb4pex5vsknk084sn02q", "--body", "[1]"], env)
    expect(array.code).toBe(2)
    expect(array.stderr).toContain("--body")
    const both = await cli(["workers", "upgrade", "wrk_01h455vb4pex5vsknk084sn02q", "--body", "{}", "--file", "x.json"], env)
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("not both")
  })

  it("shows a worker's connectivity and its activity: heartbeats and transitions, as a table and as JSON", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }
    const { token, worker } = json(await cli(["workers", "register", "Builder", "--json"], env))
    const beat = await Http.request(server.url, "POST", "/v1/worker-runtime/heartbeat", {
      token,
      body: { active: true, openSessions: 2, imageVersion: "3.1.4" }
    })
    expect(beat.status).toBe(200)

    const listed = await cli(["workers", "list"], env)
    expect(listed.stdout).toMatch(/CONNECTIVITY/i)
    expect(listed.stdout).toMatch(/Builder\s+local\s+online\s+online/)
    const read = await cli(["workers", "get", worker.id], env)
    expect(read.stdout).toContain("connectivity: online")
    expect(read.stdout).toContain("open sessions: 2")

    const table = await cli(["workers", "activity", worker.id], env)
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain("online, active, 2 open sessions, version 3.1.4")
    expect(table.stdout).toContain("offline -> online (a heartbeat arrived)")
    const asJson = await cli(["workers", "activity", worker.id, "--json"], env)
    const page = wire(WorkerActivityPage, asJson)
    expect(page.items.map((entry) => entry.kind).sort()).toEqual(["heartbeat", "transition"])
    expect(page.nextCursor).toBeNull()
    const transitions = json(await cli(["workers", "activity", worker.id, "--kind", "transition", "--json"], env))
    expect(transitions.items).toEqual([expect.objectContaining({ kind: "transition", from: "offline", to: "online", cause: "heartbeat" })])

    // Another member may not read it; an admin may.
    const stranger = await Http.join(server.url, org.owner.token, "member", "Stranger")
    const refused = await cli(["workers", "activity", worker.id], { ...env, ORGPLANE_TOKEN: stranger.token })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("insufficient_access")
    expect((await cli(["workers", "activity", worker.id, "--json"], { ...env, ORGPLANE_TOKEN: org.admin.token })).code).toBe(0)
    expect((await cli(["workers", "activity", worker.id, "--kind", "sometimes"], env)).code).toBe(2)
  })
})
