/**
 * What a request presents as its credential, read the same way by every scheme of the server (sessions and API keys
 * in identity/Authentication.ts, worker tokens in workers/Authentication.ts), and the 401 each refusal answers.
 */
import { type Forbidden, Unauthorized, type UnauthorizedReason } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"

/**
 * Refusals share one value per reason: an API-key request first fails the bearer scheme (the platform tries it
 * first), and a fresh error would capture a stack trace on every such request for nothing. Their body and challenge
 * are the schema's (`Unauthorized.because`), answered by platform/HttpErrors.ts.
 */
const refusals = new Map<UnauthorizedReason, Unauthorized>()
export const unauthorized = (reason: UnauthorizedReason): Unauthorized => {
  let found = refusals.get(reason)
  if (found === undefined) refusals.set(reason, found = Unauthorized.because(reason))
  return found
}

/**
 * The bearer token a request presents, or why it presents none: no `Authorization` header (`credentials_missing`),
 * or one that is not `Bearer <token>` (`credentials_malformed`). The platform's bearer scheme drops the header's
 * first 7 characters whatever they are: the scheme is checked here, so only a `Bearer` authorization is ever read as
 * a token. What every bearer scheme of the server (sessions, worker tokens) reads its token with.
 */
export const presentedBearer = (
  request: HttpServerRequest.HttpServerRequest,
  token: Redacted.Redacted
): Effect.Effect<string, Unauthorized> => {
  const header = request.headers["authorization"]
  if (header === undefined) return Effect.fail(unauthorized("credentials_missing"))
  if (!/^bearer /i.test(header)) return Effect.fail(unauthorized("credentials_malformed"))
  const value = Redacted.value(token).trim()
  return value === "" ? Effect.fail(unauthorized("credentials_malformed")) : Effect.succeed(value)
}

/**
 * What `OptionalAuthentication` refused, provided to the endpoint it ran without a caller when a credential was sent
 * and refused: an endpoint that needs a caller after all answers with it (say an expired session accepting an
 * invitation), not as if none had been sent. A credential the request narrowed to reads and sent with a write is
 * refused with 403 `read_only_credential`: the endpoint answers that, whatever else the request carries.
 */
export class RefusedCredential extends Context.Service<RefusedCredential, Unauthorized | Forbidden>()("@orgplane/server/platform/PresentedCredential") {}
