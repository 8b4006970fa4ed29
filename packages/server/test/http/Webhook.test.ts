/**
 * The GitHub webhook through HTTP, delivered by FakeGitHub and signed like GitHub's: signature checks before
 * anything is parsed, which deliveries count (pushes to followed branches of active app-installation instances,
 * uninstalls, removed repositories, renames), redeliveries, bodies the receiver must refuse without a 500, and a
 * transaction run again after a serialization failure (the sync starts once, after the commit).
 */
import {
  type ConnectorAccountDetail,
  type ConnectorAccountPage,
  type ConnectorInstanceDetail,
  ConnectorSyncEventId,
  type ConnectorSyncEventPage,
  type ConnectorTargetDetail,
  OrganizationId
} from "@orgplane/schema"
import { invalid } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Connectors from "../../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../../packages/testkit/src/FakeGitHub.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import * as TestDatabase from "../support/HttpDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { SyncWorkflow } from "../../src/connectors/Sync.js"

const path = "/v1/webhooks/connectors/codehost"
const zero = "0".repeat(40)

const world = ConnectorWorld.forFile()
const { get, post } = world
const ok = Http.expectStatus

/** The head of acme/plugins, the repository every installation here has. */
let head: string
beforeAll(async () => {
  const { repo } = await world.serve({ "skills/review/SKILL.md": "---\nname: review\ndescription: Reviews.\n---\nReview.\n" }, "acme/plugins")
  head = await repo.head()
})

let installations = 7_000_000 + Math.floor(Math.random() * 1_000_000)
/** A fresh installation id, so tests sharing the database never see each other's accounts. */
const newInstallation = () => ++installations

const deliver = (event: string, payload: unknown, options: Omit<FakeGitHub.DeliverOptions, "url"> = {}) =>
  world.github.deliver(event, payload, { url: `${world.url}${path}`, ...options }).then(({ status, body }) => ({
    status,
    body: body === "" ? undefined : JSON.parse(body)
  }))

const sign = (body: string, secret = world.github.webhookSecret) =>
  `sha256=${NodeCrypto.createHmac("sha256", secret).update(body).digest("hex")}`

/** A POST with exactly these headers and body (no signature unless given). */
const raw = (body: string, headers: Record<string, string>, url = world.url) =>
  Http.request(url, "POST", path, { rawBody: body, headers: { "content-type": "application/json", ...headers } })

const push = (installationId: number, options: { readonly ref?: string; readonly after?: string; readonly fullName?: string } = {}) =>
  FakeGitHub.pushPayload({
    fullName: options.fullName ?? "acme/plugins",
    ref: options.ref ?? "refs/heads/main",
    before: zero.replace(/0$/, "1"),
    after: options.after ?? head,
    installationId,
    repositoryId: world.github.repositoryId("acme/plugins")
  })

/** An organization with an app-installation account, one instance of `remoteId` and one target on `branch`. */
const appInstance = async (
  options: { readonly installationId?: number; readonly token?: string; readonly remoteId?: string; readonly branch?: string } = {}
) => {
  const token = options.token ?? (await Http.owner(world.url)).token
  const installationId = options.installationId ?? newInstallation()
  const accounts = ok<typeof ConnectorAccountPage.Encoded>("accounts", await get("/v1/connector-accounts", { token }), 200).items
  const connected = await world.connect(token, {
    account: accounts.find((item) => item.remoteId === String(installationId)) ?? { kind: "app_installation", installationId, accountLogin: "acme" },
    remoteId: options.remoteId ?? "acme/plugins",
    branch: options.branch
  })
  return { token, installationId, ...connected }
}

const syncEvents = async (token: string, instanceId: string) =>
  ok<typeof ConnectorSyncEventPage.Encoded>("sync events", await get(`/v1/connector-instances/${instanceId}/sync-events`, { token }), 200).items

const instanceOf = async (token: string, id: string) =>
  ok<typeof ConnectorInstanceDetail.Encoded>("instance", await get(`/v1/connector-instances/${id}`, { token }), 200).item
const targetOf = async (token: string, id: string) => ok<typeof ConnectorTargetDetail.Encoded>("target", await get(`/v1/connector-targets/${id}`, { token }), 200).item
const accountOf = async (token: string, id: string) =>
  ok<typeof ConnectorAccountDetail.Encoded>("account", await get(`/v1/connector-accounts/${id}`, { token }), 200).item

describe("push", () => {
  it("to a followed branch queues one sync of the pushed commit; a redelivery answers the same without queuing again", async () => {
    const { instance, installationId, target, token } = await appInstance()
    const deliveryId = NodeCrypto.randomUUID()
    const first = await deliver("push", push(installationId), { deliveryId })
    expect(first).toEqual({ status: 200, body: { ok: true, accepted: true, deliveryId, queued: true } })
    const events = await syncEvents(token, instance.id)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      connectorTargetId: target.id,
      eventType: "push",
      sourceRevisionRef: head,
      externalEventRef: deliveryId
    })

    const again = await deliver("push", push(installationId), { deliveryId })
    expect(again).toEqual(first)
    expect((await syncEvents(token, instance.id)).map((event) => event.id)).toEqual([events[0].id])
  })

  it("matches the repository's name in any case", async () => {
    const { instance, installationId, token } = await appInstance()
    const answer = await deliver("push", push(installationId, { fullName: "ACME/Plugins" }))
    expect(answer.body).toMatchObject({ accepted: true })
    expect(await syncEvents(token, instance.id)).toHaveLength(1)
  })

  it("is ignored, with a reason and nothing queued, for an untracked branch, a tag, a deleted branch, another installation or a disabled instance", async () => {
    const { instance, installationId, token } = await appInstance()
    const other = await appInstance({ remoteId: "acme/other" })
    const ignored = async (payload: unknown, reason: string) =>
      expect(await deliver("push", payload)).toEqual({ status: 200, body: { ok: true, accepted: false, reason } })

    await ignored(push(installationId, { ref: "refs/heads/feature" }), "no active instance follows this branch")
    await ignored(push(installationId, { ref: "refs/tags/v1.0.0" }), "not a push to a branch")
    await ignored(push(installationId, { after: zero }), "the branch was deleted")
    // An installation no organization connected, and one connected but not following this repository.
    await ignored(push(newInstallation()), "the installation is not connected to any organization")
    await ignored(push(other.installationId), "no active instance follows this branch")
    ok("disable", await post(`/v1/connector-instances/${instance.id}/disable`, { token }), 200)
    await ignored(push(installationId), "no active instance follows this branch")

    expect(await syncEvents(token, instance.id)).toEqual([])
    expect(await syncEvents(other.token, other.instance.id)).toEqual([])
  })

  it("concerns app installations only: a token account's instance of the repository is not synced by webhooks", async () => {
    const { installationId, token } = await appInstance()
    const { instance: tokenInstance } = await world.connect(token, { account: { kind: "token", token: "ghp_webhook" }, remoteId: "acme/plugins" })

    expect((await deliver("push", push(installationId))).body).toMatchObject({ accepted: true })
    expect(await syncEvents(token, tokenInstance.id)).toEqual([])
    // A repository webhook (no installation) is not the app's.
    const { installation: _, ...withoutInstallation } = push(installationId)
    expect((await deliver("push", withoutInstallation)).body).toEqual({
      ok: true,
      accepted: false,
      reason: "no installation: webhooks apply to GitHub App installations only"
    })
  })

  it("verifies a payload carrying NUL in a string, as GitHub signed it", async () => {
    const { instance, installationId, token } = await appInstance()
    const payload = push(installationId)
    const withNul = { ...payload, head_commit: { ...payload.head_commit, message: "fix\u0000 bytes" } }
    expect((await deliver("push", withNul)).body).toMatchObject({ accepted: true })
    expect(await syncEvents(token, instance.id)).toHaveLength(1)
  })
})

describe("signatures and bodies", () => {
  it("a missing, wrong or stale signature, or a tampered body, is 401 before anything is read", async () => {
    const { instance, installationId, token } = await appInstance()
    const body = JSON.stringify(push(installationId))
    const headers = { "x-github-event": "push", "x-github-delivery": NodeCrypto.randomUUID() }

    const missing = await raw(body, headers)
    expect(missing.status).toBe(401)
    expect(missing.body).toEqual({ ok: false, error: "missing signature" })

    const invalid = { ok: false, error: "invalid signature" }
    const forged = await deliver("push", JSON.parse(body), { signature: `sha256=${"0".repeat(64)}` })
    expect(forged).toEqual({ status: 401, body: invalid })
    expect(await deliver("push", JSON.parse(body), { secret: "not-the-secret" })).toEqual({ status: 401, body: invalid })
    const tampered = body.replace(`"${head}"`, `"${"a".repeat(40)}"`)
    expect(await deliver("push", JSON.parse(body), { rawBody: tampered, signature: sign(body) })).toEqual({ status: 401, body: invalid })
    expect(await deliver("push", JSON.parse(body), { signature: sign(body).replace("sha256=", "sha1=") })).toEqual({ status: 401, body: invalid })

    expect(await syncEvents(token, instance.id)).toEqual([])
  })

  it("unsigned garbage is 401, a signed body that is not a JSON object or lacks the delivery headers is 400", async () => {
    for (const garbage of ["", "not json", "{\"a\":", "\u0000\u0001"]) {
      const answer = await raw(garbage, { "x-github-event": "push", "x-github-delivery": "d-1" })
      expect(answer.status, garbage).toBe(401)
    }
    for (const body of ["not json", "[1,2]", "42", "null"]) {
      const answer = await raw(body, { "x-github-event": "push", "x-github-delivery": "d-2", "x-hub-signature-256": sign(body) })
      expect(answer.status, body).toBe(400)
      expect(answer.body).toEqual({ error: "invalid_request", details: [{ message: "The body must be a JSON object.", path: [] }] })
    }
    const body = "{}"
    const noDelivery = await raw(body, { "x-github-event": "push", "x-hub-signature-256": sign(body) })
    expect(noDelivery.status).toBe(400)
    expect(noDelivery.body).toEqual({
      error: "invalid_request",
      details: [{ message: "The `x-github-delivery` header is required.", path: ["headers", "x-github-delivery"] }]
    })
    const noEvent = await raw(body, { "x-github-delivery": "d-3", "x-hub-signature-256": sign(body) })
    expect(noEvent.status).toBe(400)
    expect(invalid(noEvent).details[0].path).toEqual(["headers", "x-github-event"])
  })

  it("a body over 25 MiB is 413; a deeply nested signed body is read, not refused", async () => {
    const huge = `{"pad":"${"x".repeat(25 * 1024 * 1024)}"}`
    const tooLarge = await raw(huge, { "x-github-event": "push", "x-github-delivery": "d-4", "x-hub-signature-256": sign(huge) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body).toMatchObject({ error: "payload_too_large" })

    const deep = `{"zen":${"[".repeat(200)}${"]".repeat(200)}}`
    const answer = await raw(deep, { "x-github-event": "ping", "x-github-delivery": "d-5", "x-hub-signature-256": sign(deep) })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ ok: true, accepted: false, reason: "event not handled: ping" })
  })

  it("other events and actions are ignored with a reason", async () => {
    const { installationId } = await appInstance()
    const installation = { id: installationId }
    expect((await deliver("ping", { zen: "Keep it logically awesome.", hook_id: 1 })).body).toEqual({
      ok: true,
      accepted: false,
      reason: "event not handled: ping"
    })
    expect((await deliver("installation", { action: "suspend", installation })).body).toEqual({
      ok: true,
      accepted: false,
      reason: "event not handled: installation suspend"
    })
    expect((await deliver("repository", { action: "archived", installation })).body.accepted).toBe(false)
  })

  it("without a webhook secret configured, every delivery is 503: nothing can be verified", async () => {
    const bare = await TestServer.start()
    try {
      const body = JSON.stringify(push(1))
      const answer = await raw(body, { "x-github-event": "push", "x-github-delivery": "d-6", "x-hub-signature-256": sign(body) }, bare.url)
      expect(answer.status).toBe(503)
      expect(answer.body).toEqual({
        error: "service_unavailable",
        message: "No webhook secret is configured (ORGPLANE_CODEHOST_WEBHOOK_SECRET): deliveries cannot be verified."
      })
    } finally {
      await bare.close()
    }
  })
})

describe("installation events", () => {
  it("an uninstall disconnects the installation's accounts in every organization and disables their instances", async () => {
    const first = await appInstance()
    const second = await appInstance({ installationId: first.installationId })
    const bystander = await appInstance()
    const payload = FakeGitHub.installationDeletedPayload({
      installationId: first.installationId,
      appId: world.github.appId,
      account: "acme",
      repositories: [{ fullName: "acme/plugins", id: world.github.repositoryId("acme/plugins") }]
    })
    const deliveryId = NodeCrypto.randomUUID()
    expect((await deliver("installation", payload, { deliveryId })).body).toEqual({ ok: true, accepted: true, deliveryId, queued: true })
    for (const { account, instance, token } of [first, second]) {
      expect((await accountOf(token, account.id)).status).toBe("disconnected")
      expect((await instanceOf(token, instance.id)).status).toBe("disabled")
    }
    expect((await accountOf(bystander.token, bystander.account.id)).status).toBe("active")
    expect((await instanceOf(bystander.token, bystander.instance.id)).status).toBe("active")
    // Nothing of the installation syncs any more.
    expect((await deliver("push", push(first.installationId))).body.accepted).toBe(false)
  })

  it("removed repositories disable the instances that follow them, and only those", async () => {
    const kept = await appInstance()
    const removed = await appInstance({ installationId: kept.installationId, token: kept.token, remoteId: "acme/retired" })
    const payload = FakeGitHub.repositoriesRemovedPayload({
      installationId: kept.installationId,
      appId: world.github.appId,
      account: "acme",
      removed: [{ fullName: "Acme/Retired", id: 99 }]
    })
    const deliveryId = NodeCrypto.randomUUID()
    const accepted = { ok: true, accepted: true, deliveryId, queued: true }
    expect((await deliver("installation_repositories", payload, { deliveryId })).body).toEqual(accepted)
    expect((await instanceOf(kept.token, removed.instance.id)).status).toBe("disabled")
    expect((await instanceOf(kept.token, kept.instance.id)).status).toBe("active")
    // Another delivery finds nothing left to disable.
    expect((await deliver("installation_repositories", payload)).body).toEqual({
      ok: true,
      accepted: false,
      reason: "no active instance follows these repositories"
    })

    // Enabled again by hand: a redelivery of the handled delivery does not undo that; a new delivery would.
    ok("enable", await post(`/v1/connector-instances/${removed.instance.id}/enable`, { token: kept.token }), 200)
    expect((await deliver("installation_repositories", payload, { deliveryId })).body).toEqual(accepted)
    expect((await instanceOf(kept.token, removed.instance.id)).status).toBe("active")
    expect(await world.sql((sql) => sql`SELECT event FROM codehost_deliveries WHERE delivery_id = ${deliveryId}`)).toEqual([
      { event: "installation_repositories" }
    ])
    expect((await deliver("installation_repositories", payload)).body).toMatchObject({ accepted: true })
    expect((await instanceOf(kept.token, removed.instance.id)).status).toBe("disabled")
  })

  it("a rename moves the installation's instances and targets to the new name, and pushes under it sync", async () => {
    const { installationId, instance, target, token } = await appInstance({ remoteId: "acme/renamed-from" })
    const payload = FakeGitHub.repositoryRenamedPayload({
      installationId,
      repositoryId: 4242,
      from: "acme/renamed-from",
      to: "acme/renamed-to"
    })
    expect((await deliver("repository", payload)).body).toMatchObject({ accepted: true })
    expect((await instanceOf(token, instance.id)).remoteId).toBe("acme/renamed-to")
    expect((await targetOf(token, target.id)).remoteId).toBe("acme/renamed-to")
    expect((await deliver("push", push(installationId, { fullName: "acme/renamed-from" }))).body.accepted).toBe(false)
    expect((await deliver("push", push(installationId, { fullName: "acme/renamed-to" }))).body.accepted).toBe(true)
  })
})

describe("a sick database", () => {
  it("answers 503 for a relevant delivery, which GitHub then redelivers; back up, the redelivery is answered", async () => {
    const { close, layer: database, proxy, run } = await TestDatabase.behindProxy({ connectTimeout: "1 second", statementTimeout: "1 second" })
    try {
      const sick = await run(TestServer.scoped({ database, codehostWebhookSecret: world.github.webhookSecret }))
      const url = `${sick.url}${path}`
      const payload = FakeGitHub.installationDeletedPayload({ installationId: newInstallation(), appId: world.github.appId, account: "acme", repositories: [] })
      const deliveryId = NodeCrypto.randomUUID()

      await proxy.down()
      const down = await world.github.deliver("installation", payload, { url, deliveryId })
      expect(down.status).toBe(503)
      expect(JSON.parse(down.body)).toEqual({ error: "service_unavailable", message: expect.any(String) })

      await proxy.up()
      const again = await world.github.deliver("installation", payload, { url, deliveryId })
      expect(again.status).toBe(200)
      // No organization connected this installation: answered, not recorded.
      expect(JSON.parse(again.body)).toEqual({ ok: true, accepted: false, reason: "the installation is not connected to any organization" })
    } finally {
      await close()
    }
  })
})

describe("a serialization failure", () => {
  it("runs the transaction again without starting a second sync: one event, its own execution, completed", async () => {
    // A server of its own: the only workflow executions on its database are this test's.
    const own = await TestServer.startSharingDatabase(world.codeHost)
    try {
      const verbs = Http.verbs(() => own.url)
      const token = (await Http.owner(own.url)).token
      const installationId = newInstallation()
      world.github.addInstallation(installationId, ["acme/plugins"])
      const { account, instance } = await Connectors.connect(own.url, token, {
        account: { kind: "app_installation", installationId, accountLogin: "acme" },
        remoteId: "acme/plugins"
      })

      // The delivery's first COMMIT fails as a serialization failure would (a deferred trigger on the event's row),
      // so the webhook's transaction runs twice; the sequence counts the attempts (sequences ignore rollbacks).
      const deliveryId = NodeCrypto.randomUUID()
      await own.sql((sql) => sql`CREATE SEQUENCE test_webhook_commits`)
      await own.sql((sql) =>
        sql.unsafe(`CREATE FUNCTION test_fail_first_commit() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.external_event_ref = '${deliveryId}' THEN
              IF nextval('test_webhook_commits') = 1 THEN
                RAISE EXCEPTION 'could not serialize access (forced by the test)' USING ERRCODE = '40001';
              END IF;
            END IF;
            RETURN NULL;
          END $$`)
      )
      await own.sql((sql) =>
        sql.unsafe(`CREATE CONSTRAINT TRIGGER test_fail_first_commit AFTER INSERT ON connector_sync_events
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_fail_first_commit()`)
      )

      const answer = await world.github.deliver("push", push(installationId), { url: `${own.url}${path}`, deliveryId })
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toEqual({ ok: true, accepted: true, deliveryId, queued: true })
      expect(await own.sql((sql) => sql`SELECT last_value::int AS attempts FROM test_webhook_commits`)).toEqual([{ attempts: 2 }])

      const events = ok<typeof ConnectorSyncEventPage.Encoded>("events", await verbs.get(`/v1/connector-instances/${instance.id}/sync-events`, { token }), 200).items
      expect(events.map((event) => event.externalEventRef)).toEqual([deliveryId])
      expect(await Connectors.settled(own.url, token, events[0].id)).toMatchObject({ status: "completed", sourceRevisionRef: head })

      // Every workflow execution the engine ever received is that event's: the rolled-back attempt started none.
      const executionId = await Effect.runPromise(SyncWorkflow.executionId({
        organizationId: Schema.decodeUnknownSync(OrganizationId)(account.organizationId),
        syncEventId: Schema.decodeUnknownSync(ConnectorSyncEventId)(events[0].id)
      }))
      const executions = await own.sql((sql) =>
        sql<{ entityId: string }>`SELECT DISTINCT entity_id FROM orgplane_cluster_messages WHERE entity_type = ${`Workflow/${SyncWorkflow._tag}`}`
      )
      expect(executions).toEqual([{ entityId: executionId }])
    } finally {
      await own.close()
    }
  }, 60_000)
})
