/**
 * What the MCP area's differential tests (MCP connections, authorization, discovery and tools, capabilities, LLM
 * providers, templates) share beside `differential.ts`: request bodies decoded as the API decodes them, and a JSON
 * Schema's members edited where a real difference is written down.
 */
import { expect } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { NO_NUL_PATTERN, requestBody } from "../src/Common.js"
import { decode3, encode3, encode4, type Json, type Outcome } from "./differential.js"
import type { Effect3 } from "./effect3.js"

// Effect 4 reads parse options from the API (`HttpApi.PayloadParseOptions`, Common's `requestBody`), not from a schema
// (T1), where Effect 3's request structs carried them: a body with a member the API does not know is refused by both
// only so.

/** Decoding `input` with the port as a request body: the value, or the text. */
export const decodeBody = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): Outcome => {
  const exit = Schema.decodeUnknownExit(schema)(input, requestBody)
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: String(exit.cause) }
}

/** Why `schema` refuses `input` as a request body (empty when it takes it). */
export const bodyRefusal = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): string => {
  const outcome = decodeBody(schema, input)
  return outcome.ok ? "" : outcome.message
}

/** `sameOn` for a request body: the port decoded with the API's payload options, the original with its own. */
export const sameOnBody = <A, I>(port: Schema.Codec<A, I>, original: Effect3, inputs: ReadonlyArray<unknown>) => {
  let taken = 0
  for (const input of inputs) {
    const ported = decodeBody(port, input)
    const expected = decode3(original, input)
    expect(ported.ok, JSON.stringify(input)).toBe(expected.ok)
    if (ported.ok && expected.ok) {
      taken++
      expect(encode4(port, ported.value)).toEqual(encode3(original, expected.value))
    }
  }
  expect(taken).toBeGreaterThan(0)
  expect(taken).toBeLessThan(inputs.length)
}

const isObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `schema` with its member at `path` (names through `properties`, numbers through `anyOf`; none: itself) as `f` makes it. */
export const updateMember = (schema: Json, path: ReadonlyArray<string | number>, f: (member: Json) => Json): Json => {
  const [step, ...rest] = path
  if (step === undefined) return f(schema)
  if (!isObject(schema)) throw new Error(`no member ${path.join(".")}`)
  if (typeof step === "number") {
    const members = schema["anyOf"]
    if (!Array.isArray(members) || members[step] === undefined) throw new Error(`no anyOf member ${step}`)
    return { ...schema, anyOf: members.map((each, index) => index === step ? updateMember(each, rest, f) : each) }
  }
  const properties = schema["properties"]
  const member = isObject(properties) ? properties[step] : undefined
  if (!isObject(properties) || member === undefined) throw new Error(`no member ${step}`)
  return { ...schema, properties: { ...properties, [step]: updateMember(member, rest, f) } }
}

/**
 * `schema` with `keywords` on its member at `path`, which the port's JSON Schema leaves out: for a difference written
 * down, put back to compare the rest.
 */
export const addToMember = (schema: Json, path: ReadonlyArray<string | number>, keywords: { readonly [key: string]: Json }): Json =>
  updateMember(schema, path, (member) => {
    if (!isObject(member)) throw new Error(`no object at ${path.join(".")}`)
    for (const key of Object.keys(keywords)) expect(member[key], `the port has ${key}`).toBeUndefined()
    return { ...member, ...keywords }
  })

/** `schema` with its member at `path` `from` (as the port writes it, checked) replaced by `to` (as the document has it). */
export const replaceMember = (schema: Json, path: ReadonlyArray<string | number>, from: Json, to: Json): Json =>
  updateMember(schema, path, (member) => {
    expect(member, path.join(".")).toEqual(from)
    return to
  })

/** `schema` with `description` on its member at `path`, which the port leaves undescribed. */
export const describeMember = (schema: Json, path: ReadonlyArray<string | number>, description: string): Json =>
  addToMember(schema, path, { description })

/**
 * `schema` with the request guard's NUL rule on its string member at `path`: the document's own step (Api.ts, kept by
 * the port of the API) adds it to each request string of a named request body that does not exclude NUL already.
 */
export const withNulRule = (schema: Json, path: ReadonlyArray<string | number>): Json => addToMember(schema, path, { pattern: NO_NUL_PATTERN })

/** `schema` without each `description` that is `text` (there is one at least): for a description the port adds. */
export const withoutDescription = (schema: Json, text: string): Json => {
  const member = `"description":${JSON.stringify(text)}`
  const json = JSON.stringify(schema)
  expect(json).toContain(member)
  return JSON.parse(json.replaceAll(`${member},`, "").replaceAll(`,${member}`, ""))
}

/** An operation's view (`operationView`) with its JSON request body's schema as `f` makes it. */
export const atBody = (operation: Json, f: (body: Json) => Json): Json => {
  const requestBody = isObject(operation) ? operation["requestBody"] : undefined
  const content = isObject(requestBody) ? requestBody["content"] : undefined
  const body = isObject(content) ? content["application/json"] : undefined
  if (!isObject(operation) || !isObject(requestBody) || !isObject(content) || body === undefined) throw new Error("no JSON request body")
  return { ...operation, requestBody: { ...requestBody, content: { ...content, "application/json": f(body) } } }
}
