/**
 * The saved OpenAPI document (`test/fixtures/openapi.json`), the contract clients are generated from: Api.test.ts
 * holds the generated document equal to it, and `pnpm openapi:fixture` writes it again when the API changes on
 * purpose. The other tests read its components and examples from here.
 */
import * as Fs from "node:fs"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
export type JsonObject = { readonly [key: string]: Json }

export const isJsonObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Where the saved document is. */
export const savedDocumentUrl = new URL("../fixtures/openapi.json", import.meta.url)

/** The saved document. */
export const savedDocument: JsonObject = JSON.parse(Fs.readFileSync(savedDocumentUrl, "utf8"))

/** `value`'s member `key` when it is an object, else an empty one. */
export const objectAt = (value: Json | undefined, key: string): JsonObject => {
  const member = isJsonObject(value) ? value[key] : undefined
  return isJsonObject(member) ? member : {}
}

/** The saved document's `components.schemas`. */
export const components = (): JsonObject => objectAt(objectAt(savedDocument, "components"), "schemas")

/** The saved document's component `name` (throws when it has none: a test names only those it has). */
export const component = (name: string): Json => {
  const found = components()[name]
  if (found === undefined) throw new Error(`no component ${name} in the saved document`)
  return found
}

/** An example the document gives, where (`components.schemas.Team`, `POST /v1/teams 201 application/json`…). */
export interface DocumentExample {
  readonly at: string
  readonly schema: Json | undefined
  readonly value: Json
}

/**
 * Every `examples` value the saved document gives: the components' own, and the request and response examples
 * (Example Objects' `value`s), by where they are.
 */
export const documentExamples = (): ReadonlyArray<DocumentExample> => {
  if (allExamples !== undefined) return allExamples
  const out: Array<DocumentExample> = []
  for (const [name, schema] of Object.entries(components())) {
    const examples = isJsonObject(schema) ? schema["examples"] : undefined
    if (Array.isArray(examples)) {
      for (const value of examples) out.push({ at: `components.schemas.${name}`, schema: { $ref: `#/components/schemas/${name}` }, value })
    }
  }
  const media = (at: string, content: Json | undefined) => {
    for (const [type, entry] of Object.entries(isJsonObject(content) ? content : {})) {
      if (!isJsonObject(entry) || !isJsonObject(entry["examples"])) continue
      for (const example of Object.values(entry["examples"])) {
        if (isJsonObject(example) && example["value"] !== undefined) out.push({ at: `${at} ${type}`, schema: entry["schema"], value: example["value"] })
      }
    }
  }
  for (const [path, item] of Object.entries(objectAt(savedDocument, "paths"))) {
    for (const [method, operation] of Object.entries(isJsonObject(item) ? item : {})) {
      if (!isJsonObject(operation)) continue
      const body = operation["requestBody"]
      if (isJsonObject(body)) media(`${method.toUpperCase()} ${path} request`, body["content"])
      for (const [status, response] of Object.entries(objectAt(operation, "responses"))) {
        if (isJsonObject(response)) media(`${method.toUpperCase()} ${path} ${status}`, response["content"])
      }
    }
  }
  allExamples = out
  return out
}
let allExamples: ReadonlyArray<DocumentExample> | undefined

/** The examples the document gives for values of component `name` (its own and every request or response of it). */
export const examplesOfComponent = (name: string): Array<Json> =>
  documentExamples().flatMap(({ schema, value }) =>
    isJsonObject(schema) && schema["$ref"] === `#/components/schemas/${name}` ? [value] : []
  )

/**
 * The document's examples of an operation's request body or answer, whatever the media type, inline ones too
 * (`POST /v1/config-objects request`, `... 201`).
 */
export const operationExamples = (at: string): Array<Json> =>
  documentExamples().flatMap((example) => example.at.startsWith(`${at} `) ? [example.value] : [])

/** The document's JSON examples of the request or response body at `at` (`POST /v1/invitations request`, `... 201`). */
export const examplesAt = (at: string): Array<Json> =>
  documentExamples().flatMap((example) => example.at === `${at} application/json` ? [example.value] : [])

/** The member of `document` (any JSON value) at `keys`, if any. */
export const memberAt = (document: unknown, ...keys: ReadonlyArray<string>): Json | undefined => {
  const json: Json = JSON.parse(JSON.stringify(document))
  return keys.reduce<Json | undefined>((node, key) => (isJsonObject(node) ? node[key] : undefined), json)
}

/** `value`'s member `key` and the object without it. */
export const splitKey = (value: Json, key: string): { readonly value: Json | undefined; readonly rest: Json } => {
  if (!isJsonObject(value)) return { value: undefined, rest: value }
  const { [key]: member, ...rest } = value
  return { value: member, rest }
}

/** `value` (an object) with member `key` set to `member`. */
export const withMember = (value: Json, key: string, member: Json): Json =>
  isJsonObject(value) ? { ...value, [key]: member } : value
