/** The address a request came from, for per-client limits (sign-up, bootstrap, SSO discovery and start). */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { ServerConfig } from "./Config.js"

export const clientAddress = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  const forwarded = settings.trustProxy ? request.headers["x-forwarded-for"]?.split(",")[0]?.trim() : undefined
  return forwarded || Option.getOrElse(request.remoteAddress, () => "unknown")
})
