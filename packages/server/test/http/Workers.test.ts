/**
 * Workers over HTTP: registration with a token shown once, reads with `isMine` and the latest instance, changes by
 * the creator, owners and admins only, the runtime's token (heartbeats, instances, revocation), the organization
 * boundary, and the upgrade forwarded to a fake runtime on 127.0.0.1 (up, hanging, down, redirecting, odd answers).
 */
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as FakeWorkerRuntime from "../../../../packages/testkit/src/FakeWorkerRuntime.js"
import { type RegisterWorkerRequest } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: TestServer.RunningServer
let runtime: FakeWorkerRuntime.FakeWorkerRuntime
beforeAll(async () => {
  // A runtime that hangs is given up on after one second; the fake runtimes are on loopback: private mode.
  server = await TestServer.start({ clock, workerRuntimeTimeout: "1 second", outboundAllowPrivate: true })
  runtime = await FakeWorkerRuntime.start()
})
afterAll(async () => {
  await runtime.close()
  await server.close()
})

const { get, post } = Http.verbs(() => server.url)
const { audit, workerRuntime, workers } = calls(() => server.url)

type Org = Awaited<ReturnType<typeof Http.staffed>>

const register = async (token: string, payload: Partial<typeof RegisterWorkerRequest.Encoded> = {}) =>
  ok(await workers.register({ token, payload: { name: "Laptop worker", destination: "local", ...payload } }), 201)

/** A worker of `org`'s member whose runtime registered an instance at the fake runtime. */
const withInstance = async (org: Org, url: string = runtime.url, credential: string | null = runtime.credential) => {
  const registered = await register(org.member.token)
  const body = { provider: "static", status: "running", url, ...(credential === null ? {} : { credential }) }
  Http.expectStatus("registering an instance", await post("/v1/worker-runtime/instance", { token: registered.token, body }), 201)
  return registered
}

describe("workers", () => {
  it("are registered with a token shown once, read by every member with isMine, changed and deleted by their creator", async () => {
    const org = await Http.staffed(server.url)
    const registered = await register(org.member.token, {
      name: "  Build box ",
      description: "Runs CI agents",
      destination: "cloud",
      sandboxBackend: "docker",
      workspacePath: "/srv/work"
    })
    expect(registered.token).toMatch(/^opw_[A-Za-z0-9_-]{43}$/)
    const worker = registered.worker
    expect(worker.id).toMatch(/^wrk_[0-9a-z]{26}$/)
    expect(worker).toMatchObject({
      orgId: org.organizationId,
      createdByUserId: org.member.user.id,
      isMine: true,
      name: "Build box",
      description: "Runs CI agents",
      destination: "cloud",
      status: "provisioning",
      imageVersion: null,
      workspacePath: "/srv/work",
      sandboxBackend: "docker",
      lastHeartbeatAt: null,
      lastActiveAt: null
    })

    // isMine is the reader's: true for its creator, false for the owner.
    const path = { id: worker.id }
    const mine = await workers.get({ token: org.member.token, path })
    expect(mine.status).toBe(200)
    expect(mine.body).toEqual({ worker, instance: null })
    const owners = await workers.get({ token: org.owner.token, path })
    expect(ok(owners, 200).worker).toEqual({ ...worker, isMine: false })

    const other = await register(org.admin.token, { name: "Admin worker" })
    const all = ok(await workers.list({ token: org.member.token }), 200)
    expect(all.items.map((w) => [w.id, w.isMine])).toEqual([[worker.id, true], [other.worker.id, false]])
    const onlyMine = ok(await workers.list({ token: org.member.token, query: { mine: "true" } }), 200)
    expect(onlyMine.items.map((w) => w.id)).toEqual([worker.id])

    // Pages follow each other.
    const first = ok(await workers.list({ token: org.owner.token, query: { limit: "1" } }), 200)
    expect(first.items.map((w) => w.id)).toEqual([worker.id])
    const second = await workers.list({ token: org.owner.token, query: { limit: "1", cursor: String(first.nextCursor) } })
    expect(second.body).toEqual({ items: [{ ...other.worker, isMine: false }], nextCursor: null })

    const updated = await workers.update({ token: org.member.token, path, payload: { name: "Renamed", description: null, sandboxBackend: "none" } })
    expect(updated.status).toBe(200)
    expect(ok(updated, 200).worker).toMatchObject({ name: "Renamed", description: null, sandboxBackend: "none", workspacePath: "/srv/work" })

    // Another member may read it but not change it; an admin may.
    const stranger = await Http.join(server.url, org.owner.token, "member", "Stranger")
    const refused = await workers.update({ token: stranger.token, path, payload: { name: "Mine now" } })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_access" })
    expect((await workers.delete({ token: stranger.token, path })).status).toBe(403)
    expect((await workers.rotateToken({ token: stranger.token, path })).status).toBe(403)
    expect((await workers.upgradeRuntime({ token: stranger.token, path, payload: {} })).status).toBe(403)
    expect((await workers.update({ token: org.admin.token, path, payload: { workspacePath: "/tmp" } })).status).toBe(200)

    expect((await workers.delete({ token: org.member.token, path })).status).toBe(204)
    const gone = await workers.get({ token: org.member.token, path })
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ error: "worker_not_found", message: "Worker not found." })
    expect(ok(await workers.list({ token: org.member.token }), 200).items.map((w) => w.id)).toEqual([other.worker.id])
    // Deleting revoked its token.
    expect((await workerRuntime.heartbeat({ token: registered.token, payload: {} })).status).toBe(401)
    expect((await workers.delete({ token: org.member.token, path })).status).toBe(404)
  })

  it("check their input: every bad field, at least one change, a plain-string id of any other shape is 404", async () => {
    const org = await Http.staffed(server.url)
    const bad = await post("/v1/workers", {
      token: org.member.token,
      body: { name: " ", destination: "moon", sandboxBackend: "Docker!", extra: 1 }
    })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details.map((d) => d.path[0]).sort()).toEqual(["destination", "extra", "name", "sandboxBackend"])
    const { worker } = await register(org.member.token)
    const empty = await workers.update({ token: org.member.token, path: { id: worker.id }, payload: {} })
    expect(empty.status).toBe(400)
    expect(invalid(empty).details[0]?.message).toBe("give name, description, workspacePath or sandboxBackend")
    for (const id of ["not-a-worker", "tem_01h455vb4pex5vsknk084sn02q", "wrk_01h455vb4pex5vsknk084sn02q"]) {
      const missing = await get(`/v1/workers/${id}`, { token: org.member.token })
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ error: "worker_not_found" })
    }
    expect((await get("/v1/workers?mine=yes", { token: org.member.token })).status).toBe(400)
  })

  it("are driven by their runtime's token: heartbeats, instances (the newest is the one shown), rotation revokes the old token", async () => {
    const org = await Http.staffed(server.url)
    const registered = await register(org.member.token)
    const id = registered.worker.id
    const workerOf = async (token: string) => ok(await workers.get({ token, path: { id } }), 200)

    const beat = await workerRuntime.heartbeat({ token: registered.token, payload: { imageVersion: "1.4.2", active: true } })
    expect(beat.status).toBe(200)
    const afterBeat = (await workerOf(org.member.token)).worker
    expect(afterBeat).toMatchObject({ status: "online", imageVersion: "1.4.2" })
    expect(afterBeat.lastHeartbeatAt).not.toBeNull()
    expect(afterBeat.lastActiveAt).toBe(afterBeat.lastHeartbeatAt)

    // An online worker that stops beating reads as offline.
    clock.advance("4 minutes")
    expect((await workerOf(org.member.token)).worker.status).toBe("offline")
    expect((await workerRuntime.heartbeat({ token: registered.token, payload: { status: "error" } })).status).toBe(200)
    const errored = (await workerOf(org.member.token)).worker
    expect(errored).toMatchObject({ status: "error", imageVersion: "1.4.2", lastActiveAt: afterBeat.lastActiveAt })

    const first = await workerRuntime.registerInstance({
      token: registered.token,
      payload: { provider: "fly", region: "ams", url: "https://first.example.com/", status: "starting", credential: "first-secret" }
    })
    expect(first.status).toBe(201)
    expect(ok(first, 201).instance).toMatchObject({ provider: "fly", region: "ams", url: "https://first.example.com/", status: "starting" })
    expect(first.text).not.toContain("first-secret")
    // Its audit event names the worker whose runtime registered and the instance (OpenApiExamples.test.ts cannot: the example's
    // runtime host does not resolve here).
    const events = ok(await audit.listEvents({ token: org.owner.token, query: { requestId: String(first.headers.get("x-request-id")) } }), 200)
    expect(events.items.map((event) => [event.action, event.targets.map((target) => target.id)])).toEqual([
      ["worker.instance.register", [id, expect.stringMatching(/^wki_[0-9a-z]{26}$/)]]
    ])
    clock.advance("1 second")
    const second = await workerRuntime.registerInstance({
      token: registered.token,
      payload: { provider: "fly", url: "https://second.example.com", status: "running", credential: "second-secret" }
    })
    expect(second.status).toBe(201)
    const read = await workers.get({ token: org.owner.token, path: { id } })
    expect(ok(read, 200).instance).toEqual(ok(second, 201).instance)
    expect(ok(read, 200).instance).toMatchObject({ provider: "fly", region: null, url: "https://second.example.com", status: "running" })
    expect(read.text).not.toContain("secret")

    // Bad instance reports.
    for (const url of ["ftp://x.example.com", "https://user:pw@x.example.com", "https://x.example.com/#frag", "https://x.example.com/?a=1", "not a url"]) {
      const refused = await workerRuntime.registerInstance({ token: registered.token, payload: { provider: "fly", status: "running", url } })
      expect(refused.status).toBe(400)
      expect(invalid(refused).details[0]?.path).toEqual(["url"])
    }

    // Rotation: a new token works, the old one is 401.
    const rotated = await workers.rotateToken({ token: org.admin.token, path: { id } })
    expect(rotated.status).toBe(201)
    const rotatedToken = ok(rotated, 201).token
    expect(rotatedToken).not.toBe(registered.token)
    expect((await workerRuntime.heartbeat({ token: registered.token, payload: {} })).status).toBe(401)
    expect((await workerRuntime.heartbeat({ token: rotatedToken, payload: {} })).status).toBe(200)
  })

  it("refuse the runtime operations without a valid worker token", async () => {
    const org = await Http.staffed(server.url)
    expect((await post("/v1/worker-runtime/heartbeat", { body: {} })).status).toBe(401)
    expect((await post("/v1/worker-runtime/heartbeat", { token: "opw_unknown", body: {} })).status).toBe(401)
    // A person's session is not a worker token, nor is a worker token a person's credential.
    const session = await post("/v1/worker-runtime/heartbeat", { token: org.member.token, body: {} })
    expect(session.status).toBe(401)
    expect(session.body).toMatchObject({ error: "unauthorized", reason: "worker_token_unknown" })
    const { token } = await register(org.member.token)
    expect((await get("/v1/workers", { token })).status).toBe(401)
    expect((await post("/v1/worker-runtime/heartbeat", { headers: { authorization: `Basic ${token}` }, body: {} })).status).toBe(401)
  })
})

describe("a runtime upgrade", () => {
  it("is forwarded with the runtime's credential and the body; the runtime's status and body come back", async () => {
    const org = await Http.staffed(server.url)
    const { worker } = await withInstance(org)
    runtime.setMode({ _tag: "ok" })
    const before = runtime.requests.length
    const path = { id: worker.id }
    const upgrade = async (token: string) => (await workers.upgradeRuntime({ token, path, payload: {} })).body
    const upgraded = await workers.upgradeRuntime({ token: org.member.token, path, payload: { version: "2.0.0", force: true } })
    expect(upgraded.status).toBe(200)
    expect(upgraded.body).toEqual({ status: 200, body: { ok: true, upgraded: true, requested: { version: "2.0.0", force: true } } })
    const sent = runtime.requests.slice(before)
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatchObject({ method: "POST", path: "/runtime/upgrade" })
    expect(sent[0]!.headers["authorization"]).toBe(`Bearer ${runtime.credential}`)
    expect(sent[0]!.headers["content-type"]).toBe("application/json")
    expect(sent[0]!.headers["accept"]).toBe("application/json")
    expect(JSON.parse(sent[0]!.body)).toEqual({ version: "2.0.0", force: true })

    // An owner may upgrade a member's worker; an empty object is the default request.
    expect(await upgrade(org.owner.token)).toMatchObject({ status: 200 })

    // The runtime's own failures come back as they are, in the envelope.
    runtime.setMode({ _tag: "status", status: 503, body: { error: "busy" } })
    expect(await upgrade(org.member.token)).toEqual({
      status: 503,
      body: { error: "busy" }
    })
    runtime.setMode({ _tag: "text", text: "upgrade queued" })
    expect(await upgrade(org.member.token)).toEqual({
      status: 200,
      body: { message: "upgrade queued" }
    })
    runtime.setMode({ _tag: "empty", status: 202 })
    expect(await upgrade(org.member.token)).toEqual({ status: 202, body: null })
    runtime.setMode({ _tag: "ok" })
  })

  it("takes a JSON object only", async () => {
    const org = await Http.staffed(server.url)
    const { worker } = await withInstance(org)
    for (const rawBody of ["[1,2]", "\"upgrade\"", "42", "null"]) {
      const refused = await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, rawBody })
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ error: "invalid_request" })
    }
  })

  it("is 502 when the runtime hangs past the timeout, is down, or redirects (never followed)", async () => {
    const org = await Http.staffed(server.url)
    const { worker } = await withInstance(org)
    const upgrade = (id = worker.id) => workers.upgradeRuntime({ token: org.member.token, path: { id }, payload: {} })

    runtime.setMode({ _tag: "hang" })
    const hung = await upgrade()
    expect(hung.status).toBe(502)
    expect(hung.body).toMatchObject({ error: "worker_runtime_error", message: expect.stringContaining("did not answer in time") })

    const target = await FakeWorkerRuntime.start()
    runtime.setMode({ _tag: "redirect", location: `${target.url}/runtime/upgrade` })
    const redirected = await upgrade()
    expect(redirected.status).toBe(502)
    expect(redirected.body).toMatchObject({ error: "worker_runtime_error", message: expect.stringContaining("redirect") })
    expect(target.requests).toHaveLength(0)
    await target.close()
    runtime.setMode({ _tag: "ok" })

    const down = await withInstance(org, await FakeWorkerRuntime.downUrl())
    const refused = await upgrade(down.worker.id)
    expect(refused.status).toBe(502)
    expect(refused.body).toMatchObject({ error: "worker_runtime_error", message: expect.stringContaining("could not be reached") })
  })

  it("refuses, at registration, a runtime URL the outbound guard refuses (private mode off): 400 on url, nothing stored or sent", async () => {
    const dns = await FakeDns.start()
    dns.setAddresses("runtime.example", ["127.0.0.1"])
    dns.setAddresses("office.example", ["203.0.114.7", "10.1.2.3"])
    const strict = await TestServer.start({ clock, dnsServers: dns.address, outboundAllowPrivate: false })
    try {
      const org = await Http.staffed(strict.url)
      const port = new URL(runtime.url).port
      const cases = [
        [runtime.url, "https is required"],
        [`https://127.0.0.1:${port}`, "127.0.0.1 is a loopback address"],
        [`https://[::ffff:127.0.0.1]:${port}`, "IPv4-mapped form of 127.0.0.1"],
        [`https://runtime.example:${port}`, "runtime.example resolves to 127.0.0.1, a loopback address"],
        [`https://office.example:${port}`, "office.example resolves to 10.1.2.3, a private address"],
        ["https://169.254.169.254", "link-local (cloud metadata)"],
        ["https://nowhere.example", "nowhere.example could not be resolved"]
      ] as const
      const on = calls(strict.url)
      const before = runtime.requests.length
      for (const [url, reason] of cases) {
        const registered = ok(await on.workers.register({ token: org.member.token, payload: { name: "Strict worker", destination: "local" } }), 201)
        const path = { id: registered.worker.id }
        const refused = await on.workerRuntime.registerInstance({
          token: registered.token,
          payload: { provider: "static", status: "running", url, credential: runtime.credential }
        })
        expect([url, refused.status]).toEqual([url, 400])
        const { details } = invalid(refused)
        expect(details, url).toEqual([{ path: ["url"], message: expect.stringContaining("The outbound URL is not allowed: ") }])
        expect(details[0]?.message, url).toContain(reason)
        // Nothing was stored: the worker has no instance to call.
        const answer = await on.workers.upgradeRuntime({ token: org.member.token, path, payload: {} })
        expect([url, answer.status, answer.body]).toMatchObject([url, 409, { error: "worker_runtime_unavailable" }])
        expect(ok(await on.workers.get({ token: org.member.token, path }), 200).instance).toBeNull()
      }
      expect(runtime.requests.length).toBe(before)
    } finally {
      await strict.close()
      await dns.stop()
    }
  })

  it("checks the URL again at every call: a name that resolved to a public address at registration and to loopback now is 502, nothing sent", async () => {
    const dns = await FakeDns.start()
    dns.setAddresses("rebinding.example", ["203.0.114.7"])
    const strict = await TestServer.start({ clock, dnsServers: dns.address, outboundAllowPrivate: false })
    try {
      const org = await Http.staffed(strict.url)
      const on = calls(strict.url)
      const port = new URL(runtime.url).port
      const registered = ok(await on.workers.register({ token: org.member.token, payload: { name: "Rebinding worker", destination: "local" } }), 201)
      const url = `https://rebinding.example:${port}`
      const instance = { provider: "static", status: "running", url, credential: runtime.credential } as const
      ok(await on.workerRuntime.registerInstance({ token: registered.token, payload: instance }), 201)
      dns.setAddresses("rebinding.example", ["127.0.0.1"])
      const before = runtime.requests.length
      const answer = await on.workers.upgradeRuntime({ token: org.member.token, path: { id: registered.worker.id }, payload: {} })
      expect(answer.status).toBe(502)
      expect(answer.body).toMatchObject({
        error: "worker_runtime_error",
        message: expect.stringContaining("The outbound URL is not allowed: rebinding.example resolves to 127.0.0.1, a loopback address")
      })
      expect(runtime.requests.length).toBe(before)
    } finally {
      await strict.close()
      await dns.stop()
    }
  })

  it("is 409 without an instance, a URL or a credential", async () => {
    const org = await Http.staffed(server.url)
    const bare = await register(org.member.token)
    const upgrade = (id: string) => workers.upgradeRuntime({ token: org.member.token, path: { id }, payload: {} })
    const none = await upgrade(bare.worker.id)
    expect(none.status).toBe(409)
    expect(none.body).toMatchObject({ error: "worker_runtime_unavailable", message: expect.stringContaining("no instance") })

    const noUrl = await register(org.member.token)
    await workerRuntime.registerInstance({ token: noUrl.token, payload: { provider: "local", status: "starting", credential: "x" } })
    const withoutUrl = await upgrade(noUrl.worker.id)
    expect(withoutUrl.status).toBe(409)
    expect(withoutUrl.body).toMatchObject({ message: expect.stringContaining("no URL") })

    const noCredential = await withInstance(org, runtime.url, null)
    const withoutCredential = await upgrade(noCredential.worker.id)
    expect(withoutCredential.status).toBe(409)
    expect(withoutCredential.body).toMatchObject({ message: expect.stringContaining("credential") })
  })
})

describe("another organization's worker", () => {
  it("answers 404 like a missing one and changes nothing", async () => {
    const org = await Http.staffed(server.url)
    const otherOrg = await Http.staffed(server.url, "Other")
    const { worker } = await withInstance(org)
    const before = runtime.requests.length
    const path = { id: worker.id }
    const token = otherOrg.owner.token
    for (const response of [
      await workers.get({ token, path }),
      await workers.update({ token, path, payload: { name: "Taken" } }),
      await workers.rotateToken({ token, path }),
      await workers.upgradeRuntime({ token, path, payload: {} }),
      await workers.delete({ token, path })
    ]) {
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ error: "worker_not_found" })
    }
    expect(runtime.requests.length).toBe(before)
    expect(ok(await workers.list({ token }), 200).items).toEqual([])
    expect(ok(await workers.get({ token: org.owner.token, path }), 200).worker.name).toBe("Laptop worker")
  })
})
