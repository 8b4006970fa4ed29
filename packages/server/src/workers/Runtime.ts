/**
 * The client of worker runtimes: forwards a request to the runtime at an instance's URL through the outbound
 * guard, with the runtime's own credential, no redirects and a bounded time and size, and reads its answer as
 * JSON (text as `{message}`, nothing as null). Every way of not getting an answer is a 502 `worker_runtime_error`.
 */
import { WorkerRuntimeError } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Outbound, type OutboundError } from "../platform/Outbound.js"
import { RuntimeConfig } from "./RuntimeConfig.js"

/** 1 MiB: a runtime's answer to an upgrade is a short status document. */
export const MAX_ANSWER_BYTES = 1024 * 1024

/** Text longer than this (an HTML error page) is cut in `{message}`. */
const MAX_MESSAGE_CHARS = 2000

export interface RuntimeAnswer {
  readonly status: number
  readonly body: unknown
}

/** The runtime's answer as the API returns it: JSON as sent, other text as `{message}`, nothing as null. */
export const readAnswer = (bytes: Uint8Array): unknown => {
  const text = new TextDecoder().decode(bytes)
  if (text.trim() === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return { message: text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text }
  }
}

/** `base` without trailing slashes, then `path`. */
export const endpoint = (base: string, path: string) => `${base.replace(/\/+$/, "")}${path}`

const describe = (error: OutboundError): string => {
  switch (error.reason) {
    case "timeout":
      return `The worker's runtime at ${error.origin} did not answer in time (${error.message}).`
    case "too_large":
      return `The worker's runtime at ${error.origin} answered more than ${MAX_ANSWER_BYTES} bytes.`
    case "blocked":
      return `The worker's runtime at ${error.origin} could not be called: ${error.message}.`
    case "network":
      return `The worker's runtime at ${error.origin} could not be reached: ${error.message}.`
  }
}

const make = Effect.gen(function*() {
  const outbound = yield* Outbound
  const { timeout } = yield* RuntimeConfig

  /** `POST <base><path>` with `body` as JSON and `Authorization: Bearer <credential>`. */
  const post = (base: string, path: string, credential: Redacted.Redacted, body: unknown) =>
    outbound.execute(
      HttpClientRequest.post(endpoint(base, path)).pipe(
        HttpClientRequest.setHeaders({ accept: "application/json", authorization: `Bearer ${Redacted.value(credential)}` }),
        HttpClientRequest.bodyText(JSON.stringify(body), "application/json")
      ),
      // The runtime's URL comes from a worker token its creator handed out, not from the operator: the guard
      // refuses non-public addresses (and plain http) unless ORGPLANE_OUTBOUND_ALLOW_PRIVATE; see the README.
      { timeout, maxBodyBytes: MAX_ANSWER_BYTES, followRedirects: false, destination: "user" }
    ).pipe(
      Effect.map((response): RuntimeAnswer => ({ status: response.status, body: readAnswer(response.body) })),
      Effect.mapError((error) => new WorkerRuntimeError({ message: describe(error) }))
    )

  return {
    upgrade: Effect.fn("Runtime.upgrade")((base: string, credential: Redacted.Redacted, body: unknown) => post(base, "/runtime/upgrade", credential, body))
  } as const
})

export class Runtime extends Context.Service<Runtime>()("@orgplane/server/workers/Runtime", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
