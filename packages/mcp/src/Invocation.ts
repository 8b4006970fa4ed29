/**
 * Running one operation for an MCP tool call: the arguments split into path parameters, query and body by the
 * operation's layout (a name it does not take is refused, never ignored; a path argument its parameter's schema
 * refuses is refused before anything is sent), the channel header, an idempotency key for every operation that takes
 * one, the confirmation rule for destructive operations (the person asked through the client where it can ask its user,
 * `elicitation/create`; a single-use token elsewhere), and the API's answer as the tool's result or error.
 * `call_operation` and every toolset tool run through here.
 */
import {
  authorizationCheckHeader,
  authorizationCheckPath,
  formatPath,
  invalidRequestDetails,
  type Operation,
  requestIssuesOf
} from "@orgplane/schema"
import * as McpSchema from "effect/ai/McpSchema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Caller from "./Caller.js"
import * as Catalog from "./Catalog.js"
import { type Binding, canonicalJson, confirmationTtlMillis, Confirmations, CurrentSession } from "./Confirmation.js"
import { channelHeader, type OperationResponse, readOnlyHeader, Transport } from "./Transport.js"

/** The result of a call: the API's status and JSON body. */
export const CallResult = Schema.Struct({
  status: Schema.Int,
  body: Schema.Unknown
})
export type CallResult = typeof CallResult.Type

/**
 * A tool error: what went wrong, and with an API error its `status` and error `body`; a destructive call left
 * unexecuted carries its `confirmation`; an unknown argument, the names the operation `takes`.
 */
export const ToolFailure = Schema.Struct({
  message: Schema.String,
  status: Schema.optionalKey(Schema.Number),
  body: Schema.optionalKey(Schema.Unknown),
  confirmation: Schema.optionalKey(Schema.String),
  takes: Schema.optionalKey(Schema.Array(Schema.String))
})
export type ToolFailure = typeof ToolFailure.Type

/** The most characters of an answer a tool returns. */
export const maxAnswerCharacters = 40_000

/** The page size a paged operation gets when the call names none. */
export const defaultPageSize = 20

export interface CallInput {
  readonly arguments?: Readonly<Record<string, unknown>> | undefined
  readonly idempotencyKey?: string | undefined
  readonly confirmation?: string | undefined
}

export interface Settings {
  /** Every request carries `Orgplane-Read-Only: true`. */
  readonly readOnly: boolean
}

/** The headers every request of the MCP server carries: the channel, and the read-only narrowing when set. */
export const baseHeaders = (settings: Settings): Record<string, string> =>
  settings.readOnly ? { [channelHeader]: "mcp", [readOnlyHeader]: "true" } : { [channelHeader]: "mcp" }

const text = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

const fail = (failure: ToolFailure) => Effect.fail(failure)

/** The error message of an API error body (`{ error, message }`), or a sentence naming the status. */
const messageOf = (status: number, body: unknown): string =>
  typeof body === "object" && body !== null && "message" in body && typeof body.message === "string"
    ? `The API answered ${status}: ${body.message}`
    : `The API answered ${status}.`

/**
 * The operation's path with its arguments, each decoded by the parameter's own schema first (the server's: a value it
 * refuses with 400, `..` where a team id belongs, is refused here and nothing is sent), then escaped as one segment.
 * The transport checks the URL still reaches this operation (`Transport.urlOf`).
 */
const pathOf = (operation: Operation, layout: Catalog.Layout, args: Readonly<Record<string, unknown>>) => {
  const values = Object.fromEntries(layout.path.map((name) => [name, text(args[name])]))
  const decoded = operation.params === undefined ? Effect.void : Schema.decodeUnknownEffect(operation.params)(values, { errors: "all" })
  return decoded.pipe(
    Effect.mapError((error): ToolFailure => {
      const details = invalidRequestDetails(requestIssuesOf(error.issue))
      return {
        message: `Not sent: ${details.map((detail) => `${formatPath(detail.path)}: ${detail.message}`).join("; ")}.`,
        takes: layout.names
      }
    }),
    Effect.as(layout.path.reduce((path, name) => path.replace(`:${name}`, encodeURIComponent(values[name] ?? "")), operation.path))
  )
}

/**
 * Why a destructive call gets no confirmation: the API's refusal of it (the status and body its dry authorization
 * answered, what the call itself would get), or a server that does not check (an answer without the check's header).
 */
const refusalOf = (operation: Operation, verdict: OperationResponse): ToolFailure =>
  verdict.headers[authorizationCheckHeader] === "refused"
    ? { message: `Not executed: ${messageOf(verdict.status, verdict.body)}`, status: verdict.status, body: verdict.body ?? null }
    : {
      message:
        `Not executed: ${operation.id} is confirmed only once the API authorizes it, and this server does not check that (POST ${authorizationCheckPath} answered ${verdict.status}): update the server.`
    }

/**
 * Who a confirmation is given to (Confirmation.ts `Binding`): the caller as `GET /v1/me` names them, and the MCP
 * session. A server that does not name the credential gives none: nothing destructive runs through it.
 */
const bindingOf = Effect.fnUntraced(function*(settings: Settings) {
  const caller = yield* Caller.read(settings).pipe(
    Effect.catchTags({
      CallerError: (error) => fail({ message: error.message, status: error.status, body: error.body }),
      TransportError: (error) => fail({ message: error.message })
    })
  )
  if (caller.credentialId === null) {
    return yield* fail({ message: "Not executed: GET /v1/me does not name the credential, which a confirmation is given to: update the server." })
  }
  return { userId: caller.userId, credentialId: caller.credentialId, session: yield* CurrentSession } satisfies Binding
})

/** What the person said when asked through the client (elicitation): run it, not, or nothing in time. */
type Consent = "given" | "refused" | "unanswered"

/**
 * Asks the person, not the agent, whether a destructive call runs: an `elicitation/create` form to the MCP client of
 * this request, which shows it to its user. None (the token's way, then) where the client declared no form
 * elicitation, the request has no client to ask (a sessionless protocol), or asking failed. The answer never passes
 * through the agent, so an agent cannot give consent in the person's stead. The person has as long as a token lasts
 * (five minutes): the tool call, and its request, wait no longer.
 */
const askPerson = Effect.fnUntraced(function*(operation: Operation, path: string, args: Readonly<Record<string, unknown>>) {
  const serverClient = yield* Effect.serviceOption(McpSchema.McpServerClient)
  if (Option.isNone(serverClient)) return Option.none<Consent>()
  const elicitation = serverClient.value.clientCapabilities.elicitation
  // `elicitation: {}` is the form mode of clients older than the URL mode.
  if (elicitation === undefined || (elicitation.form === undefined && elicitation.url !== undefined)) return Option.none<Consent>()
  const request = new McpSchema.ElicitRequestFormParams({
    mode: "form",
    message:
      `An agent asks to run ${operation.id} (${operation.summary}): ${operation.method} ${path} with ${canonicalJson(args)}. It takes something away that cannot be given back. Run it?`,
    requestedSchema: {
      type: "object",
      properties: { confirm: new McpSchema.ElicitationBoolean({ type: "boolean", title: `Run ${operation.id}`, default: false }) },
      required: ["confirm"]
    }
  })
  return yield* serverClient.value.getClient.pipe(
    Effect.flatMap((client) => client.elicit(request)),
    Effect.map((answer): Option.Option<Consent> =>
      Option.some(answer.action === "accept" && answer.content?.confirm === true ? "given" : "refused")
    ),
    Effect.catch(() => Effect.succeed(Option.none<Consent>())),
    Effect.timeoutOrElse({ duration: confirmationTtlMillis, orElse: () => Effect.succeed(Option.some<Consent>("unanswered")) }),
    Effect.scoped
  )
})

/** Runs `operation` with `input` for the caller behind the Transport. */
export const call = Effect.fn("Invocation.call")(function*(operation: Operation, input: CallInput, settings: Settings) {
  const confirmations = yield* Confirmations
  const transport = yield* Transport
  const args = input.arguments ?? {}
  const layout = Catalog.layoutOf(operation)
  const unknown = Object.keys(args).filter((name) => !layout.names.includes(name))
  if (unknown.length > 0) {
    return yield* fail({
      message: `${operation.id} does not take ${unknown.join(", ")}; it takes ${layout.names.length === 0 ? "no arguments" : layout.names.join(", ")}.`,
      takes: layout.names
    })
  }
  const missing = layout.path.filter((name) => args[name] === undefined || args[name] === null || text(args[name]) === "")
  if (missing.length > 0) return yield* fail({ message: `${operation.id} needs ${missing.join(", ")}.`, takes: layout.names })
  const path = yield* pathOf(operation, layout, args)

  const query: Record<string, string | ReadonlyArray<string>> = {}
  for (const name of layout.query) {
    const value = args[name]
    if (value === undefined || value === null) continue
    query[name] = Array.isArray(value) ? value.map(text) : text(value)
  }
  if (operation.paged && query.limit === undefined) query.limit = String(defaultPageSize)
  let body: unknown = undefined
  if (layout.wholeBody) body = args.body
  else if (operation.takesBody) {
    body = Object.fromEntries(layout.bodyMembers.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]))
  }
  const request = { operation: operation.id, method: operation.method, path, query, headers: baseHeaders(settings), body }

  let idempotencyKey = input.idempotencyKey ?? crypto.randomUUID()
  if (operation.destructive) {
    if (input.confirmation === undefined) {
      // The API decides first, without running it: a call it refuses the caller is answered with its own refusal (and
      // its denial in the audit log), and the person is never asked for it nor a confirmation issued.
      const verdict = yield* transport.authorize(request).pipe(Effect.catchTag("TransportError", (error) => fail({ message: error.message })))
      if (verdict.headers[authorizationCheckHeader] !== "authorized" || verdict.status !== 204) return yield* fail(refusalOf(operation, verdict))
      // Where the client can ask its user, the person confirms there and the call runs now; elsewhere a token.
      const consent = yield* askPerson(operation, path, args)
      if (Option.isSome(consent) && consent.value !== "given") {
        return yield* fail({
          message: consent.value === "refused"
            ? `Not executed: the person you act for did not confirm ${operation.id}.`
            : `Not executed: the person you act for did not answer within 5 minutes whether to run ${operation.id}.`
        })
      }
      if (Option.isNone(consent)) {
        const confirmation = yield* confirmations.issue(yield* bindingOf(settings), operation.id, args)
        return yield* fail({
          message:
            `Not executed: ${operation.id} (${operation.summary}) takes something away that cannot be given back. Confirm with the person you act for, then call again with the same name and arguments and this confirmation, within 5 minutes.`,
          confirmation
        })
      }
    } else {
      const redeemed = yield* confirmations.redeem(input.confirmation, yield* bindingOf(settings), operation.id, args)
      if (Result.isFailure(redeemed)) return yield* fail({ message: `Not executed: ${redeemed.failure}` })
      idempotencyKey = `mcp-confirmed-${redeemed.success}`
    }
  }
  const headers = operation.takesIdempotencyKey ? { ...request.headers, "idempotency-key": idempotencyKey } : request.headers

  const response = yield* transport.send({ ...request, headers }).pipe(
    Effect.catchTag("TransportError", (error) => fail({ message: error.message }))
  )
  // A read answered too long for an agent to hold is refused (it changed nothing: ask again smaller); a write's answer
  // is returned whatever its size, since the write is done.
  const size = JSON.stringify(response.body ?? null).length
  if (operation.readOnly && size > maxAnswerCharacters) {
    return yield* fail({
      message:
        `The answer of ${operation.id} is ${size} characters, more than the ${maxAnswerCharacters} a tool returns: ask for a smaller page (limit) or use a narrower operation.`,
      status: response.status
    })
  }
  if (response.status >= 200 && response.status < 300) return { status: response.status, body: response.body ?? null } satisfies CallResult
  return yield* fail({ message: messageOf(response.status, response.body), status: response.status, body: response.body ?? null })
})
