/**
 * Workers over HTTP: registration with a token shown once, reads with `isMine` and the latest instance, changes by
 * the creator, owners and admins only, the runtime's token (heartbeats, instances, revocation), the organization
 * boundary, and the upgrade forwarded to a fake runtime on 127.0.0.1 (up, hanging, down, redirecting, odd answers).
 */
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as FakeWorkerRuntime from "../../../../packages/testkit/src/FakeWorkerRuntime.js"
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

const { del, get, patch, post } = Http.verbs(() => server.url)

type Org = Awaited<ReturnType<typeof Http.staffed>>

const register = async (token: string, body: Record<string, unknown> = {}) =>
  Http.expectStatus<{ worker: any; token: string }>(
    "registering a worker",
    await post("/v1/workers", { token, body: { name: "Laptop worker", destination: "local", ...body } }),
    201
  )

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
    const mine = await get(`/v1/workers/${worker.id}`, { token: org.member.token })
    expect(mine.status).toBe(200)
    expect(mine.body).toEqual({ worker, instance: null })
    const owners = await get(`/v1/workers/${worker.id}`, { token: org.owner.token })
    expect(owners.body.worker).toEqual({ ...worker, isMine: false })

    const other = await register(org.admin.token, { name: "Admin worker" })
    const all = await get("/v1/workers", { token: org.member.token })
    expect(all.body.items.map((w: any) => [w.id, w.isMine])).toEqual([[worker.id, true], [other.worker.id, false]])
    const onlyMine = await get("/v1/workers?mine=true", { token: org.member.token })
    expect(onlyMine.body.items.map((w: any) => w.id)).toEqual([worker.id])

    // Pages follow each other.
    const first = await get("/v1/workers?limit=1", { token: org.owner.token })
    expect(first.body.items.map((w: any) => w.id)).toEqual([worker.id])
    const second = await get(`/v1/workers?limit=1&cursor=${first.body.nextCursor}`, { token: org.owner.token })
    expect(second.body).toEqual({ items: [{ ...other.worker, isMine: false }], nextCursor: null })

    const updated = await patch(`/v1/workers/${worker.id}`, {
      token: org.member.token,
      body: { name: "Renamed", description: null, sandboxBackend: "none" }
    })
    expect(updated.status).toBe(200)
    expect(updated.body.worker).toMatchObject({ name: "Renamed", description: null, sandboxBackend: "none", workspacePath: "/srv/work" })

    // Another member may read it but not change it; an admin may.
    const stranger = await Http.join(server.url, org.owner.token, "member", "Stranger")
    const refused = await patch(`/v1/workers/${worker.id}`, { token: stranger.token, body: { name: "Mine now" } })
    expect(refused.status).toBe(403)
    expect(refused.body.reason).toBe("insufficient_access")
    expect((await del(`/v1/workers/${worker.id}`, { token: stranger.token })).status).toBe(403)
    expect((await post(`/v1/workers/${worker.id}/tokens`, { token: stranger.token })).status).toBe(403)
    expect((await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: stranger.token, body: {} })).status).toBe(403)
    expect((await patch(`/v1/workers/${worker.id}`, { token: org.admin.token, body: { workspacePath: "/tmp" } })).status).toBe(200)

    expect((await del(`/v1/workers/${worker.id}`, { token: org.member.token })).status).toBe(204)
    const gone = await get(`/v1/workers/${worker.id}`, { token: org.member.token })
    expect(gone.status).toBe(404)
    expect(gone.body).toEqual({ error: "worker_not_found", message: "Worker not found." })
    expect((await get("/v1/workers", { token: org.member.token })).body.items.map((w: any) => w.id)).toEqual([other.worker.id])
    // Deleting revoked its token.
    expect((await post("/v1/worker-runtime/heartbeat", { token: registered.token, body: {} })).status).toBe(401)
    expect((await del(`/v1/workers/${worker.id}`, { token: org.member.token })).status).toBe(404)
  })

  it("check their input: every bad field, at least one change, a plain-string id of any other shape is 404", async () => {
    const org = await Http.staffed(server.url)
    const bad = await post("/v1/workers", {
      token: org.member.token,
      body: { name: " ", destination: "moon", sandboxBackend: "Docker!", extra: 1 }
    })
    expect(bad.status).toBe(400)
    expect(bad.body.details.map((d: any) => d.path[0]).sort()).toEqual(["destination", "extra", "name", "sandboxBackend"])
    const { worker } = await register(org.member.token)
    const empty = await patch(`/v1/workers/${worker.id}`, { token: org.member.token, body: {} })
    expect(empty.status).toBe(400)
    expect(empty.body.details[0].message).toBe("give name, description, workspacePath or sandboxBackend")
    for (const id of ["not-a-worker", "tem_01h455vb4pex5vsknk084sn02q", "wrk_01h455vb4pex5vsknk084sn02q"]) {
      const missing = await get(`/v1/workers/${id}`, { token: org.member.token })
      expect(missing.status).toBe(404)
      expect(missing.body.error).toBe("worker_not_found")
    }
    expect((await get("/v1/workers?mine=yes", { token: org.member.token })).status).toBe(400)
  })

  it("are driven by their runtime's token: heartbeats, instances (the newest is the one shown), rotation revokes the old token", async () => {
    const org = await Http.staffed(server.url)
    const registered = await register(org.member.token)
    const id = registered.worker.id

    const beat = await post("/v1/worker-runtime/heartbeat", { token: registered.token, body: { imageVersion: "1.4.2", active: true } })
    expect(beat.status).toBe(200)
    const afterBeat = (await get(`/v1/workers/${id}`, { token: org.member.token })).body.worker
    expect(afterBeat).toMatchObject({ status: "online", imageVersion: "1.4.2" })
    expect(afterBeat.lastHeartbeatAt).not.toBeNull()
    expect(afterBeat.lastActiveAt).toBe(afterBeat.lastHeartbeatAt)

    // An online worker that stops beating reads as offline.
    clock.advance("4 minutes")
    expect((await get(`/v1/workers/${id}`, { token: org.member.token })).body.worker.status).toBe("offline")
    expect((await post("/v1/worker-runtime/heartbeat", { token: registered.token, body: { status: "error" } })).status).toBe(200)
    const errored = (await get(`/v1/workers/${id}`, { token: org.member.token })).body.worker
    expect(errored).toMatchObject({ status: "error", imageVersion: "1.4.2", lastActiveAt: afterBeat.lastActiveAt })

    const first = await post("/v1/worker-runtime/instance", {
      token: registered.token,
      body: { provider: "fly", region: "ams", url: "https://first.example.com/", status: "starting", credential: "first-secret" }
    })
    expect(first.status).toBe(201)
    expect(first.body.instance).toMatchObject({ provider: "fly", region: "ams", url: "https://first.example.com/", status: "starting" })
    expect(first.text).not.toContain("first-secret")
    // Its audit event names the worker whose runtime registered and the instance (OpenApiExamples.test.ts cannot: the example's
    // runtime host does not resolve here).
    const events = await get(`/v1/audit/events?requestId=${first.headers.get("x-request-id")}`, { token: org.owner.token })
    expect(events.body.items.map((event: any) => [event.action, event.targets.map((target: any) => target.id)])).toEqual([
      ["worker.instance.register", [id, expect.stringMatching(/^wki_[0-9a-z]{26}$/)]]
    ])
    clock.advance("1 second")
    const second = await post("/v1/worker-runtime/instance", {
      token: registered.token,
      body: { provider: "fly", url: "https://second.example.com", status: "running", credential: "second-secret" }
    })
    expect(second.status).toBe(201)
    const read = await get(`/v1/workers/${id}`, { token: org.owner.token })
    expect(read.body.instance).toEqual(second.body.instance)
    expect(read.body.instance).toMatchObject({ provider: "fly", region: null, url: "https://second.example.com", status: "running" })
    expect(read.text).not.toContain("secret")

    // Bad instance reports.
    for (const url of ["ftp://x.example.com", "https://user:pw@x.example.com", "https://x.example.com/#frag", "https://x.example.com/?a=1", "not a url"]) {
      const refused = await post("/v1/worker-runtime/instance", { token: registered.token, body: { provider: "fly", status: "running", url } })
      expect(refused.status).toBe(400)
      expect(refused.body.details[0].path).toEqual(["url"])
    }

    // Rotation: a new token works, the old one is 401.
    const rotated = await post(`/v1/workers/${id}/tokens`, { token: org.admin.token })
    expect(rotated.status).toBe(201)
    expect(rotated.body.token).not.toBe(registered.token)
    expect((await post("/v1/worker-runtime/heartbeat", { token: registered.token, body: {} })).status).toBe(401)
    expect((await post("/v1/worker-runtime/heartbeat", { token: rotated.body.token, body: {} })).status).toBe(200)
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
    const upgraded = await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, body: { version: "2.0.0", force: true } })
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
    expect((await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.owner.token, body: {} })).body.status).toBe(200)

    // The runtime's own failures come back as they are, in the envelope.
    runtime.setMode({ _tag: "status", status: 503, body: { error: "busy" } })
    expect((await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })).body).toEqual({
      status: 503,
      body: { error: "busy" }
    })
    runtime.setMode({ _tag: "text", text: "upgrade queued" })
    expect((await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })).body).toEqual({
      status: 200,
      body: { message: "upgrade queued" }
    })
    runtime.setMode({ _tag: "empty", status: 202 })
    expect((await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })).body).toEqual({ status: 202, body: null })
    runtime.setMode({ _tag: "ok" })
  })

  it("takes a JSON object only", async () => {
    const org = await Http.staffed(server.url)
    const { worker } = await withInstance(org)
    for (const rawBody of ["[1,2]", "\"upgrade\"", "42", "null"]) {
      const refused = await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, rawBody })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toBe("invalid_request")
    }
  })

  it("is 502 when the runtime hangs past the timeout, is down, or redirects (never followed)", async () => {
    const org = await Http.staffed(server.url)
    const { worker } = await withInstance(org)
    const upgrade = () => post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })

    runtime.setMode({ _tag: "hang" })
    const hung = await upgrade()
    expect(hung.status).toBe(502)
    expect(hung.body.error).toBe("worker_runtime_error")
    expect(hung.body.message).toContain("did not answer in time")

    const target = await FakeWorkerRuntime.start()
    runtime.setMode({ _tag: "redirect", location: `${target.url}/runtime/upgrade` })
    const redirected = await upgrade()
    expect(redirected.status).toBe(502)
    expect(redirected.body).toMatchObject({ error: "worker_runtime_error" })
    expect(redirected.body.message).toContain("redirect")
    expect(target.requests).toHaveLength(0)
    await target.close()
    runtime.setMode({ _tag: "ok" })

    const down = await withInstance(org, await FakeWorkerRuntime.downUrl())
    const refused = await post(`/v1/workers/${down.worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })
    expect(refused.status).toBe(502)
    expect(refused.body.error).toBe("worker_runtime_error")
    expect(refused.body.message).toContain("could not be reached")
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
      const on = Http.verbs(() => strict.url)
      const before = runtime.requests.length
      for (const [url, reason] of cases) {
        const registered = Http.expectStatus<{ worker: any; token: string }>(
          "registering a worker",
          await on.post("/v1/workers", { token: org.member.token, body: { name: "Strict worker", destination: "local" } }),
          201
        )
        const instance = { provider: "static", status: "running", url, credential: runtime.credential }
        const refused = await on.post("/v1/worker-runtime/instance", { token: registered.token, body: instance })
        expect([url, refused.status, refused.body.error]).toEqual([url, 400, "invalid_request"])
        expect(refused.body.details, url).toEqual([{ path: ["url"], message: expect.stringContaining("The outbound URL is not allowed: ") }])
        expect(refused.body.details[0].message, url).toContain(reason)
        // Nothing was stored: the worker has no instance to call.
        const answer = await on.post(`/v1/workers/${registered.worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })
        expect([url, answer.status, answer.body.error]).toEqual([url, 409, "worker_runtime_unavailable"])
        expect(Http.expectStatus<any>("reading", await on.get(`/v1/workers/${registered.worker.id}`, { token: org.member.token }), 200).instance).toBeNull()
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
      const on = Http.verbs(() => strict.url)
      const port = new URL(runtime.url).port
      const registered = Http.expectStatus<{ worker: any; token: string }>(
        "registering a worker",
        await on.post("/v1/workers", { token: org.member.token, body: { name: "Rebinding worker", destination: "local" } }),
        201
      )
      const url = `https://rebinding.example:${port}`
      const instance = { provider: "static", status: "running", url, credential: runtime.credential }
      Http.expectStatus("registering an instance", await on.post("/v1/worker-runtime/instance", { token: registered.token, body: instance }), 201)
      dns.setAddresses("rebinding.example", ["127.0.0.1"])
      const before = runtime.requests.length
      const answer = await on.post(`/v1/workers/${registered.worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })
      expect(answer.status).toBe(502)
      expect(answer.body.error).toBe("worker_runtime_error")
      expect(answer.body.message).toContain("The outbound URL is not allowed: rebinding.example resolves to 127.0.0.1, a loopback address")
      expect(runtime.requests.length).toBe(before)
    } finally {
      await strict.close()
      await dns.stop()
    }
  })

  it("is 409 without an instance, a URL or a credential", async () => {
    const org = await Http.staffed(server.url)
    const bare = await register(org.member.token)
    const none = await post(`/v1/workers/${bare.worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })
    expect(none.status).toBe(409)
    expect(none.body.error).toBe("worker_runtime_unavailable")
    expect(none.body.message).toContain("no instance")

    const noUrl = await register(org.member.token)
    await post("/v1/worker-runtime/instance", { token: noUrl.token, body: { provider: "local", status: "starting", credential: "x" } })
    const withoutUrl = await post(`/v1/workers/${noUrl.worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })
    expect(withoutUrl.status).toBe(409)
    expect(withoutUrl.body.message).toContain("no URL")

    const noCredential = await withInstance(org, runtime.url, null)
    const withoutCredential = await post(`/v1/workers/${noCredential.worker.id}/runtime/upgrade`, { token: org.member.token, body: {} })
    expect(withoutCredential.status).toBe(409)
    expect(withoutCredential.body.message).toContain("credential")
  })
})

describe("another organization's worker", () => {
  it("answers 404 like a missing one and changes nothing", async () => {
    const org = await Http.staffed(server.url)
    const otherOrg = await Http.staffed(server.url, "Other")
    const { worker } = await withInstance(org)
    const before = runtime.requests.length
    for (const response of [
      await get(`/v1/workers/${worker.id}`, { token: otherOrg.owner.token }),
      await patch(`/v1/workers/${worker.id}`, { token: otherOrg.owner.token, body: { name: "Taken" } }),
      await post(`/v1/workers/${worker.id}/tokens`, { token: otherOrg.owner.token }),
      await post(`/v1/workers/${worker.id}/runtime/upgrade`, { token: otherOrg.owner.token, body: {} }),
      await del(`/v1/workers/${worker.id}`, { token: otherOrg.owner.token })
    ]) {
      expect(response.status).toBe(404)
      expect(response.body.error).toBe("worker_not_found")
    }
    expect(runtime.requests.length).toBe(before)
    expect((await get("/v1/workers", { token: otherOrg.owner.token })).body.items).toEqual([])
    expect((await get(`/v1/workers/${worker.id}`, { token: org.owner.token })).body.worker.name).toBe("Laptop worker")
  })
})
