/**
 * `orgplane audit streams create | list | get | update | delete | rotate-secret | test`: the endpoints the active
 * organization's audit events are streamed to (owners manage them; admins read them). Values are checked by the
 * API's own schemas.
 */
import { type AuditStream, AuditStreamId, AuditStreamPage, AuditStreamResponse, AuditStreamStatus, AuditStreamTestResult, AuditStreamWithSecret, CreateAuditStreamRequest, exampleId, UpdateAuditStreamRequest } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const streamId = Inputs.argument("streamId", { schema: AuditStreamId, description: "The audit stream (ast_…)." })

const createFields = CreateAuditStreamRequest.fields
const updateFields = UpdateAuditStreamRequest.fields

const deliveryOf = ({ delivery, status }: AuditStream) =>
  status === "paused"
    ? "paused"
    : delivery.consecutiveFailures === 0
    ? delivery.lastSuccessAt === null ? "nothing delivered yet" : `ok (last ${Output.date(delivery.lastSuccessAt)})`
    : `failing: ${delivery.consecutiveFailures} attempt${delivery.consecutiveFailures === 1 ? "" : "s"} (${delivery.lastError ?? "?"}), next ${Output.date(delivery.nextAttemptAt)}`

export const describe = (stream: AuditStream) =>
  [
    `${stream.id} → ${stream.url}`,
    Output.fields([
      ["description", stream.description ?? "-"],
      ["status", stream.status],
      ["delivery", deliveryOf(stream)],
      ["last delivered", stream.delivery.lastDeliveredEventId === null ? "-" : `${stream.delivery.lastDeliveredEventId} (${Output.date(stream.delivery.lastDeliveredAt)})`],
      ["last attempt", Output.date(stream.delivery.lastAttemptAt)],
      ["created", Output.date(stream.createdAt)]
    ]).split("\n").map((line) => `  ${line}`).join("\n")
  ].join("\n")

const withSecret = (made: string) => ({ secret, stream }: typeof AuditStreamWithSecret.Type) =>
  [
    `${made} ${stream.id} → ${stream.url}.`,
    "Its signing secret is shown only this once; store it where the receiver verifies deliveries (see verifyAuditStreamSignature in @orgplane/client):",
    secret
  ].join("\n")

export const create = Commands.endpoint("create", {
  summary: "Register an endpoint that receives the organization's audit events, signed; prints its secret once (owners).",
  inputs: {
    url: Inputs.argument("url", { schema: createFields.url }),
    description: Inputs.optional(Inputs.text("description", { schema: createFields.description.schema })),
    paused: Inputs.boolean("paused", { description: "Create it paused: nothing is sent until it is resumed." })
  },
  call: (client, { description, paused, url }) =>
    client.auditStreams.create({ payload: { url, ...Inputs.ifSome("description", description), ...(paused ? { status: "paused" as const } : {}) } }),
  output: AuditStreamWithSecret,
  human: withSecret("Created audit stream")
})

export const list = Commands.list("list", {
  summary: "List the organization's audit streams with their delivery status (owners and admins).",
  noun: "audit streams",
  inputs: {},
  call: (client, _input, page) => client.auditStreams.list({ query: page }),
  output: AuditStreamPage,
  columns: [
    ["id", (stream) => stream.id],
    ["url", (stream) => stream.url],
    ["status", (stream) => stream.status],
    ["delivery", deliveryOf],
    ["last delivered", (stream) => Output.date(stream.delivery.lastDeliveredAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show an audit stream and how its delivery goes (never its secret).",
  inputs: { streamId },
  call: (client, { streamId }) => client.auditStreams.get({ params: { streamId } }),
  output: AuditStreamResponse,
  human: ({ stream }) => describe(stream)
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Pause delivery to a stream.", ["audit", "streams", "update", exampleId("ast"), "--status", "paused"]],
  ],
  summary: "Change an audit stream's URL or description, or pause or resume it; its place in the log is kept.",
  inputs: {
    streamId,
    url: Inputs.optional(Inputs.text("url", { schema: updateFields.url.schema, description: "A new endpoint URL." })),
    description: Inputs.optional(Inputs.text("description", { schema: createFields.description.schema })),
    clearDescription: Inputs.boolean("clear-description", { description: "Remove the description." }),
    status: Inputs.optional(Inputs.choice("status", AuditStreamStatus.literals, {
      description: "paused stops delivery where it is; active resumes it at once."
    }))
  },
  call: (client, { clearDescription, description, status, streamId, url }) =>
    Effect.gen(function*() {
      if (clearDescription && Option.isSome(description)) {
        return yield* new UsageError({ message: "give --description or --clear-description, not both" })
      }
      const payload = {
        ...Inputs.ifSome("url", url),
        ...Inputs.ifSome("description", description),
        ...(clearDescription ? { description: null } : {}),
        ...Inputs.ifSome("status", status)
      }
      if (Object.keys(payload).length === 0) {
        return yield* new UsageError({ message: "give something to change (--url, --description, --clear-description, --status)" })
      }
      return yield* client.auditStreams.update({ params: { streamId }, payload })
    }),
  output: AuditStreamResponse,
  human: ({ stream }) => `Updated audit stream ${stream.id}.\n${describe(stream)}`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: AuditStreamId })

export const del = Commands.endpoint("delete", {
  summary: "Delete an audit stream and its secret; nothing more is sent to it.",
  inputs: { streamId },
  call: (client, { streamId }) => client.auditStreams.delete({ params: { streamId } }).pipe(Effect.as({ ok: true as const, deleted: streamId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted audit stream ${deleted}.`
})

export const rotateSecret = Commands.endpoint("rotate-secret", {
  summary: "Replace an audit stream's signing secret; prints the new one once (deliveries are signed with it alone from now on).",
  inputs: { streamId },
  call: (client, { streamId }) => client.auditStreams.rotateSecret({ params: { streamId } }),
  output: AuditStreamWithSecret,
  human: withSecret("Rotated the secret of audit stream")
})

export const test = Commands.endpoint("test", {
  summary: "Send one signed ping to an audit stream's endpoint now and show what it answered.",
  inputs: { streamId },
  call: (client, { streamId }) => client.auditStreams.test({ params: { streamId } }),
  output: AuditStreamTestResult,
  human: (result) =>
    result.delivered
      ? `Delivered: the endpoint answered ${result.status} (delivery ${result.deliveryId}).`
      : `Not delivered: ${result.error ?? "no answer"} (delivery ${result.deliveryId}).`
})

export const streams = Commands.group(
  "streams",
  "The endpoints the organization's audit events are streamed to, signed and in order (owners manage; admins read).",
  [create, list, get, update, del, rotateSecret, test]
)
