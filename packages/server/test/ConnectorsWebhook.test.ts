/**
 * The GitHub App's webhook receiver (connectors/Webhook.ts) as a service, on a fresh migrated database (the
 * embedded one, or Postgres with DATABASE_URL), with deliveries built by testkit's FakeGitHub payloads and signed as
 * GitHub signs them: what http/Webhook.test.ts checks through HTTP that lives in the service. The
 * signature checked before anything is read, malformed signed deliveries refused, which deliveries count (pushes
 * to followed branches of active app-installation instances, uninstalls, removed repositories, renames), the sync
 * events a push records and starts once after the commit, and redeliveries answered without doing the work twice.
 * The `Sync` is test/support/ConnectorSync.ts's stand-in, which notes the starts. (The body size limit and the
 * sick-database answers are the HTTP edge's; the serialization-failure retry, on Postgres through HTTP, is the HTTP
 * tests'.)
 */
import { expect, layer } from "@effect/vitest"
import type { ConnectorInstanceId, MemberContext, OrganizationId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as FakeGitHub from "../../../packages/testkit/src/FakeGitHub.js"
import { Connectors } from "../src/connectors/Connectors.js"
import { ConnectorsRepository } from "../src/connectors/ConnectorsRepository.js"
import { SyncEventsRepository } from "../src/connectors/SyncEventsRepository.js"
import { Webhook } from "../src/connectors/Webhook.js"
import { WebhookRepository } from "../src/connectors/WebhookRepository.js"
import { CodeHostConfig } from "../src/integrations/codehost/CodeHostConfig.js"
import * as ConnectorSync from "./support/ConnectorSync.js"
import { failure, Fake, serve, TestLayer } from "./support/Connectors.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const zero = "0".repeat(40)

let installations = 7_000_000 + Math.floor(Math.random() * 1_000_000)
/** A fresh installation id, so tests sharing the database never see each other's accounts. */
const newInstallation = () => ++installations

const sign = (body: string, secret: string) => `sha256=${NodeCrypto.createHmac("sha256", secret).update(body).digest("hex")}`

let plugins: { readonly head: string; readonly repositoryId: number } | undefined

/** The repository `acme/plugins` on the file's FakeGitHub (served by the first test that asks), its head and id. */
const served = Effect.fn("ConnectorsWebhook.served")(function*() {
  if (plugins !== undefined) return plugins
  const { gitHub } = yield* Fake
  const repo = yield* serve("acme/plugins", { "skills/review/SKILL.md": "---\nname: review\ndescription: Reviews.\n---\nReview.\n" })
  plugins = { head: yield* Effect.promise(() => repo.head()), repositoryId: gitHub.repositoryId("acme/plugins") }
  return plugins
})

interface Delivery {
  readonly deliveryId?: string
  /** The body as sent; by default the payload's JSON. */
  readonly rawBody?: string
  /** By default the body signed with `secret`. */
  readonly signature?: string | undefined
  /** By default the fake's webhook secret. */
  readonly secret?: string
}

/** A delivery of `event` as GitHub sends it (signed with the app's secret), received by the service. */
const deliver = (event: string | undefined, payload: unknown, options: Delivery = {}) =>
  Effect.gen(function*() {
    const { gitHub } = yield* Fake
    const webhook = yield* Webhook
    const rawBody = options.rawBody ?? JSON.stringify(payload)
    return yield* webhook.receive({
      rawBody,
      signature: "signature" in options ? options.signature : sign(rawBody, options.secret ?? gitHub.webhookSecret),
      event,
      deliveryId: options.deliveryId ?? NodeCrypto.randomUUID()
    })
  })

const push = (installationId: number, options: { readonly ref?: string; readonly after?: string; readonly fullName?: string } = {}) =>
  Effect.map(served(), ({ head, repositoryId }) =>
    FakeGitHub.pushPayload({
      fullName: options.fullName ?? "acme/plugins",
      ref: options.ref ?? "refs/heads/main",
      before: zero.replace(/0$/, "1"),
      after: options.after ?? head,
      installationId,
      repositoryId
    }))

/** An organization's owner (a new organization unless given) with an app-installation account, an instance of `remoteId` and its target on `branch`. */
const appInstance = Effect.fn("ConnectorsWebhook.appInstance")(function*(
  options: { readonly installationId?: number; readonly owner?: MemberContext; readonly remoteId?: string; readonly branch?: string } = {}
) {
  const connectors = yield* Connectors
  const owner = options.owner ?? Members.member(Members.organization("team"), "owner")
  if (options.owner === undefined) yield* Members.seed(owner)
  const installationId = options.installationId ?? newInstallation()
  const accounts = (yield* connectors.listAccounts(owner, {})).items
  const account = accounts.find((item) => item.remoteId === String(installationId)) ??
    (yield* connectors.createAccount(owner, { kind: "app_installation", installationId, accountLogin: "acme" })).item
  const { item: instance } = yield* connectors.createInstance(owner, {
    connectorAccountId: account.id,
    name: `Repo ${Math.random().toString(36).slice(2, 10)}`,
    remoteId: options.remoteId ?? "acme/plugins"
  })
  const { item: target } = yield* connectors.createTarget(owner, instance.id, { externalTargetRef: options.branch ?? "main" })
  return { owner, installationId, account, instance, target }
})

const syncEvents = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
  Effect.map(SyncEventsRepository.use((events) => events.list(organizationId, instanceId, {})), (page) => page.items)

layer(TestLayer, { timeout: 600_000, excludeTestServices: true })(`the connector webhook on ${TestDatabase.kind}`, (it) => {
  it.effect("a push to a followed branch records one sync of the pushed commit, started after the commit; a redelivery answers the same, queuing nothing", () =>
    Effect.gen(function*() {
      const { installationId, instance, owner, target } = yield* appInstance()
      const { head } = yield* served()
      const deliveryId = NodeCrypto.randomUUID()
      const first = yield* deliver("push", yield* push(installationId), { deliveryId })
      expect(first).toEqual({ ok: true, accepted: true, deliveryId, queued: true })
      const events = yield* syncEvents(owner.organization.id, instance.id)
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ connectorTargetId: target.id, eventType: "push", sourceRevisionRef: head, externalEventRef: deliveryId, status: "queued" })
      expect(ConnectorSync.started.filter((ref) => ref.id === events[0]!.id)).toEqual([{ organizationId: owner.organization.id, id: events[0]!.id }])

      const again = yield* deliver("push", yield* push(installationId), { deliveryId })
      expect(again).toEqual(first)
      expect((yield* syncEvents(owner.organization.id, instance.id)).map((event) => event.id)).toEqual([events[0]!.id])
      expect(ConnectorSync.started.filter((ref) => ref.id === events[0]!.id)).toHaveLength(1)

      // The repository's name matches in any case; a payload carrying NUL is verified as GitHub signed it.
      expect(yield* deliver("push", yield* push(installationId, { fullName: "ACME/Plugins" }))).toMatchObject({ accepted: true })
      const payload = yield* push(installationId)
      expect(yield* deliver("push", { ...payload, head_commit: { ...payload.head_commit, message: "fix\u0000 bytes" } })).toMatchObject({ accepted: true })
      // A pending event of the same commit is found, not recorded again.
      expect(yield* syncEvents(owner.organization.id, instance.id)).toHaveLength(1)
    }))

  it.effect("a push is ignored, with a reason and nothing queued, for an untracked branch, a tag, a deleted branch, another installation or a disabled instance", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const { installationId, instance, owner } = yield* appInstance()
      const other = yield* appInstance({ remoteId: "acme/other" })
      const ignored = (payload: unknown, reason: string) =>
        Effect.map(deliver("push", payload), (answer) => expect(answer).toEqual({ ok: true, accepted: false, reason }))

      yield* ignored(yield* push(installationId, { ref: "refs/heads/feature" }), "no active instance follows this branch")
      yield* ignored(yield* push(installationId, { ref: "refs/tags/v1.0.0" }), "not a push to a branch")
      yield* ignored(yield* push(installationId, { after: zero }), "the branch was deleted")
      // An installation no organization connected, and one connected but not following this repository.
      yield* ignored(yield* push(newInstallation()), "the installation is not connected to any organization")
      yield* ignored(yield* push(other.installationId), "no active instance follows this branch")
      yield* connectors.disable(owner, instance.id)
      yield* ignored(yield* push(installationId), "no active instance follows this branch")

      expect(yield* syncEvents(owner.organization.id, instance.id)).toEqual([])
      expect(yield* syncEvents(other.owner.organization.id, other.instance.id)).toEqual([])
    }))

  it.effect("webhooks concern app installations only: a token account's instance is not synced by them", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const { installationId, owner } = yield* appInstance()
      const { item: account } = yield* connectors.createAccount(owner, { kind: "token", token: "ghp_webhook" })
      const { item: tokenInstance } = yield* connectors.createInstance(owner, { connectorAccountId: account.id, name: "Token copy", remoteId: "acme/plugins" })
      yield* connectors.createTarget(owner, tokenInstance.id, { externalTargetRef: "main" })

      expect(yield* deliver("push", yield* push(installationId))).toMatchObject({ accepted: true })
      expect(yield* syncEvents(owner.organization.id, tokenInstance.id)).toEqual([])
      // A repository webhook (no installation) is not the app's.
      const { installation: _, ...withoutInstallation } = yield* push(installationId)
      expect(yield* deliver("push", withoutInstallation)).toEqual({
        ok: true,
        accepted: false,
        reason: "no installation: webhooks apply to GitHub App installations only"
      })
    }))

  it.effect("a missing, wrong or stale signature, or a tampered body, is refused before anything is read", () =>
    Effect.gen(function*() {
      const { installationId, instance, owner } = yield* appInstance()
      const payload = yield* push(installationId)
      const body = JSON.stringify(payload)
      const { gitHub } = yield* Fake

      expect(yield* failure(deliver("push", payload, { signature: undefined }))).toMatchObject({ _tag: "WebhookRejected", ok: false, error: "missing signature" })
      expect(yield* failure(deliver("push", payload, { signature: " " }))).toMatchObject({ error: "missing signature" })
      const invalid = { _tag: "WebhookRejected", ok: false, error: "invalid signature" }
      expect(yield* failure(deliver("push", payload, { signature: `sha256=${"0".repeat(64)}` }))).toMatchObject(invalid)
      expect(yield* failure(deliver("push", payload, { secret: "not-the-secret" }))).toMatchObject(invalid)
      const tampered = body.replace(`"${payload.after}"`, `"${"a".repeat(40)}"`)
      expect(yield* failure(deliver("push", payload, { rawBody: tampered, signature: sign(body, gitHub.webhookSecret) }))).toMatchObject(invalid)
      expect(yield* failure(deliver("push", payload, { signature: sign(body, gitHub.webhookSecret).replace("sha256=", "sha1=") }))).toMatchObject(invalid)
      // Unsigned garbage is refused the same way.
      for (const garbage of ["", "not json", "{\"a\":", "\u0000\u0001"]) {
        expect(yield* failure(deliver("push", undefined, { rawBody: garbage, signature: undefined }))).toMatchObject({ _tag: "WebhookRejected" })
      }

      expect(yield* syncEvents(owner.organization.id, instance.id)).toEqual([])
    }))

  it.effect("a signed body that is not a JSON object, or lacks the delivery headers, is refused as invalid; other events are ignored with a reason", () =>
    Effect.gen(function*() {
      for (const rawBody of ["not json", "[1,2]", "42", "null"]) {
        expect(yield* failure(deliver("push", undefined, { rawBody }))).toMatchObject({
          _tag: "InvalidRequest",
          error: "invalid_request",
          details: [{ message: "The body must be a JSON object.", path: [] }]
        })
      }
      expect(yield* failure(deliver("push", {}, { deliveryId: " " }))).toMatchObject({
        _tag: "InvalidRequest",
        error: "invalid_request",
        details: [{ message: "The `x-github-delivery` header is required.", path: ["headers", "x-github-delivery"] }]
      })
      expect(yield* failure(deliver(undefined, {}))).toMatchObject({ details: [{ path: ["headers", "x-github-event"] }] })
      expect(yield* failure(deliver("push", {}, { deliveryId: "x".repeat(201) }))).toMatchObject({
        details: [{ path: ["headers", "x-github-delivery"], message: "Must be at most 200 printable ASCII characters." }]
      })
      // A deeply nested signed body is read, not refused.
      expect(yield* deliver("ping", undefined, { rawBody: `{"zen":${"[".repeat(200)}${"]".repeat(200)}}` })).toEqual({
        ok: true,
        accepted: false,
        reason: "event not handled: ping"
      })

      const { installationId } = yield* appInstance()
      const installation = { id: installationId }
      expect(yield* deliver("ping", { zen: "Keep it logically awesome.", hook_id: 1 })).toEqual({ ok: true, accepted: false, reason: "event not handled: ping" })
      expect(yield* deliver("installation", { action: "suspend", installation })).toEqual({
        ok: true,
        accepted: false,
        reason: "event not handled: installation suspend"
      })
      expect(yield* deliver("repository", { action: "archived", installation })).toMatchObject({ accepted: false })
    }))

  it.effect("without a webhook secret configured, every delivery is refused: nothing can be verified", () =>
    Effect.gen(function*() {
      const bare = yield* Webhook.make.pipe(
        Effect.provideService(CodeHostConfig, { apiUrl: "https://api.github.com", app: undefined, webhookSecret: undefined }),
        Effect.provide(WebhookRepository.layer)
      )
      const body = JSON.stringify(yield* push(1))
      expect(yield* failure(bare.receive({ rawBody: body, signature: sign(body, "whatever"), event: "push", deliveryId: "d-6" }))).toEqual({
        _tag: "ServiceUnavailable",
        error: "service_unavailable",
        message: "No webhook secret is configured (ORGPLANE_CODEHOST_WEBHOOK_SECRET): deliveries cannot be verified."
      })
      // An empty secret verifies nothing either.
      const empty = yield* Webhook.make.pipe(
        Effect.provideService(CodeHostConfig, { apiUrl: "https://api.github.com", app: undefined, webhookSecret: Redacted.make("") }),
        Effect.provide(WebhookRepository.layer)
      )
      expect(yield* failure(empty.receive({ rawBody: body, signature: sign(body, ""), event: "push", deliveryId: "d-7" }))).toMatchObject({ error: "invalid signature" })
    }))

  it.effect("an uninstall disconnects the installation's accounts in every organization and disables their instances", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const { gitHub } = yield* Fake
      const first = yield* appInstance()
      const second = yield* appInstance({ installationId: first.installationId })
      const bystander = yield* appInstance()
      yield* served()
      const payload = FakeGitHub.installationDeletedPayload({
        installationId: first.installationId,
        appId: gitHub.appId,
        account: "acme",
        repositories: [{ fullName: "acme/plugins", id: gitHub.repositoryId("acme/plugins") }]
      })
      const deliveryId = NodeCrypto.randomUUID()
      expect(yield* deliver("installation", payload, { deliveryId })).toEqual({ ok: true, accepted: true, deliveryId, queued: true })
      for (const { account, instance, owner } of [first, second]) {
        expect((yield* connectors.getAccount(owner, account.id)).item.status).toBe("disconnected")
        expect((yield* connectors.getInstance(owner, instance.id)).item.status).toBe("disabled")
      }
      expect((yield* connectors.getAccount(bystander.owner, bystander.account.id)).item.status).toBe("active")
      expect((yield* connectors.getInstance(bystander.owner, bystander.instance.id)).item.status).toBe("active")
      // Nothing of the installation syncs any more, and a second uninstall finds nothing to do.
      expect(yield* deliver("push", yield* push(first.installationId))).toMatchObject({ accepted: false })
      expect(yield* deliver("installation", payload)).toMatchObject({ accepted: true })
    }))

  it.effect("removed repositories disable the instances that follow them, and only those; a redelivery does not undo a later enable", () =>
    Effect.gen(function*() {
      const connectors = yield* Connectors
      const sql = yield* SqlClient.SqlClient
      const { gitHub } = yield* Fake
      const kept = yield* appInstance()
      const removed = yield* appInstance({ installationId: kept.installationId, owner: kept.owner, remoteId: "acme/retired" })
      const payload = FakeGitHub.repositoriesRemovedPayload({
        installationId: kept.installationId,
        appId: gitHub.appId,
        account: "acme",
        removed: [{ fullName: "Acme/Retired", id: 99 }]
      })
      const deliveryId = NodeCrypto.randomUUID()
      const accepted = { ok: true, accepted: true, deliveryId, queued: true }
      expect(yield* deliver("installation_repositories", payload, { deliveryId })).toEqual(accepted)
      expect((yield* connectors.getInstance(kept.owner, removed.instance.id)).item.status).toBe("disabled")
      expect((yield* connectors.getInstance(kept.owner, kept.instance.id)).item.status).toBe("active")
      // Another delivery finds nothing left to disable.
      expect(yield* deliver("installation_repositories", payload)).toEqual({ ok: true, accepted: false, reason: "no active instance follows these repositories" })

      // Enabled again by hand: a redelivery of the handled delivery does not undo that; a new delivery does.
      yield* connectors.enable(kept.owner, removed.instance.id)
      expect(yield* deliver("installation_repositories", payload, { deliveryId })).toEqual(accepted)
      expect((yield* connectors.getInstance(kept.owner, removed.instance.id)).item.status).toBe("active")
      expect(yield* sql`SELECT event FROM codehost_deliveries WHERE delivery_id = ${deliveryId}`).toEqual([{ event: "installation_repositories" }])
      expect(yield* deliver("installation_repositories", payload)).toMatchObject({ accepted: true })
      expect((yield* connectors.getInstance(kept.owner, removed.instance.id)).item.status).toBe("disabled")
    }))

  it.effect("a rename moves the installation's instances and targets to the new name, and pushes under it sync", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectorsRepository
      const { installationId, instance, owner, target } = yield* appInstance({ remoteId: "acme/renamed-from" })
      const payload = FakeGitHub.repositoryRenamedPayload({ installationId, repositoryId: 4242, from: "acme/renamed-from", to: "acme/renamed-to" })
      expect(yield* deliver("repository", payload)).toMatchObject({ accepted: true })
      const organizationId = owner.organization.id
      expect(Option.map(yield* repository.findInstance(organizationId, instance.id), (found) => found.remoteId)).toEqual(Option.some("acme/renamed-to"))
      expect(Option.map(yield* repository.findTarget(organizationId, target.id), (found) => found.remoteId)).toEqual(Option.some("acme/renamed-to"))
      expect(yield* deliver("push", yield* push(installationId, { fullName: "acme/renamed-from" }))).toMatchObject({ accepted: false })
      expect(yield* deliver("push", yield* push(installationId, { fullName: "acme/renamed-to" }))).toMatchObject({ accepted: true })
      expect(yield* syncEvents(organizationId, instance.id)).toHaveLength(1)
    }))
})
