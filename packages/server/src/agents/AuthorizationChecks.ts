/**
 * `POST /v1/authorization-checks`: the API's dry authorization asked over HTTP, whether MCP is on or not (an
 * `orgplane mcp serve` asks it of any server before it asks the person to confirm a destructive call). The body names
 * an operation a person's credential calls and its request (`AuthorizationCheckRequest`); the request is run in
 * process with the check's own credential, channel, read-only narrowing, address and user agent, its handler standing
 * aside for the operation's check (platform/AuthorizationCheck.ts). The answer, with `Orgplane-Authorization-Check`:
 * 204 `authorized` (nothing ran), or `refused` with the status and body the request itself would get (its 401, 403,
 * 404 or 400), the denial recorded in the audit log as the request's would be. A body that is no such request is 400.
 */
import {
  Api,
  authorizationCheckHeader,
  authorizationCheckPath,
  AuthorizationCheckRequest,
  channelHeader,
  InvalidRequest,
  InvalidRequestResponse,
  invalidRequestDetails,
  operationsOf,
  requestIssuesOf
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as InProcessTransport from "./InProcessTransport.js"

/** The route, for the request edge's table. */
export const routes: ReadonlyArray<readonly [method: string, path: `/${string}`]> = [["POST", authorizationCheckPath]]

const encodeInvalidRequest = Schema.encodeSync(InvalidRequestResponse)

const refused = (status: number, body: unknown, headers: Readonly<Record<string, string>> = {}) =>
  HttpServerResponse.jsonUnsafe(body ?? null, { status, headers: { ...headers, [authorizationCheckHeader]: "refused" } })

const invalid = (error: InvalidRequest) => refused(400, encodeInvalidRequest(error))

/** The operations a person's credential calls, by id: the only ones a check takes. */
const checkable = new Set(operationsOf(Api).filter((operation) => operation.credential === "member").map((operation) => operation.id))

const check = (inProcess: InProcessTransport.InProcess) =>
  Effect.fn("AuthorizationChecks.check")(function*(request: HttpServerRequest.HttpServerRequest) {
    const asked = yield* HttpServerRequest.schemaBodyJson(AuthorizationCheckRequest).pipe(Effect.result)
    if (asked._tag === "Failure") {
      const failure = asked.failure
      return invalid(
        failure._tag === "SchemaError"
          ? new InvalidRequest({ details: invalidRequestDetails(requestIssuesOf(failure.issue)) })
          : InvalidRequest.field([], "The request body is not valid JSON.")
      )
    }
    const { body, method, operation, path, query } = asked.success
    if (!checkable.has(operation)) return invalid(InvalidRequest.field(["operation"], `${operation} is no operation a person's credential calls.`))
    const channel = request.headers[channelHeader]
    const answer = yield* inProcess.authorize(
      InProcessTransport.callerOf(request),
      { operation, method, path, query: query ?? {}, headers: channel === undefined ? {} : { [channelHeader]: channel }, body }
    ).pipe(Effect.result)
    // The path reaches another operation's route, or none: the request would not be sent (Transport.urlOf).
    if (answer._tag === "Failure") return invalid(InvalidRequest.field(["path"], answer.failure.message))
    const { body: refusal, headers, status } = answer.success
    if (headers[authorizationCheckHeader] === "authorized") return HttpServerResponse.empty({ status, headers: { [authorizationCheckHeader]: "authorized" } })
    const challenge = headers["www-authenticate"]
    return refused(status, refusal, challenge === undefined ? {} : { "www-authenticate": challenge })
  })

/** The route, on whatever the server serves. */
export const layer: Layer.Layer<never, never, HttpRouter.HttpRouter> = Layer.unwrap(Effect.map(
  InProcessTransport.make,
  (inProcess) => HttpRouter.add("POST", authorizationCheckPath, check(inProcess))
))
