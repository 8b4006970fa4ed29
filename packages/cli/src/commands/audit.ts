/**
 * `orgplane audit list | tail | get | export | types | settings`: the active organization's audit log, for its
 * owners and admins. The filters are the API's (`GET /v1/audit/events`), checked by its schema.
 */
import {
  AuditApi,
  AuditEvent,
  AuditEventId,
  AuditEventPage,
  AuditEventResponse,
  AuditEventsQuery,
  AuditEventTypes,
  AuditOutcome,
  AuditSettingsResponse,
  AuditStreamsApi,
  UpdateAuditSettingsRequest
} from "@orgplane/schema"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { streams } from "./auditStreams.js"

const query = AuditEventsQuery.fields

/** `--name <value>`, checked by the query member's own schema. */
const filter = <A>(name: string, schema: Schema.Codec<A, string>, description: string) => Inputs.optional(Inputs.text(name, { schema, description }))

const actorOf = (event: AuditEvent) => event.actor.label ?? `${event.actor.type} ${event.actor.id}`

/** The filters the list and the export share, as flags. */
const filters = {
  action: filter("action", query.action.schema, "An action (member.role.update) or a family (member.*)."),
  actor: filter("actor", query.actorId.schema, "Events of one actor: a user, API key, SCIM connection or worker id."),
  target: filter("target", query.targetId.schema, "Events that acted on one resource, by its id."),
  credential: filter("credential", query.credentialId.schema, "Events of one credential: a session, API key, SCIM or worker token id."),
  requestId: filter("request-id", query.requestId.schema, "The events of one request (its x-request-id)."),
  outcome: Inputs.optional(Inputs.choice("outcome", AuditOutcome.literals, { description: "succeeded, denied (refused for want of role or access) or failed (a wrong password)." })),
  since: Inputs.optional(Inputs.text("since", { schema: query.from.schema, description: "Events at or after this instant (ISO 8601)." })),
  until: Inputs.optional(Inputs.text("until", { schema: query.to.schema, description: "Events before this instant (ISO 8601)." }))
}

const filterParams = (input: Inputs.Values<typeof filters>) => ({
  ...Inputs.ifSome("action", input.action),
  ...Inputs.ifSome("actorId", input.actor),
  ...Inputs.ifSome("targetId", input.target),
  ...Inputs.ifSome("credentialId", input.credential),
  ...Inputs.ifSome("requestId", input.requestId),
  ...Inputs.ifSome("outcome", input.outcome),
  ...Inputs.ifSome("from", input.since),
  ...Inputs.ifSome("to", input.until)
})

export const list = Commands.list("list", {
  summary: "List the organization's audit events, newest first (owners and admins).",
  noun: "audit events",
  inputs: { ...filters, oldestFirst: Inputs.boolean("oldest-first", { description: "Oldest first, to follow the log." }) },
  call: (client, input, page) =>
    client.audit.listEvents({ query: { ...filterParams(input), ...(input.oldestFirst ? { order: "asc" as const } : {}), ...page } }),
  output: AuditEventPage,
  columns: [
    ["at", (event) => Output.date(event.occurredAt)],
    ["action", (event) => event.action],
    ["outcome", (event) => event.outcome],
    ["actor", actorOf],
    ["targets", (event) => event.targets.map((target) => target.id).join(", ")],
    ["id", (event) => event.id]
  ]
})

/** `  changed name: "Two" → "Deux"`, a line per changed field. */
const changeLines = (changes: AuditEvent["changes"]) =>
  changes === null ? [] : changes.changedFields.map((field) =>
    `  changed ${field}: ${JSON.stringify(changes.before?.[field] ?? null)} → ${JSON.stringify(changes.after?.[field] ?? null)}`
  )

export const get = Commands.endpoint("get", {
  summary: "Show one audit event.",
  inputs: { eventId: Inputs.argument("eventId", { schema: AuditEventId, description: "The event (aev_…)." }) },
  call: (client, { eventId }) => client.audit.getEvent({ params: { eventId } }),
  output: AuditEventResponse,
  human: ({ event }) =>
    [
      `${event.id}: ${event.action} ${event.outcome}${event.reason === null ? "" : ` (${event.reason})`} at ${event.occurredAt.toISOString()}`,
      `  actor: ${actorOf(event)} (${event.actor.type} ${event.actor.id}${event.actor.membershipId === null ? "" : `, member ${event.actor.membershipId}`})`,
      `  via: ${
        [
          event.via.channel,
          event.via.credentialId === null ? undefined : `credential ${event.via.credentialId}`,
          event.via.ssoConnectionId === null ? undefined : `SSO ${event.via.ssoConnectionId}`,
          event.via.ip === null ? undefined : `from ${event.via.ip}`,
          event.via.userAgent === null ? undefined : `with ${event.via.userAgent}`,
          event.via.planHash === null ? undefined : `plan ${event.via.planHash}`
        ].filter((part) => part !== undefined).join(", ")
      }`,
      ...event.targets.map((target) => `  target: ${target.type} ${target.id}`),
      ...changeLines(event.changes),
      ...(event.requestId === null ? [] : [`  request: ${event.requestId}`])
    ].join("\n")
})

/** One event a line: when, what, how it ended, who, on what. */
const line = (event: AuditEvent) =>
  [
    event.occurredAt.toISOString(),
    event.action,
    event.outcome === "succeeded" ? "" : event.outcome,
    actorOf(event),
    event.targets.map((target) => `${target.type}:${target.id}`).join(" ")
  ].filter((part) => part !== "").join("  ")

const encodeEvent = Schema.encodeSync(AuditEvent)

const Lines = Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))
const Count = Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThan(0))
const Interval = Schema.NumberFromString.check(Schema.isBetween({ minimum: 0.2, maximum: 300 }))

export const tail = Commands.leaf("tail", {
  summary: "Print the latest events, oldest first; with --follow, keep printing new ones as they are recorded.",
  details: [
    "One event a line (with --json, one event's JSON a line: NDJSON). --follow asks the server again every --interval seconds (default 2) for what came since, with the cursor the log gives a follower, until interrupted or --count events were printed. Events are in the order of their times; an event of a change that took long to commit may appear after newer ones were printed, and one that lands behind the follower's cursor is not printed (the export has it). For a SIEM, an audit stream is the delivery that waits for them."
  ],
  inputs: {
    ...filters,
    lines: Inputs.optional(Inputs.text("lines", { schema: Lines, description: "How many of the latest events to print first (default 10, at most 100)." })),
    follow: Inputs.boolean("follow", { description: "Keep printing new events as they are recorded." }),
    interval: Inputs.optional(Inputs.text("interval", { schema: Interval, description: "Seconds between two asks while following (default 2)." })),
    count: Inputs.optional(Inputs.text("count", { schema: Count, description: "Stop after printing this many events in all: with --follow and --since <now>, a script waits for the next one." }))
  },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const params = filterParams(input)
        const limit = Option.getOrElse(input.lines, () => 10)
        const wanted = Option.getOrUndefined(input.count)
        let printed = 0
        const print = (events: ReadonlyArray<AuditEvent>) =>
          Effect.forEach(events, (event) =>
            printed === wanted ? Effect.void : Effect.andThen(
              Console.log(input.global.json ? JSON.stringify(encodeEvent(event)) : line(event)),
              Effect.sync(() => printed++)
            ), { discard: true })
        // The latest `limit`, then following from the newest of them: oldest first from there on.
        const latest = yield* client.audit.listEvents({ query: { ...params, limit } })
        yield* print([...latest.items].reverse())
        if (!input.follow || printed === wanted) return
        // Following: oldest first from the newest event shown (which the first page repeats), with the cursor the
        // log gives a follower; the query stays the same, as its cursor requires.
        const newest = latest.items[0]
        const follow = { ...params, order: "asc" as const, limit: 100, ...(newest === undefined ? {} : { from: newest.occurredAt }) }
        const every = Duration.seconds(Option.getOrElse(input.interval, () => 2))
        let cursor: string | undefined
        let shown: string | undefined = newest?.id
        while (printed !== wanted) {
          const page = yield* client.audit.listEvents({ query: { ...follow, ...(cursor === undefined ? {} : { cursor }) } })
          const at = shown === undefined ? -1 : page.items.findIndex((event) => event.id === shown)
          shown = undefined
          yield* print(page.items.slice(at + 1))
          const full = page.items.length === follow.limit
          cursor = page.nextCursor ?? cursor
          if (!full && printed !== wanted) yield* Effect.sleep(every)
        }
      }))
})

export const exportEvents = Commands.endpoint("export", {
  summary: "Print every event under the filters, oldest first, as NDJSON (one event a line) or CSV, for a file or a SIEM.",
  inputs: { ...filters, format: Inputs.withDefault(Inputs.choice("format", ["ndjson", "csv"] as const, { description: "ndjson (default) or csv." }), "ndjson") },
  call: (client, input) => client.audit.exportEvents({ query: { format: input.format, ...filterParams(input) } }),
  output: Schema.String,
  human: (text) => text.trimEnd()
})

export const types = Commands.endpoint("types", {
  summary: "List the actions the audit log records, with their categories.",
  inputs: {},
  call: (client) => client.audit.listEventTypes(),
  output: AuditEventTypes,
  human: ({ items }) => Output.table(["action", "category", "description"], items.map((type) => [type.action, type.category, type.description]))
})

export const getSettings = Commands.endpoint("get", {
  summary: "Show how long the organization's events are kept.",
  inputs: {},
  call: (client) => client.audit.getSettings(),
  output: AuditSettingsResponse,
  human: ({ settings }) =>
    `Events are kept ${settings.retentionDays} days${settings.updatedAt === null ? " (the default)" : `, set ${Output.date(settings.updatedAt)}`}.`
})

export const setSettings = Commands.endpoint("set", {
  summary: "Set how long the organization's events are kept (owners): a daily job deletes older ones.",
  inputs: {
    retentionDays: Inputs.text("retention-days", {
      schema: Schema.NumberFromString.pipe(Schema.decodeTo(UpdateAuditSettingsRequest.fields.retentionDays)),
      description: "Days to keep events (7 to 3650)."
    })
  },
  call: (client, input) => client.audit.setSettings({ payload: { retentionDays: input.retentionDays } }),
  output: AuditSettingsResponse,
  human: ({ settings }) => `Events are now kept ${settings.retentionDays} days.`
})

export const audit = Commands.group("audit", "Read the active organization's audit log: who did what, when, and how (owners and admins).", [
  list,
  tail,
  get,
  exportEvents,
  types,
  Commands.group("settings", "The audit log's retention.", [getSettings, setSettings]),
  streams
], [AuditApi, AuditStreamsApi])
