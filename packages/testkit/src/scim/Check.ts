/**
 * What a conformance check is and what it answers: scim2-tester's `CheckResult` (status, description, data) with a
 * stable id and its tag, plus the assertions the checks share. A check fails by throwing `CheckFailure` (or any
 * error: an exception in a check is a failure, never a pass) and is skipped by returning `skip(reason)`.
 */
import { type Client, describe as describeResponse, type ScimResponse, SCIM_JSON, URN } from "./Client.js"
import type { Discovery } from "./Discovery.js"

export type Tag = "discovery" | "crud" | "patch" | "projection" | "filter" | "etag" | "errors" | "paging"
export const tags: ReadonlyArray<Tag> = ["discovery", "crud", "patch", "projection", "filter", "etag", "errors", "paging"]

export interface CheckResult {
  readonly id: string
  readonly tag: Tag
  readonly status: "passed" | "failed" | "skipped"
  readonly description: string
  /** Why it failed or was skipped; what it saw when it passed (may be empty). */
  readonly detail: string
}

export interface Skip {
  readonly _tag: "Skip"
  readonly reason: string
}
export const skip = (reason: string): Skip => ({ _tag: "Skip", reason })

export interface Check {
  readonly id: string
  readonly description: string
  readonly run: () => Promise<Skip | string | void>
}

/** What every tag module receives: the client, what discovery found, and a unique mark for this run's fixtures. */
export interface Context {
  readonly client: Client
  readonly discovery: Discovery
  /** Lowercase letters and digits, unique per run: fixtures carry it so filters and cleanup find only them. */
  readonly run: string
  /** Registers cleanup to run when the tag's checks are done (fixtures shared by several checks). */
  readonly defer: (cleanup: () => Promise<void>) => void
}

/** A value computed once, on first use (fixtures shared by the checks of one tag). */
export const once = <A>(make: () => Promise<A>): (() => Promise<A>) => {
  let made: Promise<A> | undefined
  return () => (made ??= make())
}

export class CheckFailure extends Error {}

export const fail = (message: string, response?: ScimResponse): never => {
  throw new CheckFailure(response === undefined ? message : `${message}: ${describeResponse(response)}`)
}

export const expectStatus = (response: ScimResponse, ...statuses: ReadonlyArray<number>): unknown => {
  if (!statuses.includes(response.status)) fail(`expected ${statuses.join(" or ")}`, response)
  return response.body
}

/** A JSON object as read from a SCIM body: its attributes are what the server sent, to be checked before use. */
export type ScimObject = Readonly<Record<string, unknown>>

export const isObject = (value: unknown): value is ScimObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** A JSON object, or an empty one (reading an attribute of what is not an object finds nothing). */
export const asObject = (value: unknown): ScimObject => (isObject(value) ? value : {})

/** The array a value is, or an empty one. */
export const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** `expectStatus`, then a JSON object body (a resource, a document). */
export const expectObject = (response: ScimResponse, ...statuses: ReadonlyArray<number>): ScimObject => {
  const body = expectStatus(response, ...statuses)
  if (!isObject(body)) return fail("expected a JSON object body", response)
  return body
}

/** A resource's id as it goes into a path (what the server sent, as text). */
export const idOf = (resource: unknown): string => String(asObject(resource).id)

/** A response that must be `application/scim+json` (RFC 7644 §3.1; charset parameters allowed). */
export const expectScimJson = (response: ScimResponse): void => {
  if (!response.contentType.toLowerCase().startsWith(SCIM_JSON)) fail(`expected content-type ${SCIM_JSON}`, response)
}

/** A SCIM error (RFC 7644 §3.12): the status, the Error schema, status as a string, and the scimType when named. */
export const expectError = (response: ScimResponse, status: number, scimType?: string): void => {
  expectStatus(response, status)
  expectScimJson(response)
  const body = response.body
  if (!isObject(body)) return fail("expected a SCIM error body", response)
  if (!Array.isArray(body.schemas) || !body.schemas.includes(URN.error)) fail(`expected schemas [${URN.error}]`, response)
  if (body.status !== String(status)) fail(`expected "status": "${status}" (a string)`, response)
  if (body.detail !== undefined && typeof body.detail !== "string") fail("expected detail to be a string", response)
  if (scimType !== undefined && body.scimType !== scimType) fail(`expected scimType ${scimType}`, response)
}

/** A ListResponse (RFC 7644 §3.4.2): schemas, integer totalResults, Resources array when any, 1-based startIndex. */
export interface ListResponse {
  readonly totalResults: number
  readonly Resources: ReadonlyArray<ScimObject>
  readonly startIndex?: unknown
  readonly itemsPerPage?: unknown
  readonly [key: string]: unknown
}

export const expectListResponse = (response: ScimResponse): ListResponse => {
  const body = asObject(expectStatus(response, 200))
  expectScimJson(response)
  if (!Array.isArray(body.schemas) || !body.schemas.includes(URN.listResponse)) fail("expected a ListResponse", response)
  const totalResults = body.totalResults
  if (typeof totalResults !== "number" || !Number.isInteger(totalResults)) return fail("expected an integer totalResults", response)
  const resources = body.Resources
  if (resources !== undefined && !Array.isArray(resources)) fail("expected Resources to be an array", response)
  if (totalResults > 0 && resources === undefined && body.itemsPerPage !== 0) fail("totalResults > 0 without Resources", response)
  const items = asArray(resources)
  if (!items.every(isObject)) fail("expected every Resource to be an object", response)
  return { ...body, totalResults, Resources: items.filter(isObject) }
}

export const check = (condition: unknown, message: string, response?: ScimResponse): void => {
  if (!condition) fail(message, response)
}

export const random = (): string => Math.random().toString(36).slice(2, 10)
