/**
 * `orgplane workers register | list | get | update | rotate-token | delete | upgrade | activity`: the active
 * organization's workers. Any member registers and reads them; a worker's creator, owners and admins change, delete,
 * rotate the token of and upgrade it, and read its activity.
 */
import {
  RegisteredWorker,
  RegisterWorkerRequest,
  RuntimeUpgradeRequest,
  RuntimeUpgradeResponse,
  SandboxBackend,
  type Worker,
  WorkerActivityApi,
  type WorkerActivityEntry,
  WorkerActivityPage,
  WorkerDestination,
  WorkerId,
  WorkerPage,
  WorkerResponse,
  WorkersApi,
  WorkspacePath
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const workerId = Inputs.argument("workerId", { schema: WorkerId, description: "The worker (wrk_…)." })

const describe = (worker: Worker) =>
  `${worker.name} (${worker.id}): ${worker.destination}, ${worker.status} (${worker.connectivity})${worker.isMine ? ", yours" : ""}`

const description = Inputs.optional(Inputs.text("description", { schema: RegisterWorkerRequest.fields.description.schema }))
const sandboxBackend = Inputs.optional(Inputs.text("sandbox-backend", { placeholder: "<slug>", schema: SandboxBackend }))
const workspacePath = Inputs.optional(Inputs.text("workspace-path", { placeholder: "<path>", schema: WorkspacePath }))

export const register = Commands.endpoint("register", {
  summary: "Register a worker; prints its token once (give it to the worker's runtime).",
  inputs: {
    name: Inputs.argument("name", { schema: RegisterWorkerRequest.fields.name }),
    destination: Inputs.withDefault(
      Inputs.choice("destination", WorkerDestination.literals, { description: "Where it runs: local (default) or cloud." }),
      "local"
    ),
    description,
    sandboxBackend,
    workspacePath
  },
  call: (client, input) =>
    client.workers.register({
      payload: {
        name: input.name,
        destination: input.destination,
        ...Inputs.ifSome("description", input.description),
        ...Inputs.ifSome("sandboxBackend", input.sandboxBackend),
        ...Inputs.ifSome("workspacePath", input.workspacePath)
      }
    }),
  output: RegisteredWorker,
  human: ({ token, worker }) =>
    `Registered worker ${describe(worker)}.\nIts token, shown only this once (the runtime sends it as Authorization: Bearer):\n${token}`
})

export const list = Commands.list("list", {
  summary: "List the organization's workers, oldest first (any member may).",
  noun: "workers",
  inputs: { mine: Inputs.boolean("mine", { description: "Only the workers you registered." }) },
  call: (client, { mine }, page) => client.workers.list({ query: { ...(mine ? { mine: "true" as const } : {}), ...page } }),
  output: WorkerPage,
  columns: [
    ["id", (worker) => worker.id],
    ["name", (worker) => worker.name],
    ["destination", (worker) => worker.destination],
    ["status", (worker) => worker.status],
    ["connectivity", (worker) => worker.connectivity],
    ["mine", (worker) => (worker.isMine ? "yes" : "no")],
    ["last heartbeat", (worker) => (worker.lastHeartbeatAt === null ? "never" : Output.date(worker.lastHeartbeatAt))]
  ]
})

const showWorker = ({ instance, worker }: typeof WorkerResponse.Type) =>
  [
    describe(worker),
    ...(worker.description !== null ? [`  description: ${worker.description}`] : []),
    `  runtime version: ${worker.imageVersion ?? "unknown"}; last heartbeat: ${worker.lastHeartbeatAt?.toISOString() ?? "never"}`,
    `  connectivity: ${worker.connectivity}; last seen: ${worker.lastSeenAt?.toISOString() ?? "never"}; open sessions: ${
      worker.openSessions ?? "unknown"
    }`,
    ...(worker.workspacePath !== null ? [`  workspace: ${worker.workspacePath}`] : []),
    ...(worker.sandboxBackend !== null ? [`  sandbox: ${worker.sandboxBackend}`] : []),
    instance === null
      ? "  instance: none yet"
      : `  instance: ${instance.provider}${instance.region === null ? "" : ` (${instance.region})`}, ${instance.status}, ${instance.url ?? "no URL"}`
  ].join("\n")

export const get = Commands.endpoint("get", {
  summary: "Show one worker with its latest instance.",
  inputs: { workerId },
  call: (client, { workerId }) => client.workers.get({ params: { id: workerId } }),
  output: WorkerResponse,
  human: showWorker
})

export const update = Commands.endpoint("update", {
  summary: "Change a worker's name, description, workspace path or sandbox backend (its creator, owners and admins).",
  inputs: {
    workerId,
    name: Inputs.optional(Inputs.text("name", { schema: RegisterWorkerRequest.fields.name, description: "A new name." })),
    description,
    sandboxBackend,
    workspacePath
  },
  call: (client, input) =>
    client.workers.update({
      params: { id: input.workerId },
      payload: {
        ...Inputs.ifSome("name", input.name),
        ...Inputs.ifSome("description", input.description),
        ...Inputs.ifSome("sandboxBackend", input.sandboxBackend),
        ...Inputs.ifSome("workspacePath", input.workspacePath)
      }
    }),
  output: WorkerResponse,
  human: (response) => `Updated worker ${showWorker(response)}`
})

export const rotateToken = Commands.endpoint("rotate-token", {
  summary: "Issue a new token for a worker and revoke its earlier ones; prints the new token once.",
  inputs: { workerId },
  call: (client, { workerId }) => client.workers.rotateToken({ params: { id: workerId } }),
  output: RegisteredWorker,
  human: ({ token, worker }) => `New token for worker ${describe(worker)}; the earlier ones no longer work. Shown only this once:\n${token}`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: WorkerId })

export const del = Commands.endpoint("delete", {
  summary: "Delete a worker and revoke its tokens (its creator, owners and admins).",
  inputs: { workerId },
  call: (client, { workerId }) => client.workers.delete({ params: { id: workerId } }).pipe(Effect.as({ ok: true as const, deleted: workerId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted worker ${deleted}; its runtime's token no longer works.`
})

/** The upgrade request: a JSON object, from `--body` or a file (`-`: standard input); `{}` when neither is given. */
const UpgradeBody = Schema.fromJsonString(RuntimeUpgradeRequest)
/** The server's default body limit: a larger request would be refused there. */
const MAX_BODY_BYTES = 1024 * 1024

const readBody = (path: string) =>
  Files.readFileOrStdin(path, MAX_BODY_BYTES, "1 MiB").pipe(
    Effect.mapError((message) => new UsageError({ message: `--file: ${message}` })),
    Effect.flatMap((text) =>
      Effect.mapError(Schema.decodeEffect(UpgradeBody)(text), () => new UsageError({ message: `--file: ${path} does not hold a JSON object` }))
    )
  )

export const upgrade = Commands.endpoint("upgrade", {
  summary: "Ask a worker's runtime to upgrade; prints the runtime's status and answer (its creator, owners and admins).",
  details: [
    "The request is a JSON object passed to the runtime as is: --body '{\"version\":\"1.2.3\"}', or --file <path> (`-` for standard input); without either, {}."
  ],
  inputs: {
    workerId,
    body: Inputs.optional(Inputs.text("body", { placeholder: "<json>", description: "The request, a JSON object.", schema: UpgradeBody })),
    file: Inputs.optional(Inputs.text("file", { placeholder: "<path>", description: "A file holding the request (`-`: standard input)." }))
  },
  call: (client, input) =>
    Effect.gen(function*() {
      if (Option.isSome(input.body) && Option.isSome(input.file)) {
        return yield* new UsageError({ message: "give the request with --body or --file, not both" })
      }
      const payload = Option.isSome(input.file) ? yield* readBody(input.file.value) : Option.getOrElse(input.body, () => ({}))
      return yield* client.workers.upgradeRuntime({ params: { id: input.workerId }, payload })
    }),
  output: RuntimeUpgradeResponse,
  human: ({ body, status }) => `The runtime answered ${status}:\n${JSON.stringify(body, null, 2)}`
})

/** What an activity entry says, beyond its time and kind. */
const detail = (entry: WorkerActivityEntry) =>
  entry.kind === "transition"
    ? `${entry.from} -> ${entry.to} (${entry.cause === "heartbeat" ? "a heartbeat arrived" : "no heartbeat"})`
    : [
      entry.status,
      entry.active ? "active" : "idle",
      ...(entry.openSessions === null ? [] : [`${entry.openSessions} open sessions`]),
      ...(entry.imageVersion === null ? [] : [`version ${entry.imageVersion}`]),
      `sent ${Output.date(entry.sentAt)}`
    ].join(", ")

export const activity = Commands.list("activity", {
  summary: "Show a worker's recent heartbeats (the last 100) and its online/offline transitions, newest first (its creator, owners and admins).",
  noun: "activity entries",
  inputs: {
    workerId,
    kind: Inputs.optional(Inputs.choice("kind", ["heartbeat", "transition"] as const, { description: "Only heartbeats or only transitions." }))
  },
  call: (client, input, page) =>
    client.workerActivity.list({ params: { id: input.workerId }, query: { ...Inputs.ifSome("kind", input.kind), ...page } }),
  output: WorkerActivityPage,
  columns: [
    ["at", (entry) => Output.date(entry.at)],
    ["kind", (entry) => entry.kind],
    ["detail", detail]
  ]
})

export const workers = Commands.group(
  "workers",
  "Manage the active organization's workers (any member registers and reads; creators, owners and admins change them).",
  [register, list, get, update, rotateToken, del, upgrade, activity],
  [WorkerActivityApi, WorkersApi]
)
