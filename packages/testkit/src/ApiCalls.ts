/**
 * The API's operations called over raw HTTP, typed by the API's own schemas: `calls(baseUrl).teams.create({ token,
 * payload })` sends what the test gives (a wire body, not checked before sending) and answers what came back: the
 * status, the headers, the text, and the body typed as the operation's success or error bodies (their encoded, wire
 * form), so a test that misreads an answer fails to compile. `ok(answer, 201)` reads a success, `refusal(answer, 403)`
 * an error body (compare it whole, `toEqual` or `toMatchObject`: the union of an operation's error bodies has no
 * member every one of them has), `invalid(answer)` a 400's `details`; anything the API cannot say (a malformed
 * request on purpose) goes through `Http.request`, whose body `invalid` reads too.
 */
import {
  Api,
  type IdempotencyConflictResponse,
  type IdempotencyKeyReusedResponse,
  InvalidRequestResponse,
  type PayloadTooLargeResponse,
  type RequestHeaderFieldsTooLargeResponse,
  type UnsupportedMediaTypeResponse,
  type UriTooLongResponse
} from "@orgplane/schema"
import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Schema from "effect/Schema"
import * as Http from "./Http.js"

type Groups = typeof Api extends HttpApi.HttpApi<string, infer G> ? G : never

/** The errors every operation may answer (`ApiErrors`, the API's errors-only middleware), as sent. */
export type ApiWideError =
  | (typeof InvalidRequestResponse)["Encoded"]
  | (typeof PayloadTooLargeResponse)["Encoded"]
  | (typeof UriTooLongResponse)["Encoded"]
  | (typeof UnsupportedMediaTypeResponse)["Encoded"]
  | (typeof RequestHeaderFieldsTooLargeResponse)["Encoded"]
  | (typeof IdempotencyConflictResponse)["Encoded"]
  | (typeof IdempotencyKeyReusedResponse)["Encoded"]

/** What a schema of an endpoint puts on the wire (HttpApi wraps its JSON bodies as JSON codecs of the schema). */
type Wire<S> = S extends Schema.toCodecJson<infer Inner> ? Inner["Encoded"] : S extends Schema.Top ? S["Encoded"] : never

/** An endpoint's success bodies, as sent. */
export type SuccessOf<E> = Wire<HttpApiEndpoint.Success<E>>
/** An endpoint's error bodies, as sent: its own and the API-wide ones. */
export type ErrorOf<E> = Wire<HttpApiEndpoint.Error<E>> | ApiWideError

/** What an operation answered. */
export interface Answer<Success, Failure> extends Omit<Http.RawResponse, "body"> {
  /** The parsed JSON body: a success's or an error's (undefined when empty, as a 204's). */
  readonly body: Success | Failure | undefined
  /** The status and body as `ok` and `refusal` read them: for the types only. */
  readonly "~success"?: Success
  readonly "~failure"?: Failure
}

/** Who calls: a session token, an API key, or neither. */
export interface Caller {
  readonly token?: string
  readonly apiKey?: string
}

type Part<Key extends string, S> = [S] extends [never] ? {} : {} extends S ? { readonly [K in Key]?: S } : { readonly [K in Key]: S }

/** A call's request: the path's parameters, the query and the payload as the wire carries them, and headers. */
export type RequestOf<E> =
  & Caller
  & Part<"path", Wire<HttpApiEndpoint.Params<E>>>
  & Part<"query", Wire<HttpApiEndpoint.Query<E>>>
  & Part<"payload", Wire<HttpApiEndpoint.Payload<E>>>
  & { readonly headers?: Readonly<Record<string, string>> }

type Call<E> = (request: RequestOf<E>) => Promise<Answer<SuccessOf<E>, ErrorOf<E>>>

/** Every operation by group and name, as `HttpApiClient` names them. */
export type Calls = {
  readonly [G in Groups as HttpApiGroup.Identifier<G>]: {
    readonly [E in HttpApiGroup.Endpoints<G> as HttpApiEndpoint.Identifier<E>]: Call<E>
  }
}

const queryString = (query: unknown): string => {
  if (typeof query !== "object" || query === null) return ""
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue
    for (const each of Array.isArray(value) ? value : [value]) params.append(name, String(each))
  }
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

const pathOf = (template: string, params: unknown) =>
  template.replace(/:(\w+)/g, (_, name: string) => {
    const value: unknown = typeof params === "object" && params !== null ? Reflect.get(params, name) : undefined
    if (value === undefined) throw new Error(`ApiCalls: ${template} needs the path parameter ${name}`)
    return encodeURIComponent(String(value))
  })

interface Untyped {
  readonly token?: string
  readonly apiKey?: string
  readonly path?: unknown
  readonly query?: unknown
  readonly payload?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

/** The operations of the server at `baseUrl` (a function when the URL is known later, after `beforeAll`). */
export const calls = (baseUrl: string | (() => string)): Calls => {
  const url = typeof baseUrl === "string" ? () => baseUrl : baseUrl
  const groups: Record<string, Record<string, (request: Untyped) => Promise<Http.RawResponse>>> = {}
  for (const group of Object.values(Api.groups)) {
    const endpoints: Record<string, (request: Untyped) => Promise<Http.RawResponse>> = {}
    for (const endpoint of Object.values(group.endpoints)) {
      endpoints[endpoint.identifier] = (request) =>
        Http.request(url(), endpoint.method, `${pathOf(endpoint.path, request.path)}${queryString(request.query)}`, {
          ...(request.token === undefined ? {} : { token: request.token }),
          ...(request.apiKey === undefined ? {} : { apiKey: request.apiKey }),
          ...(request.payload === undefined ? {} : { body: request.payload }),
          ...(request.headers === undefined ? {} : { headers: { ...request.headers } })
        })
    }
    groups[group.identifier] = endpoints
  }
  return groups as Calls
}

/** The success body of an answer that must have `status`; throws, naming the answer, otherwise. */
export const ok = <Success, Failure>(answer: Answer<Success, Failure>, status: number): Success => {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status} ${answer.text}`)
  return answer.body as Success
}

/** The error body of an answer that must have `status` (a refusal); throws, naming the answer, otherwise. */
export const refusal = <Success, Failure>(answer: Answer<Success, Failure>, status: number): Failure => {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status} ${answer.text}`)
  return answer.body as Failure
}

/** The body of a 400 `invalid_request`, every bad member in `details`; throws, naming the answer, otherwise. */
export const invalid = (answer: Pick<Http.RawResponse, "status" | "text"> & { readonly body: unknown }): (typeof InvalidRequestResponse)["Encoded"] => {
  if (answer.status !== 400) throw new Error(`expected 400, got ${answer.status} ${answer.text}`)
  return decodeInvalid(answer.body)
}

const decodeInvalid = Schema.decodeUnknownSync(Schema.toEncoded(InvalidRequestResponse))
