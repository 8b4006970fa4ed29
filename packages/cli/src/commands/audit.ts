/**
 * `orgplane audit list | get | types`: the active organization's audit log, for its owners and admins. The filters
 * are the API's (`GET /v1/audit/events`), checked by its schema.
 */
import { type AuditEvent, AuditEventId, AuditEventPage, AuditEventResponse, AuditEventsQuery, AuditEventTypes } from "@orgplane/schema"
import { Schema } from "effect"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { streams } from "./auditStreams.js"

const query = AuditEventsQuery.fields

/** `--name <value>`, checked by the query member's own schema. */
const filter = <A>(name: string, schema: Schema.Schema<A, string>, description: string) => Inputs.optional(Inputs.text(name, { schema, description }))

const actorOf = (event: AuditEvent) => event.actor.label ?? `${event.actor.type} ${event.actor.id}`

/** The filters the list and the export share, as flags. */
const filters = {
  action: filter("action", query.action.from, "An action (member.role.update) or a family (member.*)."),
  actor: filter("actor", query.actorId.from, "Events of one actor: a user, API key, SCIM connection or worker id."),
  target: filter("target", query.targetId.from, "Events that acted on one resource, by its id."),
  requestId: filter("request-id", query.requestId.from, "The events of one request (its x-request-id)."),
  outcome: Inputs.optional(Inputs.choice("outcome", ["succeeded", "denied"] as const, { description: "Only changes made, or only refusals." })),
  since: Inputs.optional(Inputs.text("since", { schema: query.from.from, description: "Events at or after this instant (ISO 8601)." })),
  until: Inputs.optional(Inputs.text("until", { schema: query.to.from, description: "Events before this instant (ISO 8601)." }))
}

const filterParams = (input: Inputs.Values<typeof filters>) => ({
  ...Inputs.ifSome("action", input.action),
  ...Inputs.ifSome("actorId", input.actor),
  ...Inputs.ifSome("targetId", input.target),
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
    client.audit.listEvents({ urlParams: { ...filterParams(input), ...(input.oldestFirst ? { order: "asc" as const } : {}), ...page } }),
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

export const get = Commands.endpoint("get", {
  summary: "Show one audit event.",
  inputs: { eventId: Inputs.argument("eventId", { schema: AuditEventId, description: "The event (aev_…)." }) },
  call: (client, { eventId }) => client.audit.getEvent({ path: { eventId } }),
  output: AuditEventResponse,
  human: ({ event }) =>
    [
      `${event.id}: ${event.action} ${event.outcome}${event.reason === null ? "" : ` (${event.reason})`} at ${event.occurredAt.toISOString()}`,
      `  actor: ${actorOf(event)} (${event.actor.type} ${event.actor.id}${event.actor.membershipId === null ? "" : `, member ${event.actor.membershipId}`})`,
      `  via: ${
        [
          event.via.credentialId === null ? undefined : `credential ${event.via.credentialId}`,
          event.via.ssoConnectionId === null ? undefined : `SSO ${event.via.ssoConnectionId}`,
          event.via.ip === null ? undefined : `from ${event.via.ip}`,
          event.via.userAgent === null ? undefined : `with ${event.via.userAgent}`
        ].filter((part) => part !== undefined).join(", ") || "unknown"
      }`,
      ...event.targets.map((target) => `  target: ${target.type} ${target.id}`),
      ...(event.requestId === null ? [] : [`  request: ${event.requestId}`])
    ].join("\n")
})

export const exportEvents = Commands.endpoint("export", {
  summary: "Print every event under the filters, oldest first, as NDJSON (one event a line) or CSV, for a file or a SIEM.",
  inputs: { ...filters, format: Inputs.withDefault(Inputs.choice("format", ["ndjson", "csv"] as const, { description: "ndjson (default) or csv." }), "ndjson") },
  call: (client, input) => client.audit.exportEvents({ urlParams: { format: input.format, ...filterParams(input) } }),
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

export const audit = Commands.group("audit", "Read the active organization's audit log: who did what, when, and how (owners and admins).", [
  list,
  get,
  exportEvents,
  types,
  streams
])
