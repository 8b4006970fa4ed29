/**
 * The GitHub App's webhook receiver: a delivery is verified against the raw body, then what it means for the
 * installation's connector accounts, instances and targets is done in one transaction with the delivery's id
 * recorded, so a redelivery is answered without doing the work twice. A push records its sync events in that
 * transaction; their workflows start once it has committed (see Sync.ts), so a transaction run again after a
 * serialization failure starts nothing twice.
 *
 * Webhooks concern app installations only: a delivery names its installation, and token accounts have none.
 * Instances of token accounts sync on request (`POST /v1/connector-instances/{id}/sync`).
 */
import {
  type ConnectorAccountId,
  InvalidRequest,
  type OrganizationId,
  ServiceUnavailable,
  WebhookRejected,
  type WebhookResponse
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CodeHostConfig } from "../integrations/codehost/CodeHostConfig.js"
import { verifySignature } from "../integrations/codehost/Webhooks.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { WebhookRepository } from "./WebhookRepository.js"
import { type EventRef, Sync } from "./Sync.js"

/** A delivery as received: the body's text exactly as it came, and the headers GitHub sets. */
export interface Delivery {
  readonly rawBody: string
  readonly signature: string | undefined
  readonly event: string | undefined
  readonly deliveryId: string | undefined
}

/** A delivery that changes nothing, and why: the transaction is rolled back, its id is not recorded. */
class Ignored extends Data.TaggedError("Ignored")<{ readonly reason: string }> {}

const ignore = (reason: string) => Effect.fail(new Ignored({ reason }))

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const member = (value: unknown, key: string): unknown => (isObject(value) ? value[key] : undefined)

/** `owner/name` as GitHub allows them; anything else never reaches a statement. */
const repositoryName = /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/
const fullNameOf = (value: unknown): string | undefined =>
  typeof value === "string" && repositoryName.test(value) ? value : undefined

/** A commit id: SHA-1, or SHA-256 in repositories that use it. */
const commitId = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
const deletedCommit = /^0+$/

/** GitHub's delivery ids are UUIDs; anything printable and short is taken, nothing longer is stored. */
const deliveryIdPattern = /^[\x21-\x7e]{1,200}$/
const eventPattern = /^[a-z_]{1,64}$/

const branchPrefix = "refs/heads/"

/** The installation id of a delivery, as connector accounts store it (`remote_id`). */
const installationOf = (payload: Json): string | undefined => {
  const id = member(payload.installation, "id")
  if (typeof id === "number" && Number.isSafeInteger(id) && id > 0) return String(id)
  return typeof id === "string" && /^[1-9][0-9]{0,18}$/.test(id) ? id : undefined
}

const headerMissing = (name: string) => InvalidRequest.field(["headers", name], `The \`${name}\` header is required.`)

const makeWebhook = Effect.gen(function*() {
  const config = yield* CodeHostConfig
  const repository = yield* WebhookRepository
  const sync = yield* Sync

  /** The installation's accounts, one organization at a time; only the active ones when `active`. */
  const accountsByOrganization = (installationId: string, active: boolean) =>
    Effect.map(repository.accountsOfInstallation(installationId), (accounts) => {
      const byOrganization = new Map<OrganizationId, Array<ConnectorAccountId>>()
      for (const account of accounts) {
        if (active && account.status !== "active") continue
        const ids = byOrganization.get(account.organizationId) ?? []
        ids.push(account.id)
        byOrganization.set(account.organizationId, ids)
      }
      return byOrganization
    })

  const notConnected = "the installation is not connected to any organization"

  /**
   * A push to a followed branch records a sync of the pushed commit for every target that follows it; answers the
   * events, whose workflows start after the commit.
   */
  const push = (payload: Json, installationId: string, deliveryId: string) =>
    Effect.gen(function*() {
      const ref = payload.ref
      if (typeof ref !== "string" || !ref.startsWith(branchPrefix)) return yield* ignore("not a push to a branch")
      const after = payload.after
      if (payload.deleted === true || (typeof after === "string" && deletedCommit.test(after))) return yield* ignore("the branch was deleted")
      const fullName = fullNameOf(member(payload.repository, "full_name"))
      if (typeof after !== "string" || !commitId.test(after) || fullName === undefined) return yield* ignore("missing push metadata")
      const branch = ref.slice(branchPrefix.length)
      const accounts = yield* accountsByOrganization(installationId, true)
      if (accounts.size === 0) return yield* ignore(notConnected)
      const queued: Array<EventRef> = []
      for (const [organizationId, accountIds] of accounts) {
        const targets = yield* repository.targetsOfRepository(organizationId, accountIds, fullName)
        for (const { accountStatus, instanceStatus, row: target } of targets) {
          if (target.externalTargetRef !== branch || instanceStatus !== "active" || accountStatus !== "active") continue
          const { event } = yield* sync.record({
            organizationId,
            connectorInstanceId: target.connectorInstanceId,
            connectorTargetId: target.id,
            eventType: "push",
            revision: after,
            externalEventRef: deliveryId
          })
          queued.push({ organizationId, id: event.id })
        }
      }
      if (queued.length === 0) return yield* ignore("no active instance follows this branch")
      return queued
    })

  /** The app was uninstalled: its accounts are disconnected and their instances disabled; what they imported stays. */
  const installationDeleted = (installationId: string) =>
    Effect.gen(function*() {
      const accounts = yield* accountsByOrganization(installationId, false)
      if (accounts.size === 0) return yield* ignore(notConnected)
      const at = yield* now
      for (const [organizationId, accountIds] of accounts) {
        for (const id of accountIds) yield* repository.setAccountStatus(organizationId, id, "disconnected", at)
        yield* repository.disableInstancesOfAccounts(organizationId, accountIds, at)
      }
    })

  /** Repositories taken from the installation: the instances that follow them are disabled. */
  const repositoriesRemoved = (payload: Json, installationId: string) =>
    Effect.gen(function*() {
      const removed = Array.isArray(payload.repositories_removed) ? payload.repositories_removed : []
      const names = removed.map((entry) => fullNameOf(member(entry, "full_name"))).filter((name) => name !== undefined)
      if (names.length === 0) return yield* ignore("no repository was removed")
      const accounts = yield* accountsByOrganization(installationId, false)
      if (accounts.size === 0) return yield* ignore(notConnected)
      const at = yield* now
      let disabled = 0
      for (const [organizationId, accountIds] of accounts) {
        disabled += (yield* repository.disableInstancesOfRepositories(organizationId, accountIds, names, at)).length
      }
      if (disabled === 0) return yield* ignore("no active instance follows these repositories")
    })

  /** A renamed repository: the installation's instances and targets follow it under its new name. */
  const repositoryRenamed = (payload: Json, installationId: string) =>
    Effect.gen(function*() {
      const to = fullNameOf(member(payload.repository, "full_name"))
      const fromName = member(member(member(payload.changes, "repository"), "name"), "from")
      // GitHub sends the old name without its owner; a rename keeps the owner (a transfer is another event).
      const from = to === undefined || typeof fromName !== "string"
        ? undefined
        : fullNameOf(fromName.includes("/") ? fromName : `${to.split("/")[0]}/${fromName}`)
      if (to === undefined || from === undefined) return yield* ignore("missing rename metadata")
      const accounts = yield* accountsByOrganization(installationId, false)
      if (accounts.size === 0) return yield* ignore(notConnected)
      const at = yield* now
      let renamed = 0
      for (const [organizationId, accountIds] of accounts) {
        const changed = yield* repository.renameRepository(organizationId, accountIds, from, to, at)
        renamed += changed.instances + changed.targets
      }
      if (renamed === 0) return yield* ignore("no instance follows this repository")
    })

  const nothingToStart: ReadonlyArray<EventRef> = []

  /**
   * The work of a relevant delivery, answering the sync events it recorded, or `undefined` for the events and
   * actions this receiver does not handle.
   */
  const workOf = (event: string, payload: Json, installationId: string, deliveryId: string) => {
    const action = payload.action
    if (event === "push") return push(payload, installationId, deliveryId)
    if (event === "installation" && action === "deleted") return Effect.as(installationDeleted(installationId), nothingToStart)
    if (event === "installation_repositories" && action === "removed") return Effect.as(repositoriesRemoved(payload, installationId), nothingToStart)
    if (event === "repository" && action === "renamed") return Effect.as(repositoryRenamed(payload, installationId), nothingToStart)
    return undefined
  }

  const receive = Effect.fn("Webhook.receive")(function*(delivery: Delivery) {
    if (config.webhookSecret === undefined) {
      return yield* new ServiceUnavailable({ message: "No webhook secret is configured (ORGPLANE_CODEHOST_WEBHOOK_SECRET): deliveries cannot be verified." })
    }
    if (delivery.signature === undefined || delivery.signature.trim() === "") return yield* new WebhookRejected({ error: "missing signature" })
    if (!(yield* verifySignature(config.webhookSecret, delivery.rawBody, delivery.signature))) {
      return yield* new WebhookRejected({ error: "invalid signature" })
    }
    // Signed, hence GitHub's: from here on a malformed delivery is a 400, not a forgery.
    const event = delivery.event?.trim()
    if (event === undefined || event === "") return yield* headerMissing("x-github-event")
    const deliveryId = delivery.deliveryId?.trim()
    if (deliveryId === undefined || deliveryId === "") return yield* headerMissing("x-github-delivery")
    if (!deliveryIdPattern.test(deliveryId)) {
      return yield* InvalidRequest.field(["headers", "x-github-delivery"], "Must be at most 200 printable ASCII characters.")
    }
    let payload: unknown
    try {
      payload = JSON.parse(delivery.rawBody)
    } catch {
      payload = undefined
    }
    if (!isObject(payload)) return yield* InvalidRequest.field([], "The body must be a JSON object.")

    const ignored = (reason: string): WebhookResponse => ({ ok: true, accepted: false, reason })
    const accepted: WebhookResponse = { ok: true, accepted: true, deliveryId, queued: true }
    const installationId = installationOf(payload)
    const work = installationId === undefined ? undefined : workOf(event, payload, installationId, deliveryId)
    if (work === undefined) {
      if (!eventPattern.test(event)) return ignored("event not handled")
      const action = typeof payload.action === "string" && eventPattern.test(payload.action) ? ` ${payload.action}` : ""
      return ignored(
        installationId === undefined && ["push", "installation", "installation_repositories", "repository"].includes(event)
          ? "no installation: webhooks apply to GitHub App installations only"
          : `event not handled: ${event}${action}`
      )
    }
    return yield* transaction(
      Effect.gen(function*() {
        // Taken first: a concurrent redelivery waits on this row, then finds it.
        if (!(yield* repository.claimDelivery(deliveryId, event, yield* now))) return nothingToStart
        return yield* work
      })
    ).pipe(
      // Committed: the events are recorded, their workflows may start.
      Effect.flatMap((recorded) => Effect.as(sync.start(recorded), accepted)),
      Effect.catchTag("Ignored", ({ reason }) => Effect.succeed(ignored(reason)))
    )
  })

  return { receive } as const
})

export class Webhook extends Context.Service<Webhook>()("@orgplane/server/connectors/Webhook", { make: makeWebhook }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(WebhookRepository.layer))
}
