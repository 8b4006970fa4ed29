/**
 * A provider's model list, read with its stored credential through the outbound guard (a user-supplied
 * destination: the base URL is the organization's), for the test action: `GET {baseUrl}/models` with a Bearer token
 * (openai-compatible), `GET {baseUrl}/v1/models` with `x-api-key` (or a Bearer OAuth token) and `anthropic-version`
 * (anthropic, following its pages), the extra headers on both, no redirects (the credential is meant for that URL).
 *
 * Whatever goes wrong is a 502 `llm_provider_api_error` whose message quotes the provider's status and the start of
 * its answer with every secret of the request scrubbed out: providers echo keys back ("Incorrect API key provided:
 * sk-...").
 */
import { type LlmApiStyle, LlmProviderApiError } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Schema from "effect/Schema"
import type { OutboundError, OutboundService } from "../platform/Outbound.js"

/** How long one request of the test may take, and the largest answer read (a long model list is ~100 KB). */
export const TIMEOUT = Duration.seconds(15)
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024
/** Anthropic's list is paged: at most this many pages are read. */
const MAX_PAGES = 20
/** How much of an answer a message quotes. */
const EXCERPT_CHARS = 300
export const ANTHROPIC_VERSION = "2023-06-01"

export interface Target {
  readonly apiStyle: LlmApiStyle
  readonly baseUrl: string
  readonly credential: { readonly type: "api_key" | "oauth"; readonly secret: string }
  readonly headers: Readonly<Record<string, string>>
}

/** `text` with every secret replaced: the credential and each extra header's value. */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets.filter((secret) => secret.length >= 4).reduce((scrubbed, secret) => scrubbed.split(secret).join("[redacted]"), text)

const excerpt = (body: Uint8Array, secrets: ReadonlyArray<string>) => {
  // Scrub before cutting: a cut could leave the start of a secret that no longer matches it whole.
  const text = scrub(new TextDecoder().decode(body.subarray(0, 64 * 1024)), secrets).replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text
}

const ModelList = Schema.Struct({
  data: Schema.Array(Schema.Struct({ id: Schema.String })),
  has_more: Schema.optional(Schema.Boolean),
  last_id: Schema.optional(Schema.NullOr(Schema.String))
})

const failure = (message: string, retryable: boolean, upstreamStatus?: number) =>
  new LlmProviderApiError({ message, retryable, ...(upstreamStatus === undefined ? {} : { upstreamStatus }) })

const fromOutbound = (error: OutboundError): LlmProviderApiError => {
  switch (error.reason) {
    case "blocked":
      return failure(`Listing the provider's models failed: the outbound guard refused the address (${error.message}).`, false)
    case "timeout":
      return failure(`Listing the provider's models failed: the provider did not answer within ${Duration.format(TIMEOUT)}.`, true)
    case "too_large":
      return failure(`Listing the provider's models failed: the provider answered more than ${MAX_ANSWER_BYTES} bytes.`, false)
    case "network":
      return failure(`Listing the provider's models failed: the provider could not be reached (${error.code ?? error.message}).`, true)
  }
}

/** The headers of one request to the provider, the credential as its API style sends it. */
export const requestHeaders = (target: Target): Record<string, string> => {
  const { secret, type } = target.credential
  const auth: Record<string, string> = target.apiStyle === "anthropic"
    ? { ...(type === "api_key" ? { "x-api-key": secret } : { authorization: `Bearer ${secret}` }), "anthropic-version": ANTHROPIC_VERSION }
    : { authorization: `Bearer ${secret}` }
  return { ...target.headers, accept: "application/json", ...auth }
}

/** The ids of the models the provider lists. */
export const listModels = Effect.fn("ProviderModels.listModels")(function*(outbound: OutboundService, target: Target): Effect.fn.Return<ReadonlyArray<string>, LlmProviderApiError> {
  const secrets = [target.credential.secret, ...Object.values(target.headers)]
  const headers = requestHeaders(target)
  const ids: Array<string> = []
  let after: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = target.apiStyle === "anthropic"
      ? `${target.baseUrl}/v1/models?limit=1000${after === undefined ? "" : `&after_id=${encodeURIComponent(after)}`}`
      : `${target.baseUrl}/models`
    const answer = yield* outbound.execute(HttpClientRequest.get(url).pipe(HttpClientRequest.setHeaders(headers)), {
      destination: "user",
      timeout: TIMEOUT,
      maxBodyBytes: MAX_ANSWER_BYTES,
      followRedirects: false
    }).pipe(Effect.mapError(fromOutbound))
    if (answer.status < 200 || answer.status > 299) {
      const quoted = excerpt(answer.body, secrets)
      return yield* Effect.fail(failure(
        `Listing the provider's models failed: ${answer.status}${quoted === "" ? "" : ` ${quoted}`}`,
        answer.status === 429 || answer.status >= 500,
        answer.status
      ))
    }
    const parsed = yield* Effect.try(() => JSON.parse(new TextDecoder().decode(answer.body)) as unknown).pipe(
      Effect.flatMap(Schema.decodeUnknownEffect(ModelList)),
      Effect.mapError(() =>
        failure(`Listing the provider's models failed: the provider answered ${answer.status} with something that is not a model list ({"data": [{"id": ...}]}).`, false, answer.status)
      )
    )
    ids.push(...parsed.data.map((model) => model.id))
    if (target.apiStyle !== "anthropic" || parsed.has_more !== true || !parsed.last_id) break
    after = parsed.last_id
  }
  return ids
})
