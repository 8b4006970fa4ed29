/**
 * The served OpenAPI document as the tests read it: the members of the document, its operations and their JSON
 * Schemas that they look at, each optional where the OpenAPI 3.1 and JSON Schema 2020-12 specifications let it be
 * absent, every other member `unknown`. What a test reads through these is what the document must say; a test that
 * checks a member's kind still does so.
 */

/** A JSON Schema (2020-12) of the document: the keywords the tests read. */
export interface JsonSchema {
  readonly [keyword: string]: unknown
  readonly $ref?: string
  readonly $id?: string
  readonly title?: string
  readonly description?: string
  readonly type?: string | ReadonlyArray<string>
  readonly format?: string
  readonly pattern?: string
  readonly enum?: ReadonlyArray<unknown>
  readonly minLength?: number
  readonly maxLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly minItems?: number
  readonly maxItems?: number
  readonly minContains?: number
  readonly maxContains?: number
  readonly minProperties?: number
  readonly maxProperties?: number
  readonly required?: ReadonlyArray<string>
  readonly dependentRequired?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly patternProperties?: Readonly<Record<string, JsonSchema>>
  readonly dependentSchemas?: Readonly<Record<string, JsonSchema>>
  readonly additionalProperties?: JsonSchema | boolean
  readonly items?: JsonSchema | boolean
  readonly prefixItems?: ReadonlyArray<JsonSchema>
  readonly propertyNames?: JsonSchema
  readonly contains?: JsonSchema
  readonly not?: JsonSchema
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly discriminator?: { readonly propertyName: string; readonly mapping?: Readonly<Record<string, string>> }
}

/** An example of a parameter or a media type. */
export interface Example {
  readonly summary?: string
  readonly value?: unknown
}

export interface MediaType {
  readonly schema: JsonSchema
  readonly examples?: Readonly<Record<string, Example>>
}

export interface Parameter {
  readonly name: string
  readonly in: "query" | "header" | "path" | "cookie"
  readonly required?: boolean
  readonly schema: JsonSchema
  readonly examples?: Readonly<Record<string, Example>>
}

export interface Response {
  readonly description?: string
  readonly headers?: Readonly<Record<string, { readonly [member: string]: unknown }>>
  readonly content?: Readonly<Record<string, MediaType>>
  readonly links?: Readonly<Record<string, { readonly operationId?: string; readonly parameters?: Readonly<Record<string, unknown>> }>>
}

/** An operation of a path; `x-…` extensions stay `unknown` until a test checks them. */
export interface Operation {
  readonly [member: string]: unknown
  readonly operationId: string
  readonly summary?: string
  readonly description?: string
  readonly tags?: ReadonlyArray<string>
  readonly security?: ReadonlyArray<Readonly<Record<string, ReadonlyArray<string>>>>
  readonly parameters?: ReadonlyArray<Parameter>
  readonly requestBody?: { readonly required?: boolean; readonly content?: Readonly<Record<string, MediaType>> }
  readonly responses?: Readonly<Record<string, Response>>
}

export interface Document {
  readonly [member: string]: unknown
  readonly openapi: string
  readonly info: { readonly [member: string]: unknown; readonly title: string; readonly description?: string }
  readonly servers?: ReadonlyArray<{ readonly url: string; readonly description?: string }>
  readonly tags?: ReadonlyArray<{ readonly name: string; readonly description?: string }>
  readonly paths: Readonly<Record<string, Readonly<Record<string, Operation>>>>
  readonly components: {
    readonly [member: string]: unknown
    readonly schemas: Readonly<Record<string, JsonSchema>>
  }
}
