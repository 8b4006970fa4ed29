/**
 * The MCP tools over the API: by default four catalog tools (`find_operations`, `describe_operation`,
 * `read_operation` for what only reads, `call_operation`) that reach every served operation the caller may take, and on request toolsets, one tool per
 * operation of the named groups. Every call reaches the API through the request's `Transport` with the caller's own
 * credential, so the server's authentication, policy, idempotency and audit apply as to any request.
 */
import type { Operation } from "@orgplane/schema"
import * as McpServer from "effect/ai/McpServer"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Caller from "./Caller.js"
import * as Catalog from "./Catalog.js"
import { Confirmations, CurrentSession } from "./Confirmation.js"
import * as Invocation from "./Invocation.js"
import { Transport } from "./Transport.js"

/** What the MCP server is started with. Unknown members are refused. */
export const Options = Schema.Struct({
  /** Groups whose operations are served as a tool each (`["teams", "members"]`), besides the catalog tools. */
  toolsets: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Every request carries `Orgplane-Read-Only: true` (the server refuses writes) and the lists show only reads. */
  readOnly: Schema.optionalKey(Schema.Boolean),
  /** The key confirmation tokens are signed with; processes that share it honour each other's. Random by default. */
  confirmationKey: Schema.optionalKey(Schema.String)
})
export type Options = typeof Options.Type

/** The options could not be used (an unknown member, an unknown toolset): the server does not start. */
export class OptionsError extends Schema.TaggedError<OptionsError>("@orgplane/mcp/OptionsError")("OptionsError", {
  message: Schema.String
}) {}

/** The options, decoded strictly: an unknown member or toolset is an error, never ignored. */
export const decodeOptions = Effect.fn("Tools.decodeOptions")(function*(input: unknown) {
  const options = yield* Schema.decodeUnknownEffect(Options)(input, { onExcessProperty: "error" }).pipe(
    Effect.mapError((error) => new OptionsError({ message: `Invalid MCP options: ${error.message}` }))
  )
  const groups = Catalog.groups()
  const unknown = (options.toolsets ?? []).filter((name) => !groups.includes(name))
  if (unknown.length > 0) {
    return yield* new OptionsError({ message: `Unknown toolset ${unknown.join(", ")}; the toolsets are ${groups.join(", ")}.` })
  }
  return options
})

/**
 * An operation as find_operations lists it: enough to choose one, and to call one whose arguments say what they are;
 * describe_operation tells the rest.
 */
const OperationSummary = Schema.Struct({
  name: Schema.String,
  summary: Schema.String,
  arguments: Schema.Array(Schema.String),
  readOnly: Schema.Boolean,
  destructive: Schema.Boolean
})

const JsonSchemaObject = Schema.Record(Schema.String, Schema.Unknown)

export const FindOperations = Tool.make("find_operations", {
  description:
    "Finds the orgplane API operations you may take, best match first (5 unless limit says more): an operation whose name or summary says more of the query's words ranks higher; not every word need match. group narrows to one area (teams, members, ...). Each comes with its arguments (optional ones end in ?): call it with read_operation or call_operation, or describe_operation first for their schemas.",
  parameters: Schema.Struct({
    query: Schema.optionalKey(Schema.String),
    group: Schema.optionalKey(Schema.String),
    limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 }))),
    cursor: Schema.optionalKey(Schema.String)
  }),
  success: Schema.Struct({ operations: Schema.Array(OperationSummary), nextCursor: Schema.NullOr(Schema.String) }),
  failure: Invocation.ToolFailure,
  dependencies: [Transport]
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false).annotate(Tool.Idempotent, true).annotate(Tool.OpenWorld, false)

export const DescribeOperation = Tool.make("describe_operation", {
  description:
    "Describes an operation: what it does, its arguments (inputSchema, whole) and its answer (output: each member of the answer with its type). outputSchema: true adds the answer's whole JSON Schema (outputSchema), which is long. The errors an operation answers come with the failed call, each with its code and message.",
  parameters: Schema.Struct({ name: Schema.String, outputSchema: Schema.optionalKey(Schema.Boolean) }),
  success: Schema.Struct({
    name: Schema.String,
    summary: Schema.String,
    description: Schema.String,
    method: Schema.String,
    path: Schema.String,
    requires: Schema.Array(Schema.String),
    destructive: Schema.Boolean,
    readOnly: Schema.Boolean,
    idempotent: Schema.Boolean,
    inputSchema: JsonSchemaObject,
    output: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
    outputSchema: Schema.NullOr(JsonSchemaObject)
  }),
  failure: Invocation.ToolFailure,
  dependencies: [Transport]
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false).annotate(Tool.Idempotent, true).annotate(Tool.OpenWorld, false)

export const CallOperation = Tool.make("call_operation", {
  description:
    "Calls an operation with arguments as describe_operation gives them. A destructive one runs only once the person confirms: your client asks them where it can; else the first call answers a token: ask the person, then call again with it. Lists take limit and cursor.",
  parameters: Schema.Struct({
    name: Schema.String,
    arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
    idempotencyKey: Schema.optionalKey(Schema.String),
    confirmation: Schema.optionalKey(Schema.String)
  }),
  success: Invocation.CallResult,
  failure: Invocation.ToolFailure,
  dependencies: [Transport]
}).annotate(Tool.Readonly, false).annotate(Tool.Destructive, true).annotate(Tool.Idempotent, false).annotate(Tool.OpenWorld, false)

/**
 * Reads through the same path as `call_operation`, for an operation that changes nothing: a tool a client may approve
 * by its annotations (read-only, not destructive, idempotent), where `call_operation`, which may change anything, is
 * annotated destructive.
 */
export const ReadOperation = Tool.make("read_operation", {
  description:
    "Calls an operation that only reads (readOnly: true in find_operations and describe_operation), with arguments as describe_operation gives them. It changes nothing and needs no confirmation. Lists take limit and cursor. Anything that changes something goes through call_operation.",
  parameters: Schema.Struct({
    name: Schema.String,
    arguments: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
  }),
  success: Invocation.CallResult,
  failure: Invocation.ToolFailure,
  dependencies: [Transport]
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false).annotate(Tool.Idempotent, true).annotate(Tool.OpenWorld, false)

export const CatalogToolkit = Toolkit.make(FindOperations, DescribeOperation, ReadOperation, CallOperation)

const failure = (message: string): Invocation.ToolFailure => ({ message })

/** The caller, its failures as tool errors (an API refusal with its status and body). */
const callerOf = (settings: Invocation.Settings) =>
  Caller.read(settings).pipe(
    Effect.catchTags({
      CallerError: (error) => Effect.fail<Invocation.ToolFailure>({ message: error.message, status: error.status, body: error.body }),
      TransportError: (error) => Effect.fail(failure(error.message))
    })
  )

/** The answer to a name no served operation has (nor one the caller may not take, for describe_operation). */
const noOperation = (name: string) => failure(`No operation named ${name}. find_operations lists the ones you may take.`)

/** A served operation the caller may take, else the same error as for a name that does not exist. */
const operationFor = (name: string, caller: Caller.Caller) => {
  const operation = Catalog.find(name)
  return operation !== undefined && Caller.mayTake(caller, operation)
    ? Effect.succeed(operation)
    : Effect.fail(noOperation(name))
}

/** A word as the search compares it: lower case, without a plural's final `s` (`keys` is `key`, `access` stays). */
const stem = (word: string) => (word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word)

/** The words of a text, a name's camelCase and dots split too (`apiKeys.create`: api, key, create). */
const wordsOf = (text: string): ReadonlyArray<string> =>
  text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/).filter((word) => word !== "").map(stem)

/** Words a query says that name nothing: they neither find nor rank an operation. */
const stopWords: ReadonlySet<string> = new Set(["a", "an", "the", "and", "or", "to", "of", "for", "in", "on", "with", "my", "our", "me", "i", "it", "from", "by", "all", "into", "as", "new"])

/**
 * A query's word and the words of the API it stands for: people say "make" or "publish" where the API says
 * `create`, "invite" where it says `invitation`. A word matches an operation when it or one of these does.
 */
const synonyms: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  ["make", ["create"]],
  ["publish", ["create", "add"]],
  ["invite", ["invitation"]],
  ["erase", ["delete"]],
  ["drop", ["delete", "remove"]],
  ["show", ["list", "get"]],
  ["see", ["list", "get"]],
  ["last", ["list"]],
  ["latest", ["list"]],
  ["recent", ["list"]],
  ["change", ["update"]],
  ["edit", ["update"]],
  ["rename", ["update"]]
])

/** The words of a query that name an action: an operation whose name says it (or a word it stands for) ranks first among equals. */
const verbs: ReadonlySet<string> = new Set([
  "create", "make", "publish", "add", "delete", "erase", "drop", "remove", "revoke", "update", "change", "edit", "rename", "set", "invite",
  "rotate", "archive", "restore", "grant", "transfer", "cancel", "list", "get", "read", "show", "see", "last", "latest", "recent", "search"
])

/** An operation's words by where they stand, read once: its name, its summary, its description. */
interface Indexed {
  readonly name: ReadonlySet<string>
  readonly summary: ReadonlySet<string>
  readonly description: ReadonlySet<string>
}
const indexes = new WeakMap<Operation, Indexed>()
const indexOf = (operation: Operation): Indexed => {
  let index = indexes.get(operation)
  if (index === undefined) {
    index = { name: new Set(wordsOf(operation.id)), summary: new Set(wordsOf(operation.summary)), description: new Set(wordsOf(operation.description)) }
    indexes.set(operation, index)
  }
  return index
}

/** A query's word and the API's words it stands for. */
const candidatesOf = (word: string): ReadonlyArray<string> => [word, ...(synonyms.get(word) ?? [])]

/** Where a word (or a word it stands for) stands in an operation: 4 in its name, 2 in its summary, 1 in its description, summed. */
const weightOf = (index: Indexed, word: string): number => {
  let best = 0
  for (const candidate of candidatesOf(word)) {
    const found = (index.name.has(candidate) ? 4 : 0) + (index.summary.has(candidate) ? 2 : 0) + (index.description.has(candidate) ? 1 : 0)
    if (found > best) best = found
  }
  return best
}

/**
 * How well an operation matches a query's words, 0 for not at all. An operation whose name or summary says more of
 * the words ranks above one saying fewer (a word only its description mentions counts least); then one whose name is
 * the action the query asks (`create` for "create", "make" or "publish"); then one whose words stand where they weigh
 * more (weightOf). Every word need not be found: "create a team and add a member" finds `teams.create` and
 * `teams.addMembers` first.
 */
const scoreOf = (operation: Operation, words: ReadonlyArray<string>): number => {
  const index = indexOf(operation)
  let said = 0
  let weight = 0
  let action = 0
  for (const word of words) {
    const found = weightOf(index, word)
    if (found >= 2) said++
    weight += found
    if (verbs.has(word) && candidatesOf(word).some((candidate) => index.name.has(candidate))) action = 1
  }
  return weight === 0 ? 0 : said * 1000 + action * 100 + weight
}

/** The query's words that find operations; none for no query. */
const queryWords = (query: string | undefined): ReadonlyArray<string> =>
  [...new Set(wordsOf(query ?? ""))].filter((word) => !stopWords.has(word))

/**
 * The operations the caller may take in the group asked, best match first (then in the API's order); every one, in
 * the API's order, for no query.
 */
const ranked = (operations: ReadonlyArray<Operation>, query: string | undefined): ReadonlyArray<Operation> => {
  const words = queryWords(query)
  if (words.length === 0) return operations
  return operations
    .map((operation, position) => ({ operation, position, score: scoreOf(operation, words) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .map(({ operation }) => operation)
}

const catalogHandlers = (settings: Invocation.Settings) =>
  Effect.map(Effect.service(Confirmations), (confirmations) =>
    CatalogToolkit.of({
      find_operations: Effect.fn("Tools.findOperations")(function*(input) {
        const caller = yield* callerOf(settings)
        const groups = Catalog.groups()
        if (input.group !== undefined && !groups.includes(input.group)) {
          return yield* Effect.fail(failure(`No group named ${input.group}; the groups are ${groups.join(", ")}.`))
        }
        const offset = input.cursor === undefined ? 0 : Number(input.cursor)
        if (!Number.isSafeInteger(offset) || offset < 0) return yield* Effect.fail(failure("The cursor is not one find_operations answered."))
        const found = ranked(
          Catalog.served().filter((operation) => (input.group === undefined || operation.group === input.group) && Caller.mayTake(caller, operation)),
          input.query
        )
        const limit = input.limit ?? 5
        const page = found.slice(offset, offset + limit)
        return {
          operations: page.map((operation) => ({
            name: operation.id,
            summary: operation.summary,
            arguments: Catalog.argumentsOf(operation),
            readOnly: operation.readOnly,
            destructive: operation.destructive
          })),
          nextCursor: offset + limit < found.length ? String(offset + limit) : null
        }
      }),
      describe_operation: Effect.fn("Tools.describeOperation")(function*(input) {
        const operation = yield* operationFor(input.name, yield* callerOf(settings))
        return {
          name: operation.id,
          summary: operation.summary,
          description: Catalog.descriptionWithoutErrors(operation),
          method: operation.method,
          path: operation.path,
          requires: operation.requires,
          destructive: operation.destructive,
          readOnly: operation.readOnly,
          idempotent: operation.readOnly || operation.takesIdempotencyKey,
          inputSchema: Catalog.inputSchemaOf(operation),
          output: Catalog.outputSummaryOf(operation),
          outputSchema: input.outputSchema === true ? Catalog.outputSchemaOf(operation) : null
        }
      }),
      // A call is the server's to decide: an operation the lists hide from this caller still goes to the API, which
      // refuses it as it refuses the same request over HTTP (403, its denial in the audit log where the catalog
      // records one), so the MCP path and the HTTP path authorize alike. Only a name no served operation has is
      // answered here.
      read_operation: Effect.fn("Tools.readOperation")(function*(input) {
        const operation = Catalog.find(input.name)
        if (operation === undefined) return yield* Effect.fail(noOperation(input.name))
        if (!operation.readOnly) {
          return yield* Effect.fail(failure(`Not sent: ${operation.id} changes something (${operation.method}); call it with call_operation.`))
        }
        return yield* Invocation.call(operation, input, settings).pipe(Effect.provideService(Confirmations, confirmations))
      }),
      call_operation: Effect.fn("Tools.callOperation")(function*(input) {
        const operation = Catalog.find(input.name)
        if (operation === undefined) return yield* Effect.fail(noOperation(input.name))
        return yield* Invocation.call(operation, input, settings).pipe(Effect.provideService(Confirmations, confirmations))
      })
    }))

/** The members a toolset tool takes beside the operation's arguments. */
const controls = {
  idempotencyKey: { type: "string", description: "Makes a retry safe: the same key answers the first result again." },
  confirmation: { type: "string", description: "The token a first, unconfirmed call of this destructive operation answered." }
} as const

/** A toolset tool's input: the operation's (as describe_operation gives it) with `idempotencyKey` and `confirmation`. */
const toolsetInputOf = (operation: Operation) => {
  const input = Catalog.inputSchemaOf(operation)
  const properties = typeof input.properties === "object" && input.properties !== null && !Array.isArray(input.properties) ? input.properties : {}
  const extra = {
    ...(operation.takesIdempotencyKey && !("idempotencyKey" in properties) ? { idempotencyKey: controls.idempotencyKey } : {}),
    ...(operation.destructive && !("confirmation" in properties) ? { confirmation: controls.confirmation } : {})
  }
  return { ...input, properties: { ...properties, ...extra } }
}

/** The toolset tool of one operation: its input as describe_operation gives it, run as call_operation runs it. */
const toolOf = (operation: Operation) =>
  Tool.dynamic(Catalog.toolNameOf(operation), {
    description: operation.destructive
      ? `${operation.summary} Destructive: runs once the person confirms, asked through your client where it can; else the first call answers a confirmation token: call again with it (\`confirmation\`).`
      : operation.summary,
    parameters: toolsetInputOf(operation),
    success: Invocation.CallResult,
    failure: Invocation.ToolFailure
  }).addDependency(Transport)
    .annotate(Tool.Title, operation.summary)
    .annotate(Tool.Readonly, operation.readOnly)
    .annotate(Tool.Destructive, operation.destructive)
    .annotate(Tool.Idempotent, operation.readOnly || operation.takesIdempotencyKey)
    .annotate(Tool.OpenWorld, false)

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A toolset call's input split into the operation's arguments and the controls. */
const toolsetCall = (operation: Operation, input: unknown): Invocation.CallInput => {
  const { confirmation, idempotencyKey, ...args } = isRecord(input) ? input : {}
  return {
    arguments: args,
    confirmation: operation.destructive && typeof confirmation === "string" ? confirmation : undefined,
    idempotencyKey: operation.takesIdempotencyKey && typeof idempotencyKey === "string" ? idempotencyKey : undefined
  }
}

/**
 * The callers of the requests being answered, read once per MCP request: a list request checks each toolset tool's
 * visibility with the same request context.
 */
const callersByRequest = new WeakMap<object, Caller.Caller | null>()

const visibleTo = (settings: Invocation.Settings, byName: ReadonlyMap<string, Operation>) =>
  McpServer.visibility(Effect.fnUntraced(function*(options: McpServer.MiddlewareOptions) {
    const operation = byName.get(options.target)
    if (operation === undefined) return true
    let caller = callersByRequest.get(options.requestContext)
    if (caller === undefined) {
      caller = yield* Caller.read(settings).pipe(Effect.orElseSucceed(() => null))
      callersByRequest.set(options.requestContext, caller)
    }
    return caller !== null && Caller.mayTake(caller, operation)
  }))

/** The toolsets' tools, each shown only to callers who may take its operation. */
const toolsetsLayer = (groups: ReadonlyArray<string>, settings: Invocation.Settings) => {
  const operations = Catalog.served().filter((operation) => groups.includes(operation.group))
  if (operations.length === 0) return Layer.empty
  const byName = new Map(operations.map((operation) => [Catalog.toolNameOf(operation), operation]))
  const toolkit = Toolkit.make(...operations.map(toolOf))
  const handlers = Effect.map(Effect.service(Confirmations), (confirmations) =>
    Object.fromEntries(operations.map((operation) => [
      Catalog.toolNameOf(operation),
      (input: unknown) =>
        Invocation.call(operation, toolsetCall(operation, input), settings).pipe(Effect.provideService(Confirmations, confirmations))
    ])))
  return McpServer.toolkit(toolkit).pipe(Layer.provide(visibleTo(settings, byName).layer), Layer.provide(toolkit.toLayer(handlers)))
}

/** A request's MCP session, where it has one (its `Mcp-Session-Id` on HTTP): what a confirmation is bound to. */
const sessionMiddleware = McpServer.middleware((effect, options) =>
  options.sessionId === undefined ? effect : Effect.provideService(effect, CurrentSession, options.sessionId)
)

/**
 * Toolsets registered when a caller first names them, not at start: for a server where any session may name any
 * toolset (`/mcp`), registering all 230 operations' tools up front cost its start-up about 0.4 s. `ensure` registers
 * the groups not yet registered (one at a time, each once) and waits for them; `layer`, given the loader, installs
 * what registers one (`install`), in its scope and with its services.
 */
export interface ToolsetLoader {
  readonly ensure: (groups: ReadonlyArray<string>) => Effect.Effect<void>
  readonly install: (register: (group: string) => Effect.Effect<void>) => void
}

/** A loader for `layer`: its `ensure` registers nothing until the layer has been built. */
export const makeToolsetLoader = (): ToolsetLoader => {
  let register: ((group: string) => Effect.Effect<void>) | undefined
  const registered = new Set<string>()
  const lock = Semaphore.makeUnsafe(1)
  const missing = (groups: ReadonlyArray<string>) => groups.filter((group) => !registered.has(group))
  return {
    install: (install) => {
      register = install
    },
    ensure: (groups) => {
      const installed = register
      return installed === undefined || missing(groups).length === 0
        ? Effect.void
        : lock.withPermits(1)(Effect.suspend(() =>
          Effect.forEach(missing(groups), (group) => Effect.map(installed(group), () => void registered.add(group)), { discard: true })
        ))
    }
  }
}

/**
 * The layer that hands `loader` a way to register a toolset later, in this layer's scope and with its services. A
 * toolset's tools need each request's `Transport`, which the MCP transport's middleware gives every request: this
 * layer requires it as the registrations do (`McpRequest`), so the same middleware discharges it.
 */
const installLoader = (loader: ToolsetLoader, settings: Invocation.Settings) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const scope = yield* Scope.Scope
    const context = yield* Effect.context<McpServer.McpServer | Confirmations | McpServer.McpRequest<"Requires", Transport>>()
    loader.install((group) => Layer.buildWithScope(toolsetsLayer([group], settings), scope).pipe(Effect.provideContext(context), Effect.asVoid))
  }))

/**
 * The MCP registrations: the catalog tools and the toolsets the options name, and with `loader` the toolsets it is
 * asked for, registered then. Each request needs a `Transport` (the caller's credential): provide it with MCP
 * middleware (`Server.transportMiddleware`, or the HTTP endpoint's own), which may also give `CurrentSession` where the
 * request carries none (stdio's process-wide session).
 */
export const layer = (input: Options, loader?: ToolsetLoader) =>
  Layer.unwrap(Effect.map(decodeOptions(input), (options) => {
    const settings: Invocation.Settings = { readOnly: options.readOnly ?? false }
    const catalog = McpServer.toolkit(CatalogToolkit).pipe(Layer.provide(CatalogToolkit.toLayer(catalogHandlers(settings))))
    const later = loader === undefined ? Layer.empty : installLoader(loader, settings)
    return Layer.mergeAll(catalog, toolsetsLayer(options.toolsets ?? [], settings), later).pipe(
      Layer.provide(Confirmations.layer(options.confirmationKey)),
      Layer.provide(sessionMiddleware.layer)
    )
  }))
