/**
 * Decoding and encoding the API's schemas as the server and the client do, asserted: what a schema takes (and encodes
 * back), what it refuses, and examples that make the round trip unchanged. A request body is read with the API's
 * parse options (Common's `requestBody`: a member the body does not declare is refused), as the server reads it.
 */
import { expect } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { requestBody } from "../../src/Common.js"

/** Decoding or encoding a value: the result, or the text. */
export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

export const decode = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): Outcome => {
  const exit = Schema.decodeUnknownExit(schema)(input)
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: String(exit.cause) }
}

export const encode = (schema: Schema.ConstraintEncoder<unknown>, value: unknown): Outcome => {
  const exit = Schema.encodeUnknownExit(schema)(value)
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: String(exit.cause) }
}

/** The text of decoding `input`, which `schema` refuses. */
export const refusal = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): string => {
  const outcome = decode(schema, input)
  if (outcome.ok) throw new Error(`${JSON.stringify(input)} was taken`)
  return outcome.message
}

/** `schema` takes each input, and encodes what it decoded. */
export const takes = <A, I>(schema: Schema.Codec<A, I>, inputs: ReadonlyArray<unknown>) => {
  expect(inputs.length).toBeGreaterThan(0)
  for (const input of inputs) {
    const decoded = decode(schema, input)
    expect(decoded, JSON.stringify(input)).toMatchObject({ ok: true })
    if (decoded.ok) expect(encode(schema, decoded.value), JSON.stringify(input)).toMatchObject({ ok: true })
  }
}

/** `schema` refuses each input. */
export const refuses = <A, I>(schema: Schema.Codec<A, I>, inputs: ReadonlyArray<unknown>) => {
  expect(inputs.length).toBeGreaterThan(0)
  for (const input of inputs) expect(decode(schema, input).ok, JSON.stringify(input)).toBe(false)
}

/** Each example (a wire body, as the document shows it) decodes, and encodes back unchanged. */
export const roundTrips = <A, I>(schema: Schema.Codec<A, I>, examples: ReadonlyArray<unknown>) => {
  expect(examples.length).toBeGreaterThan(0)
  for (const example of examples) {
    const decoded = decode(schema, example)
    expect(decoded, JSON.stringify(example)).toMatchObject({ ok: true })
    if (decoded.ok) expect(encode(schema, decoded.value)).toEqual({ ok: true, value: example })
  }
}

/** Decoding `input` as a request body, with the API's parse options. */
export const decodeBody = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): Outcome => {
  const exit = Schema.decodeUnknownExit(schema)(input, requestBody)
  return Exit.isSuccess(exit) ? { ok: true, value: exit.value } : { ok: false, message: String(exit.cause) }
}

/** Why `schema` refuses `input` as a request body (empty when it takes it). */
export const bodyRefusal = (schema: Schema.ConstraintDecoder<unknown>, input: unknown): string => {
  const outcome = decodeBody(schema, input)
  return outcome.ok ? "" : outcome.message
}

/** `schema` takes each input as a request body, and encodes what it decoded. */
export const takesBody = <A, I>(schema: Schema.Codec<A, I>, inputs: ReadonlyArray<unknown>) => {
  expect(inputs.length).toBeGreaterThan(0)
  for (const input of inputs) {
    const decoded = decodeBody(schema, input)
    expect(decoded, JSON.stringify(input)).toMatchObject({ ok: true })
    if (decoded.ok) expect(encode(schema, decoded.value), JSON.stringify(input)).toMatchObject({ ok: true })
  }
}

/** `schema` refuses each input as a request body. */
export const refusesBody = <A, I>(schema: Schema.Codec<A, I>, inputs: ReadonlyArray<unknown>) => {
  expect(inputs.length).toBeGreaterThan(0)
  for (const input of inputs) expect(decodeBody(schema, input).ok, JSON.stringify(input)).toBe(false)
}
