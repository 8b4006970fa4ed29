/**
 * Writing the audit log. Every handler of an operation that declares an action (`audits(...)` in the schema) runs
 * inside `around` (HttpErrors.group wraps them, as it does for idempotency keys): a draft of the request's event
 * is made from what the request knows (the action, the caller and its credential, the client's address and agent,
 * the request id, the ids its path names), and the draft becomes a party to the request's outermost transactions
 * (Sql.ts `TransactionParty`): the first one to commit writes the event before its COMMIT, with the ids of what
 * the transaction made, so a change never commits without its event and a rolled-back change leaves none. An
 * operation that changed nothing in the database (a diagnostic run, a call to another system) has its event
 * written after it succeeds. A refusal for want of role or access (403) is written as `outcome: denied`, on its
 * own. Services that know more than the request (whom a sign-in or a directory acted for) say so with `describe`.
 *
 * HttpErrors.group passes every handler of an operation whose `auditDeclarations` entry names an action (not
 * `notAudited`, whose `action` is false) through `around(action, handler)`, outside `Authority.around` (so a write
 * refused at commit is recorded as denied) and inside `Idempotency.around` and the success's response encoding (so
 * the recorder sees the handler's value, whose `id`s become targets). The running handler's draft is a
 * `Context.Reference` provided around the handler; the layer needs `ServerConfig` (for the client's address,
 * `ORGPLANE_TRUST_PROXY`); outside a request a draft has no address, agent or request id.
 */
import {
  type Actor,
  AUDIT_REDACTED,
  type AuditAction,
  AuditActions,
  type AuditActorType,
  type AuditChanges,
  type AuditChannel,
  AuditEvent,
  AuditEventId,
  type AuditOutcome,
  channelHeader,
  channelOf,
  CurrentActor,
  CurrentMember,
  CurrentScimClient,
  CurrentWorker,
  Forbidden,
  OrganizationId,
  type Prefix
} from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { clientAddress } from "./ClientAddress.js"
import { ServerConfig, type ServerSettings } from "./Config.js"
import { IdGenerator, makeId } from "./Ids.js"
import { currentRequestId } from "./RequestLog.js"
import { orUnavailable, type TransactionParty, withTransactionParty } from "./Sql.js"
import { DateColumn, execute } from "./Statements.js"
import { now } from "./Time.js"

/** An event as it is written: the resource's fields, flat where the table is. */
export const NewEvent = Schema.Struct({
  id: AuditEventId,
  organizationId: OrganizationId,
  occurredAt: DateColumn,
  action: AuditEvent.fields.action,
  category: AuditEvent.fields.category,
  outcome: AuditEvent.fields.outcome,
  actorType: AuditEvent.fields.actor.fields.type,
  actorId: AuditEvent.fields.actor.fields.id,
  actorMembershipId: AuditEvent.fields.actor.fields.membershipId,
  actorLabel: AuditEvent.fields.actor.fields.label,
  credentialId: AuditEvent.fields.via.fields.credentialId,
  ssoConnectionId: AuditEvent.fields.via.fields.ssoConnectionId,
  ip: AuditEvent.fields.via.fields.ip,
  userAgent: AuditEvent.fields.via.fields.userAgent,
  channel: AuditEvent.fields.via.fields.channel,
  planHash: AuditEvent.fields.via.fields.planHash,
  targets: AuditEvent.fields.targets,
  changes: AuditEvent.fields.changes,
  reason: AuditEvent.fields.reason,
  requestId: AuditEvent.fields.requestId
})
export type NewEvent = typeof NewEvent.Type

/** The kind of resource an id names, by its TypeID prefix (as `targets[].type` says it). */
const kinds: Partial<Record<Prefix, string>> = {
  org: "organization",
  usr: "user",
  ses: "session",
  om: "member",
  tem: "team",
  apk: "api_key",
  inv: "invitation",
  wcl: "workspace_claim",
  cac: "connector_account",
  ctg: "connector_target",
  cin: "connector_instance",
  cmp: "connector_mapping",
  plg: "plugin",
  mkt: "marketplace",
  cob: "config_object",
  cov: "config_object_version",
  dpo: "desktop_policy",
  emc: "mcp_connection",
  mem: "memory",
  wrk: "worker",
  wki: "worker_instance",
  wkt: "worker_token",
  tpl: "template",
  tpv: "template_version",
  llp: "llm_provider",
  ssc: "sso_connection",
  scc: "scim_connection",
  sct: "scim_token",
  scg: "scim_group",
  coa: "access_grant",
  mag: "access_grant",
  pag: "access_grant",
  cia: "access_grant",
  tpa: "access_grant",
  emg: "access_grant",
  lpg: "access_grant",
  pco: "plugin_config_object",
  mkp: "marketplace_plugin",
  ast: "audit_stream",
  cse: "connector_sync_event"
}

const typeId = /^([a-z]{2,3})_[0-9a-hjkmnp-tv-z]{26}$/

/** The target an id names: its kind from its prefix, or, for a value that is not a TypeID, the parameter's name. */
const targetOf = (id: string, name?: string): { readonly type: string; readonly id: string } | undefined => {
  const prefix = typeId.exec(id)?.[1] as Prefix | undefined
  const kind = prefix === undefined ? undefined : kinds[prefix]
  if (kind !== undefined) return { type: kind, id }
  if (name === undefined) return undefined
  return { type: name.replace(/Id$/, "").replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), id }
}

/** The ids a transaction's value carries: its own `id`, and the `id` of each of its members (`{ team }`). */
const madeIds = (value: unknown): ReadonlyArray<string> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return []
  const found: Array<string> = []
  const own = (value as { readonly id?: unknown }).id
  if (typeof own === "string") found.push(own)
  for (const member of Object.values(value)) {
    if (typeof member !== "object" || member === null || Array.isArray(member)) continue
    const id = (member as { readonly id?: unknown }).id
    if (typeof id === "string") found.push(id)
  }
  return found
}

const MAX_TARGETS = 10

/**
 * Subjects of actions that the request alone names, where its path does not: the organization the action changes
 * as a whole (its log's settings, its SSO policy), or the caller (the person changing their own password, the
 * session signing out, the worker registering its runtime). Every event of the action names them, a refusal's too,
 * so that `targetId` finds it. Other actions name their subject by their path's ids, by what their transaction made,
 * or through `describe`.
 */
const subjects: Partial<Record<AuditAction, ReadonlyArray<"organization" | "caller" | "credential">>> = {
  "user.update": ["caller"],
  "user.password.change": ["caller"],
  "user.email.change": ["caller"],
  "session.revoke": ["credential", "caller"],
  "worker.instance.register": ["caller"],
  "sso.policy.update": ["organization"],
  "instance.operator.claim": ["organization"],
  "audit.export": ["organization"],
  "audit.settings.update": ["organization"],
  "member.directory.update": ["organization"],
  "organization.document.apply": ["organization"],
  "audit.retention.apply": ["organization"]
}

/** The targets `subjects` gives an action in an organization, for an actor. */
const subjectsOf = (action: AuditAction, organizationId: OrganizationId | undefined, actor: ActorFacts | undefined) =>
  (subjects[action] ?? []).flatMap((subject) => {
    if (subject === "organization") return organizationId === undefined ? [] : [{ type: "organization", id: organizationId }]
    if (actor === undefined) return []
    if (subject === "caller") return [{ type: actor.type, id: actor.id }]
    return actor.credentialId === null ? [] : Option.toArray(Option.fromNullishOr(targetOf(actor.credentialId)))
  })
const MAX_USER_AGENT = 512

interface ActorFacts {
  readonly type: AuditActorType
  readonly id: string
  readonly membershipId: NewEvent["actorMembershipId"]
  readonly label: string | null
  readonly credentialId: string | null
  readonly ssoConnectionId: NewEvent["ssoConnectionId"]
}

/** A security attempt that failed (a wrong password): the person it was made as, and their organizations. */
interface Failure {
  readonly reason: string
  readonly person: { readonly id: string; readonly name: string; readonly email: string }
  readonly organizationIds: ReadonlyArray<OrganizationId>
}

/** What the request's event will say, filled in as the request goes. */
interface Draft {
  readonly action: AuditAction
  organizationId: OrganizationId | undefined
  actor: ActorFacts | undefined
  readonly targets: Array<{ readonly type: string; readonly id: string }>
  readonly ip: string | null
  readonly userAgent: string | null
  readonly channel: AuditChannel
  readonly requestId: string | null
  /** The plan of an organization document a change was applied through (`describe`'s `planHash`, `recordStep`). */
  planHash: string | null
  /** An update's before and after (`describeChange`). */
  changes: AuditChanges | null
  /** What a succeeded event says beyond its action (an export's query). */
  reason: string | null
  /** A failed attempt's event, for each organization it concerns (`describe`'s `failure`). */
  failure: Failure | undefined
  /**
   * Other organizations the succeeded event is recorded in too, each with the actor's membership there (null: none),
   * when one change concerns several (an account deleted: every organization it left).
   */
  alsoIn: Array<{ readonly organizationId: OrganizationId; readonly membershipId: NewEvent["actorMembershipId"] }>
  /** Written by a transaction that committed (or after the operation): nothing more to write. */
  written: boolean
}

/** The draft of the running handler's event (`around`); undefined outside one. */
const CurrentDraft = Context.Reference<Draft | undefined>("@orgplane/server/platform/AuditRecorder/CurrentDraft", {
  defaultValue: () => undefined
})

/** A new draft of an `action` event, with what the request tells (if there is one): address, agent and id. */
const newDraft = (
  settings: ServerSettings,
  action: AuditAction,
  organizationId: OrganizationId | undefined,
  actor: ActorFacts | undefined,
  http: HttpServerRequest.HttpServerRequest | undefined
) =>
  Effect.gen(function*() {
    const agent = http?.headers["user-agent"]
    const draft: Draft = {
      action,
      organizationId,
      actor,
      targets: [],
      ip: http === undefined
        ? null
        : yield* clientAddress.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, http),
          Effect.provideService(ServerConfig, settings),
          Effect.orElseSucceed(() => null)
        ),
      userAgent: agent === undefined ? null : agent.slice(0, MAX_USER_AGENT),
      // The request guard refused a channel it does not know, before routing (platform/RequestGuard.ts).
      channel: channelOf(http?.headers[channelHeader]) ?? "api",
      requestId: yield* currentRequestId,
      planHash: null,
      changes: null,
      reason: null,
      failure: undefined,
      alsoIn: [],
      written: false
    }
    return draft
  })

const addTarget = (draft: Draft, target: { readonly type: string; readonly id: string } | undefined) => {
  if (target === undefined || draft.targets.length >= MAX_TARGETS) return
  if (!draft.targets.some((known) => known.id === target.id)) draft.targets.push(target)
}

/** Someone the request does not identify, as the event names them. */
const anonymous = (label: string | null): ActorFacts =>
  ({ type: "anonymous", id: "anonymous", membershipId: null, label, credentialId: null, ssoConnectionId: null })

/** A person with a session or an API key, as the event names them. */
const fromActor = (actor: Actor, membershipId: ActorFacts["membershipId"]): ActorFacts => {
  const label = `${actor.user.name} <${actor.user.email}>`
  return actor.credential._tag === "ApiKey"
    ? { type: "api_key", id: actor.credential.apiKeyId, membershipId, label, credentialId: actor.credential.apiKeyId, ssoConnectionId: null }
    : { type: "user", id: actor.user.id, membershipId, label, credentialId: actor.credential.sessionId, ssoConnectionId: actor.credential.ssoConnectionId }
}

/** The caller the request's authentication found, and the organization it acts in, if any. */
const caller: Effect.Effect<{ readonly organizationId: OrganizationId | undefined; readonly actor: ActorFacts | undefined }> = Effect.gen(
  function*() {
    const member = yield* Effect.serviceOption(CurrentMember)
    if (Option.isSome(member)) {
      return { organizationId: member.value.organization.id, actor: fromActor(member.value, member.value.membership.id) }
    }
    const actor = yield* Effect.serviceOption(CurrentActor)
    if (Option.isSome(actor)) {
      return {
        organizationId: actor.value.organization?.id,
        actor: fromActor(actor.value, actor.value.membership?.id ?? null)
      }
    }
    const scim = yield* Effect.serviceOption(CurrentScimClient)
    if (Option.isSome(scim)) {
      const { connectionId, organizationId, tokenId } = scim.value
      return { organizationId, actor: { type: "scim", id: connectionId, membershipId: null, label: null, credentialId: tokenId, ssoConnectionId: null } }
    }
    const worker = yield* Effect.serviceOption(CurrentWorker)
    if (Option.isSome(worker)) {
      const { organizationId, tokenId, workerId } = worker.value
      return { organizationId, actor: { type: "worker", id: workerId, membershipId: null, label: null, credentialId: tokenId, ssoConnectionId: null } }
    }
    return { organizationId: undefined, actor: undefined }
  }
)

/**
 * A succeeded event's record in each of the draft's other organizations (`alsoIn`): the same event, its own id, the
 * actor's membership there. A draft's main organization may be none (a person acting in no organization).
 */
const copiesOf = (draft: Draft, event: NewEvent | undefined) =>
  Effect.forEach(draft.alsoIn.filter((other) => other.organizationId !== event?.organizationId), (other) =>
    Effect.gen(function*() {
      const main = event ?? (yield* eventOf({ ...draft, organizationId: other.organizationId }, "succeeded", null))
      if (main === undefined) return undefined
      return { ...main, id: yield* makeId("aev"), organizationId: other.organizationId, actorMembershipId: other.membershipId }
    })).pipe(Effect.map((copies) => copies.filter((copy): copy is NewEvent => copy !== undefined)))

const eventOf = (draft: Draft, outcome: AuditOutcome, reason: string | null) =>
  Effect.gen(function*() {
    const { organizationId, actor } = draft
    if (organizationId === undefined || actor === undefined) return undefined
    return {
      id: yield* makeId("aev"),
      organizationId,
      occurredAt: yield* now,
      action: draft.action,
      category: AuditActions[draft.action].category,
      outcome,
      actorType: actor.type,
      actorId: actor.id,
      actorMembershipId: actor.membershipId,
      actorLabel: actor.label,
      credentialId: actor.credentialId,
      ssoConnectionId: actor.ssoConnectionId,
      ip: draft.ip,
      userAgent: draft.userAgent,
      channel: draft.channel,
      planHash: draft.planHash,
      targets: draft.targets,
      changes: draft.changes,
      reason: reason ?? draft.reason,
      requestId: draft.requestId
    } satisfies NewEvent
  })

/** An organization the event is also recorded in, with no membership of the actor's named there (`describe`'s `alsoIn`). */
export const elsewhere = (organizationId: OrganizationId) => ({ organizationId, membershipId: null })

/**
 * What a service knows that the request did not: the organization a caller without a member context acts in, and
 * who it is (a sign-in, an accepted invitation, a new organization's owner), and targets beyond the path's and the
 * transaction's. Given a person, the actor becomes that person with `credentialId`. No-op outside `around`.
 */
export const describe = (facts: {
  readonly organizationId?: OrganizationId | null
  readonly person?: { readonly id: string; readonly name: string; readonly email: string }
  /** Nobody the request identifies acted (an agent bootstrapping a workspace): the actor is `anonymous`. */
  readonly anonymous?: true
  readonly credentialId?: string
  readonly ssoConnectionId?: ActorFacts["ssoConnectionId"]
  /** The membership the actor acts as in that organization. */
  readonly membershipId?: ActorFacts["membershipId"]
  /** Ids (TypeIDs: their prefix gives their kind), or targets of another kind (an email domain). */
  readonly targets?: ReadonlyArray<string | { readonly type: string; readonly id: string }>
  readonly changes?: AuditChanges
  readonly reason?: string
  /** The plan of an organization document the operation applies (`via.planHash`). */
  readonly planHash?: string
  /** The operation is failing as an attempt the log records (`outcome: failed`), once per organization. */
  readonly failure?: Failure
  /** What names the actor instead of `Name <email>` (a deleted person's pseudonym, on the event of their deletion). */
  readonly actorLabel?: string
  /** Other organizations the succeeded event is recorded in as well, with the actor's membership in each (or null). */
  readonly alsoIn?: ReadonlyArray<{ readonly organizationId: OrganizationId; readonly membershipId: NewEvent["actorMembershipId"] }>
}): Effect.Effect<void> =>
  CurrentDraft.useSync((draft) => {
      if (draft === undefined) return
      if (facts.organizationId !== undefined) draft.organizationId = facts.organizationId ?? undefined
      if (facts.person !== undefined) {
        draft.actor = {
          type: "user",
          id: facts.person.id,
          // Kept when the same person was already named with their membership.
          membershipId: draft.actor?.id === facts.person.id ? draft.actor.membershipId : null,
          label: `${facts.person.name} <${facts.person.email}>`,
          credentialId: facts.credentialId ?? null,
          ssoConnectionId: facts.ssoConnectionId ?? null
        }
      }
      if (facts.anonymous === true && draft.actor === undefined) draft.actor = anonymous(null)
      if (facts.membershipId !== undefined && draft.actor !== undefined) draft.actor = { ...draft.actor, membershipId: facts.membershipId }
      for (const target of facts.targets ?? []) addTarget(draft, typeof target === "string" ? targetOf(target) : target)
      if (facts.changes !== undefined) draft.changes = facts.changes
      if (facts.reason !== undefined) draft.reason = facts.reason
      if (facts.planHash !== undefined) draft.planHash = facts.planHash
      if (facts.failure !== undefined) draft.failure = facts.failure
      if (facts.actorLabel !== undefined && draft.actor !== undefined) draft.actor = { ...draft.actor, label: facts.actorLabel }
      for (const other of facts.alsoIn ?? []) {
        if (other.organizationId !== draft.organizationId && !draft.alsoIn.some((known) => known.organizationId === other.organizationId)) {
          draft.alsoIn.push(other)
        }
      }
    })

/** A field whose value is a secret, by its name: `apiKey`, `clientSecret`, `password`, `accessToken`, `privateKey`. */
const secretField = /(secret|password|passphrase|token|api_?key|private_?key)$/i
/** A value longer than this, as JSON, is shown by its size (a template's content does not belong in the log). */
const MAX_VALUE = 2048

const redacted = (name: string, value: unknown): unknown => {
  if (value === null || value === undefined) return value ?? null
  if (secretField.test(name) && typeof value !== "boolean") return AUDIT_REDACTED
  if (Array.isArray(value)) return value.map((item) => redacted("", item))
  if (typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redacted(key, inner)]))
  }
  return value
}

const shown = (name: string, value: unknown): unknown => {
  const safe = redacted(name, value)
  const text = JSON.stringify(safe) ?? "null"
  return text.length > MAX_VALUE ? `[omitted: ${text.length} bytes]` : safe
}

/**
 * The changes between two forms of a resource as the API shows them (encoded by its schema): the top-level fields
 * that differ, `updatedAt` aside, each shown before and after with secrets redacted (by name, at any depth) and
 * long values replaced by their size. `secrets` names secret fields the request changed that the resource never
 * shows (a provider's API key): they are listed as changed, redacted on both sides.
 */
export const changesOf = (
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
  secrets: ReadonlyArray<string> = []
): AuditChanges => {
  const changedFields: Array<string> = []
  const was: Record<string, unknown> = {}
  const is: Record<string, unknown> = {}
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (name === "updatedAt" || JSON.stringify(before[name]) === JSON.stringify(after[name])) continue
    changedFields.push(name)
    was[name] = shown(name, before[name])
    is[name] = shown(name, after[name])
  }
  for (const name of secrets) {
    if (changedFields.includes(name)) continue
    changedFields.push(name)
    was[name] = AUDIT_REDACTED
    is[name] = AUDIT_REDACTED
  }
  return { before: was, after: is, changedFields }
}

/**
 * Describes an update of a resource: `before` and `after` as its schema encodes them (the API's JSON), compared by
 * `changesOf`. Call it inside the change's transaction (the event is written at its commit). No-op outside `around`.
 */
export const describeChange = <A, I extends Readonly<Record<string, unknown>>>(
  schema: Schema.Codec<A, I>,
  before: A,
  after: A,
  options?: { readonly secrets?: ReadonlyArray<string> }
): Effect.Effect<void> =>
  Effect.flatMap(Effect.service(CurrentDraft), (draft) => {
    if (draft === undefined) return Effect.void
    const encode = Schema.encodeSync(schema)
    return describe({ changes: changesOf(encode(before), encode(after), options?.secrets) })
  })

/** The refusal an event records as `denied`: a missing role or access, not a missing plan or a bad request. */
const deniedReason = (cause: Cause.Cause<unknown>): string | undefined =>
  Option.match(Cause.findErrorOption(cause), {
    onNone: () => undefined,
    onSome: (error) => (error instanceof Forbidden ? error.reason : undefined)
  })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = yield* IdGenerator
  const settings = yield* ServerConfig
  const insert = execute({
    Request: NewEvent,
    execute: (event) =>
      sql`INSERT INTO audit_events (organization_id, id, occurred_at, action, category, outcome, actor_type, actor_id,
              actor_membership_id, actor_label, credential_id, sso_connection_id, ip, user_agent, channel, plan_hash, targets, target_ids, changes, reason, request_id)
            VALUES (${event.organizationId}, ${event.id}, ${event.occurredAt}, ${event.action}, ${event.category}, ${event.outcome},
              ${event.actorType}, ${event.actorId}, ${event.actorMembershipId}, ${event.actorLabel}, ${event.credentialId},
              ${event.ssoConnectionId}, ${event.ip}, ${event.userAgent}, ${event.channel}, ${event.planHash}, ${JSON.stringify(event.targets)}::jsonb,
              ARRAY(SELECT t ->> 'id' FROM jsonb_array_elements(${JSON.stringify(event.targets)}::jsonb) t),
              ${event.changes === null ? null : JSON.stringify(event.changes)}::jsonb, ${event.reason}, ${event.requestId})`
  })

  /** The draft's event, written on the connection of the transaction being committed. */
  const party = (draft: Draft): TransactionParty | undefined =>
    draft.written ? undefined : {
      committedBefore: Option.none(),
      beforeCommit: (value) =>
        Effect.gen(function*() {
          for (const id of madeIds(value)) addTarget(draft, targetOf(id))
          const event = yield* eventOf(draft, "succeeded", null)
          if (event !== undefined) yield* insert(event)
          for (const copy of yield* copiesOf(draft, event)) yield* insert(copy)
        }).pipe(Effect.provideService(IdGenerator, ids)),
      committed: Effect.succeed(Option.none()),
      settled: (_value, committed) => Effect.sync(() => (draft.written = committed === true))
    }

  /** Writes an event on its own (after the operation, or for a refusal); a failure to write is logged, not the caller's. */
  const writeAlone = (draft: Draft, outcome: AuditOutcome, reason: string | null) =>
    Effect.gen(function*() {
      const event = yield* eventOf(draft, outcome, reason)
      if (event !== undefined) yield* orUnavailable(insert(event))
      if (outcome === "succeeded") for (const copy of yield* copiesOf(draft, event)) yield* orUnavailable(insert(copy))
      draft.written = true
    }).pipe(
      Effect.provideService(IdGenerator, ids),
      Effect.catchCause((cause) => Effect.logError(`Could not write the audit event ${draft.action} (${outcome})`, cause))
    )

  /** Runs a handler under the draft of its request's event (see the module comment). */
  const run = <Request extends object, A, E, R>(
    action: AuditAction,
    handler: (request: Request) => Effect.Effect<A, E, R>,
    request: Request
  ): Effect.Effect<A, E, R> =>
    Effect.gen(function*() {
      const { actor, organizationId } = yield* caller
      const http = yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest)
      const draft = yield* newDraft(settings, action, organizationId, actor, Option.getOrUndefined(http))
      // HttpApi handlers are given the path's parameters as `params`.
      const path = "params" in request ? request.params : undefined
      if (typeof path === "object" && path !== null) {
        for (const [name, value] of Object.entries(path)) if (typeof value === "string") addTarget(draft, targetOf(value, name))
      }
      for (const target of subjectsOf(action, organizationId, actor)) addTarget(draft, target)
      const exit = yield* handler(request).pipe(
        withTransactionParty(Effect.sync(() => party(draft))),
        Effect.provideService(CurrentDraft, draft),
        Effect.exit
      )
      if (Exit.isSuccess(exit)) {
        if (!draft.written) {
          for (const id of madeIds(exit.value)) addTarget(draft, targetOf(id))
          yield* writeAlone(draft, "succeeded", null)
        }
      } else if (draft.failure !== undefined) {
        const { organizationIds, person, reason } = draft.failure
        for (const organizationId of organizationIds) {
          yield* writeAlone({
            ...draft,
            organizationId,
            actor: { type: "user", id: person.id, membershipId: null, label: `${person.name} <${person.email}>`, credentialId: null, ssoConnectionId: null },
            targets: [{ type: "user", id: person.id }],
            alsoIn: [],
            written: false
          }, "failed", reason)
        }
      } else {
        const reason = deniedReason(exit.cause)
        if (reason !== undefined) yield* writeAlone(draft, "denied", reason)
      }
      return yield* exit
    })

  /**
   * An event of background work acting for an organization (actor `system:<job>`), written on the caller's
   * connection: inside its transaction when it has one.
   */
  const recordSystem = (event: {
    readonly organizationId: OrganizationId
    readonly job: string
    readonly action: AuditAction
    readonly targets?: ReadonlyArray<string>
    readonly reason?: string
  }) =>
    Effect.gen(function*() {
      yield* insert({
        id: yield* makeId("aev"),
        organizationId: event.organizationId,
        occurredAt: yield* now,
        action: event.action,
        category: AuditActions[event.action].category,
        outcome: "succeeded",
        actorType: "system",
        actorId: `system:${event.job}`,
        actorMembershipId: null,
        actorLabel: null,
        credentialId: null,
        ssoConnectionId: null,
        ip: null,
        userAgent: null,
        channel: "api",
        planHash: null,
        targets: [...subjectsOf(event.action, event.organizationId, undefined), ...(event.targets ?? []).flatMap((id) => targetOf(id) ?? [])],
        changes: null,
        reason: event.reason ?? null,
        requestId: null
      })
    }).pipe(Effect.provideService(IdGenerator, ids))

  /**
   * A failed attempt recorded on its own, outside any declared operation (an SSO sign-in completed at a callback
   * or an ACS): by someone not identified, with the request's address, agent and id when there is a request.
   */
  const recordFailedAttempt = (attempt: {
    readonly organizationId: OrganizationId
    readonly action: AuditAction
    readonly reason: string
    readonly label: string | null
    readonly ssoConnectionId: ActorFacts["ssoConnectionId"]
    readonly targets: ReadonlyArray<string>
  }) =>
    Effect.gen(function*() {
      const draft = yield* newDraft(
        settings,
        attempt.action,
        attempt.organizationId,
        { ...anonymous(attempt.label), ssoConnectionId: attempt.ssoConnectionId },
        Option.getOrUndefined(yield* Effect.serviceOption(HttpServerRequest.HttpServerRequest))
      )
      for (const id of attempt.targets) addTarget(draft, targetOf(id))
      yield* writeAlone(draft, "failed", attempt.reason)
    })

  /**
   * One change of an operation made of several (an organization document's apply), recorded as an event of its own
   * `action` inside the operation's open transaction: the same actor, credential, address, agent, request id and
   * plan as the request's event, the change's own targets (`targets`, and the ids its value carries) and its before
   * and after as the service describes them. The event is written as the change succeeds, on the transaction's
   * connection, so it commits with everything or not at all. Outside `around` the change runs unrecorded.
   */
  const recordStep = <A, E, R>(action: AuditAction, targets: ReadonlyArray<string>, change: Effect.Effect<A, E, R>) =>
    Effect.flatMap(Effect.service(CurrentDraft), (parent): Effect.Effect<A, E | SqlError, R> => {
      if (parent === undefined) return change
      const draft: Draft = { ...parent, action, targets: [], changes: null, reason: null, failure: undefined, alsoIn: [], written: false }
      for (const id of targets) addTarget(draft, targetOf(id))
      return change.pipe(
        Effect.provideService(CurrentDraft, draft),
        Effect.tap((value) =>
          Effect.gen(function*() {
            for (const id of madeIds(value)) addTarget(draft, targetOf(id))
            const event = yield* eventOf(draft, "succeeded", null)
            if (event !== undefined) yield* insert(event)
          }).pipe(Effect.provideService(IdGenerator, ids))
        )
      )
    })

  return { run, recordSystem, recordFailedAttempt, recordStep } as const
})

/** The audit log's writer, shared by every group. */
export class AuditRecorder extends Context.Service<AuditRecorder>()("@orgplane/server/platform/AuditRecorder", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/** A handler of an operation that records `action`, under the draft of its request's event (HttpErrors.group). */
export const around = <Request extends object, A, E, R>(
  action: AuditAction,
  handler: (request: Request) => Effect.Effect<A, E, R>
) =>
(request: Request): Effect.Effect<A, E, R | AuditRecorder> => AuditRecorder.use((recorder) => recorder.run(action, handler, request))
