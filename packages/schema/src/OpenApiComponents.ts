/**
 * The document's components as the API publishes them, from what Effect 4's generator writes, so the document keeps
 * the shapes it has had since 0.1.0 and clients generated from it expect:
 * - a transformed schema's component is named by its identifier (`Team`), where Effect 4 writes `<identifier>Encoded`
 *   (`TeamEncoded`) for its wire side;
 * - a TypeID (`ApiKeyId`, ...) is written out where it is used, as a string with its length, pattern and example, where
 *   Effect 4 makes it a component: a generated client then sees a string, and each use keeps its own description;
 * - a component's `examples` are the wire form of its schema's own examples (`componentExamples`, which reads the
 *   API's schemas), where Effect 4 writes their Type form and leaves out those holding a `Date`;
 * - integers are written without the safe-integer range Effect 4's `Schema.Int` adds, counts refer to
 *   `NonNegative`, and a refinement of `Int` refers to it beside its bounds (`integersAsPublished`);
 * - a described union, enum, reference or TypeID has its description beside it (`descriptionsBeside`), where Effect 4
 *   writes it as a member of an `allOf`;
 * - a query integer is written as an integer and a parameter is described as its schema is (`parametersAsPublished`);
 * - a member's description of a transformed schema, which Effect 4 leaves out, is written (`memberDescriptions`,
 *   which reads the API), and an undescribed string or array member (or a union's member, a bounded number too) is
 *   described by its last check ("a string at most 256 character(s) long");
 * - a schema published as a JSON Schema of its own (`publishedAs`, internal/published.ts) is written as that where
 *   used and as its component, and a required TypeID member without its description (`memberDescriptions`);
 * - a class whose struct decodes a member with a default is written where used (`defaultedClassesInline`);
 * - a struct's `required` and a record's `properties` and `required` are written even when empty, an empty struct as
 *   the empty object (`objectsAsPublished`);
 * - a check annotated after it is written in the schema's `allOf`, its examples on the schema (`checksFlattened`), and
 *   an array's checks on the array (`arrayChecksInline`).
 * Functions over the document as JSON (`componentExamples` reads the API too), which `Api.ts`'s transform applies first.
 */
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Option from "effect/Option"
import * as SchemaAST from "effect/SchemaAST"
import { IdsByPrefix } from "./Ids.js"
import { ownExamples, parameterSchemas, wireExamples } from "./OpenApiExamples.js"
import type { Json, JsonObject } from "./OpenApiExamples.js"
import { isJsonObject } from "./internal/json.js"
import { publishedJsonSchemaOf } from "./internal/published.js"
import { documentNulRule } from "./OpenApiDocument.js"

const REF_PREFIX = "#/components/schemas/"


const componentsOf = (spec: JsonObject): JsonObject => {
  const components = spec["components"]
  const schemas = isJsonObject(components) ? components["schemas"] : undefined
  return isJsonObject(schemas) ? schemas : {}
}

/**
 * Every JSON Schema object under `value` (examples left out: they are data, whose `$ref` member, a SCIM member's
 * URL, is no reference), each visited once, to be changed in place.
 */
const eachSchemaObject = (value: Json, visit: (schema: JsonObject) => void, seen = new Set<JsonObject>()): void => {
  if (Array.isArray(value)) {
    for (const item of value) eachSchemaObject(item, visit, seen)
  } else if (isJsonObject(value) && !seen.has(value)) {
    seen.add(value)
    visit(value)
    for (const [key, member] of Object.entries(value)) {
      if (key !== "examples" && key !== "example") eachSchemaObject(member, visit, seen)
    }
  }
}

/**
 * `<Name>Encoded` components renamed `<Name>` (when the document has no `<Name>` of its own), and every reference to
 * them with them.
 */
export const nameEncodedComponents = (spec: JsonObject): void => {
  const components = componentsOf(spec)
  const renamed = new Map<string, string>()
  for (const name of Object.keys(components)) {
    const plain = name.replace(/Encoded$/, "")
    if (plain !== name && components[plain] === undefined) renamed.set(name, plain)
  }
  if (renamed.size === 0) return
  const entries = Object.entries(components).map(([name, schema]): [string, Json] => [renamed.get(name) ?? name, schema])
  for (const name of Object.keys(components)) delete components[name]
  Object.assign(components, Object.fromEntries(entries))
  eachSchemaObject(spec, (schema) => {
    const ref = schema["$ref"]
    const target = typeof ref === "string" && ref.startsWith(REF_PREFIX) ? renamed.get(ref.slice(REF_PREFIX.length)) : undefined
    if (target !== undefined) schema["$ref"] = `${REF_PREFIX}${target}`
  })
}

/** The names Effect 4 gives the TypeIDs' components: their identifiers. */
const idComponentNames: ReadonlySet<string> = new Set(
  Object.values(IdsByPrefix).flatMap((schema) => {
    const identifier = SchemaAST.resolveIdentifier(schema.ast)
    return identifier === undefined ? [] : [identifier]
  })
)

/** A TypeID's schema as written where it is used: the string's keywords, gathered from its `allOf`; not its own description. */
const idSchema = (component: JsonObject): JsonObject => {
  const allOf = component["allOf"]
  const merged: JsonObject = {}
  for (const part of [component, ...(Array.isArray(allOf) ? allOf : [])]) {
    if (!isJsonObject(part)) continue
    for (const [key, value] of Object.entries(part)) {
      if (key !== "allOf" && key !== "description") merged[key] = value
    }
  }
  const { type, minLength, maxLength, pattern, examples, ...rest } = merged
  return {
    ...(type === undefined ? {} : { type }),
    ...(minLength === undefined ? {} : { minLength }),
    ...(maxLength === undefined ? {} : { maxLength }),
    ...(pattern === undefined ? {} : { pattern }),
    ...(examples === undefined ? {} : { examples }),
    ...rest
  }
}

/**
 * Every reference to a TypeID's component replaced by the id's schema (what the reference says beside it, a
 * member's description, kept), and the components removed.
 */
export const inlineIds = (spec: JsonObject): void => {
  const components = componentsOf(spec)
  const ids = new Map<string, JsonObject>()
  for (const name of idComponentNames) {
    const component = components[name]
    if (isJsonObject(component)) ids.set(name, idSchema(component))
  }
  if (ids.size === 0) return
  eachSchemaObject(spec, (schema) => {
    const ref = schema["$ref"]
    const id = typeof ref === "string" && ref.startsWith(REF_PREFIX) ? ids.get(ref.slice(REF_PREFIX.length)) : undefined
    if (id === undefined) return
    const { $ref: _, ...beside } = schema
    for (const key of Object.keys(schema)) delete schema[key]
    Object.assign(schema, structuredClone(id), beside)
  })
  for (const name of ids.keys()) delete components[name]
}

/** HTTP authentication schemes as RFC 7235 registers them and the document has always named them (`bearer`). */
export const lowerCaseSchemes = (spec: JsonObject): void => {
  const components = spec["components"]
  const schemes = isJsonObject(components) ? components["securitySchemes"] : undefined
  for (const scheme of Object.values(isJsonObject(schemes) ? schemes : {})) {
    const name = isJsonObject(scheme) ? scheme["scheme"] : undefined
    if (isJsonObject(scheme) && typeof name === "string") scheme["scheme"] = name.toLowerCase()
  }
}

/**
 * Every named schema (by its identifier) the API's endpoints use, found by walking their payloads, parameters,
 * successes and errors down to each member, item, union member, declaration parameter and encoding step; the first
 * node of each name.
 */
export const namedSchemas = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>): Map<string, SchemaAST.AST> => {
  const named = new Map<string, SchemaAST.AST>()
  const seen = new Set<SchemaAST.AST>()
  const walk = (ast: SchemaAST.AST): void => {
    if (seen.has(ast)) return
    seen.add(ast)
    const identifier = SchemaAST.resolveIdentifier(ast)
    if (identifier !== undefined && !named.has(identifier)) named.set(identifier, ast)
    switch (ast._tag) {
      case "Declaration":
        ast.typeParameters.forEach(walk)
        break
      case "Objects":
        for (const member of ast.propertySignatures) walk(member.type)
        for (const index of ast.indexSignatures) walk(index.type)
        break
      case "Arrays":
        ast.elements.forEach(walk)
        ast.rest.forEach(walk)
        break
      case "Union":
        ast.types.forEach(walk)
        break
      case "Suspend":
        walk(ast.thunk())
        break
    }
    for (const link of ast.encoding ?? []) walk(link.to)
  }
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, successes, errors }) {
      for (const { schemas } of endpoint.payload.values()) for (const schema of schemas) walk(schema.ast)
      for (const { ast } of parameterSchemas(endpoint)) walk(ast)
      for (const schemas of [...successes.values(), ...errors.values()]) for (const schema of schemas) walk(schema.ast)
    }
  })
  return named
}

/** Whether `ast`, or what it is encoded from (a class's struct), is annotated with examples: none are composed. */
const hasOwnExamples = (ast: SchemaAST.AST): boolean =>
  Option.isSome(ownExamples(ast)) || (ast.encoding ?? []).some((link) => hasOwnExamples(link.to))

/**
 * Each component's `examples` as they go over the wire: those of the schema it was written from (by name), encoded by
 * it (`wireExamples`). Effect 4 writes a schema's examples in their Type form (`deleted: true`
 * where the wire has "true") and leaves out any holding a value JSON has no form for (a `Date`), so a component of
 * a timestamped record had none; a client reads the wire form.
 */
export const componentExamples = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, spec: JsonObject): JsonObject => {
  const components = componentsOf(spec)
  for (const [name, ast] of namedSchemas(api)) {
    const component = components[name]
    if (!isJsonObject(component) || !hasOwnExamples(ast) || publishedJsonSchemaOf(ast) !== undefined) continue
    const examples = wireExamples(ast)
    if (examples.length > 0) component["examples"] = JSON.parse(JSON.stringify(examples))
  }
  return spec
}

/**
 * A class whose struct decodes a member with a default (one the wire may leave out, always there once decoded: a
 * `DiscoveredPlugin`'s `skippedFiles`) written where it is used, its component left out, as the document publishes
 * it: the class transforms its struct, whose wire side has no name of its own.
 */
export const defaultedClassesInline = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, spec: JsonObject): JsonObject => {
  const components = componentsOf(spec)
  for (const [name, ast] of namedSchemas(api)) {
    const component = components[name]
    const defaulted = structOf(ast)?.propertySignatures.some((member) =>
      member.type.context?.isOptional !== true && (member.type.encoding ?? []).some((link) => link.to.context?.isOptional === true)
    )
    if (!isJsonObject(component) || ast.annotations?.["~constructor"] === undefined || defaulted !== true) continue
    eachSchemaObject(spec, (schema) => {
      if (schema["$ref"] !== `${REF_PREFIX}${name}` || Object.keys(schema).length !== 1) return
      delete schema["$ref"]
      Object.assign(schema, structuredClone(component))
    })
    delete components[name]
  }
  return spec
}

/** The component counts refer to, as the document publishes it. */
const NonNegativeComponent: JsonObject = { type: "number", description: "a non-negative number", minimum: 0 }

/**
 * Integers as the document publishes them. Effect 4's `Schema.Int` is a check that writes the safe-integer range
 * (`minimum: -2^53 + 1`, `maximum: 2^53 - 1`) into every integer's JSON Schema, which the document never stated: those
 * bounds are dropped (a bound of the schema's own stays). A count (`Schema.Int` from 0: `minimum: 0` and the safe
 * maximum) refers to the `NonNegative` component beside `type: integer`, and the component is added. A refinement of
 * the `Int` component is then a reference to it (`refinedIntegers`).
 */
export const integersAsPublished = (spec: JsonObject): void => {
  let counts = false
  eachSchemaObject(spec, (schema) => {
    if (schema["type"] !== "integer" || schema["maximum"] !== Number.MAX_SAFE_INTEGER) return
    if (schema["minimum"] === Number.MIN_SAFE_INTEGER) {
      delete schema["minimum"]
      delete schema["maximum"]
    } else if (schema["minimum"] === 0) {
      delete schema["minimum"]
      delete schema["maximum"]
      schema["$ref"] = `${REF_PREFIX}NonNegative`
      counts = true
    }
  })
  const components = componentsOf(spec)
  if (counts && components["NonNegative"] === undefined) components["NonNegative"] = structuredClone(NonNegativeComponent)
  refinedIntegers(spec, components)
}

const boundKeywords = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]

/**
 * A refinement of the `Int` component (Common.ts's `Int` with checks of its own, `Int.check(Schema.isBetween(…))`) as
 * the document publishes it: a reference to `Int` with the refinement's bounds and description beside it (a
 * `between` without one of its own described by its bounds, "a number between 1 and 10"), in an `allOf` of its own
 * when a member's description goes beside it. Effect 4 writes a named schema with more checks out in full (`Int`'s
 * type and description, its bounds, or an `allOf` of its described checks).
 */
const refinedIntegers = (spec: JsonObject, components: JsonObject): void => {
  const int = components["Int"]
  if (!isJsonObject(int) || int["type"] !== "integer" || typeof int["description"] !== "string") return
  const intDescription = int["description"]
  eachSchemaObject(spec, (schema) => {
    const written = schema === int ? undefined : refinedIntegerAsPublished(schema, `${REF_PREFIX}Int`, intDescription)
    if (written === undefined) return
    for (const name of Object.keys(schema)) delete schema[name]
    Object.assign(schema, written)
  })
}

/**
 * One schema as `refinedIntegers` writes it, or `undefined` when it is no refinement of `Int` (`ref`, `Int`'s
 * reference; `intDescription`, its description).
 */
export const refinedIntegerAsPublished = (schema: JsonObject, ref: string, intDescription: string): JsonObject | undefined => {
  if (schema["type"] !== "integer" || schema["description"] !== intDescription || schema["$ref"] !== undefined) return undefined
  const allOf = Array.isArray(schema["allOf"]) ? schema["allOf"] : []
  const checks = allOf.filter((member): member is JsonObject =>
    isJsonObject(member) && !isDescriptionOnly(member) && Object.keys(member).every((key) => key === "description" || boundKeywords.includes(key))
  )
  const beside = allOf.filter(isDescriptionOnly)
  if (checks.length + beside.length !== allOf.length || beside.length > 1) return undefined
  const refined: JsonObject = { $ref: ref }
  for (const key of boundKeywords) if (schema[key] !== undefined) refined[key] = schema[key]
  for (const check of checks) Object.assign(refined, check)
  if (!boundKeywords.some((key) => refined[key] !== undefined)) return undefined
  const { minimum, maximum } = refined
  if (refined["description"] === undefined && typeof minimum === "number" && typeof maximum === "number") {
    refined["description"] = `a number between ${minimum} and ${maximum}`
  }
  const [key] = beside
  return key === undefined ? refined : { allOf: [refined], description: key["description"] }
}

const isDescriptionOnly = (value: Json): value is JsonObject =>
  isJsonObject(value) && Object.keys(value).length === 1 && typeof value["description"] === "string"

/**
 * A described schema's description beside it, as the document publishes it. Effect 4 writes the description of an
 * annotated union, enum, reference or TypeID as a member of `allOf` (`{ anyOf: [...], allOf: [{ description }] }`,
 * `{ allOf: [{ $ref }, { description }] }`); the document has it as the schema's own `description`, the reference in
 * an `allOf` of its own (`{ allOf: [{ $ref }], description }`) and a TypeID, written out, with the description among
 * its keywords.
 */
export const descriptionsBeside = (spec: JsonObject): void => {
  eachSchemaObject(spec, (schema) => {
    const allOf = schema["allOf"]
    if (!Array.isArray(allOf) || schema["description"] !== undefined) return
    const described = allOf.filter(isDescriptionOnly)
    const [description] = described
    if (described.length !== 1 || description === undefined) return
    const rest = allOf.filter((member) => !isDescriptionOnly(member))
    const [only] = rest
    if (rest.length === 0) {
      delete schema["allOf"]
    } else if (rest.length === 1 && isJsonObject(only) && only["$ref"] === undefined && Object.keys(schema).length === 1) {
      delete schema["allOf"]
      Object.assign(schema, only)
    } else {
      schema["allOf"] = rest
    }
    schema["description"] = description["description"] ?? null
  })
}

/**
 * Parameters as the document publishes them: a query integer as the integer it is (Effect 4 writes the string it is
 * read from, `{ type: string, allOf: [{ type: integer, ... }] }`, with the NUL rule of request strings), and each
 * parameter described as its schema is (the schema's description copied onto the parameter; Effect 4 copies none).
 */
export const parametersAsPublished = (spec: JsonObject): void => {
  const paths = spec["paths"]
  for (const item of Object.values(isJsonObject(paths) ? paths : {})) {
    for (const operation of Object.values(isJsonObject(item) ? item : {})) {
      const parameters = isJsonObject(operation) ? operation["parameters"] : undefined
      for (const parameter of Array.isArray(parameters) ? parameters : []) {
        if (!isJsonObject(parameter)) continue
        const schema = parameter["schema"]
        if (!isJsonObject(schema)) continue
        const allOf = schema["allOf"]
        const [integer] = Array.isArray(allOf) ? allOf : []
        if (schema["type"] === "string" && Array.isArray(allOf) && allOf.length === 1 && isJsonObject(integer) && integer["type"] === "integer") {
          const { type: _type, allOf: _allOf, pattern: _pattern, ...rest } = schema
          for (const key of Object.keys(schema)) delete schema[key]
          Object.assign(schema, integer, rest)
        }
        const description = schema["description"]
        if (typeof description === "string" && parameter["description"] === undefined) parameter["description"] = description
      }
    }
  }
}

/** The struct `ast` is, or is encoded as (a class's fields). */
const structOf = (ast: SchemaAST.AST): SchemaAST.Objects | undefined => {
  if (ast._tag === "Objects") return ast
  for (const link of ast.encoding ?? []) {
    const struct = structOf(link.to)
    if (struct !== undefined) return struct
  }
  return undefined
}

/**
 * What a member says of itself: its key's description (`annotateKey`), else its schema's, when that is not the
 * description of the named schema it is (`Timestamp`'s own).
 */
const memberDescription = (member: SchemaAST.PropertySignature, named: ReadonlyMap<string, SchemaAST.AST>): string | undefined => {
  const key = member.type.context?.annotations?.["description"]
  if (typeof key === "string") return key
  const own = SchemaAST.resolveDescription(member.type)
  const identifier = SchemaAST.resolveIdentifier(member.type)
  const base = identifier === undefined ? undefined : named.get(identifier)
  // A description annotated on a check the document cannot state (no JSON Schema: Effect 4 writes nothing of it): the
  // schema is described by the last check it can state.
  const last = member.type.checks?.[member.type.checks.length - 1]
  if (identifier === undefined && last !== undefined && last.annotations?.["toJsonSchema"] === undefined) return lastCheckDescription(member.type)
  if (identifier === undefined) return own ?? lastCheckDescription(member.type)
  return base === undefined || base === member.type || SchemaAST.resolveDescription(base) === own ? undefined : own
}

/**
 * The document's description of an undescribed string or array by its last check (its length's bound), or of a
 * number by its bounds (`between`), which Effect 4 does not generate: "a string at most 256 character(s) long",
 * "a number between 0 and 1000000".
 */
const lastCheckDescription = (ast: SchemaAST.AST): string | undefined => {
  const last = ast.checks?.filter((check) => check.annotations?.["toJsonSchema"] !== undefined).at(-1)
  const representation = last?.annotations?.["representation"]
  const id = isRepresentation(representation) ? representation.id : undefined
  const payload = isRepresentation(representation) ? representation.payload : undefined
  if (id === "effect/schema/isBetween" && ast._tag === "Number") {
    const minimum = payload?.["minimum"]
    const maximum = payload?.["maximum"]
    const exclusive = payload?.["exclusiveMinimum"] !== undefined || payload?.["exclusiveMaximum"] !== undefined
    return typeof minimum === "number" && typeof maximum === "number" && !exclusive ? `a number between ${minimum} and ${maximum}` : undefined
  }
  const bound = id === "effect/schema/isMaxLength" ? payload?.["maxLength"] : id === "effect/schema/isMinLength" ? payload?.["minLength"] : undefined
  if (typeof bound !== "number") return undefined
  const most = id === "effect/schema/isMaxLength" ? "most" : "least"
  return ast._tag === "String" ? `a string at ${most} ${bound} character(s) long` : ast._tag === "Arrays" ? `an array of at ${most} ${bound} item(s)` : undefined
}

const isRepresentation = (value: unknown): value is { readonly id: string; readonly payload?: Record<string, unknown> } =>
  typeof value === "object" && value !== null && typeof Reflect.get(value, "id") === "string"

/** A union's members as its JSON Schema's `anyOf` has them: an optional member's `undefined` left out. */
const unionMembers = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> | undefined => {
  if (ast._tag !== "Union") return undefined
  const types = ast.types.filter((type) => type._tag !== "Undefined")
  const [only] = types
  return types.length === 1 && only !== undefined && only._tag === "Union" && SchemaAST.resolveDescription(only) === undefined ? unionMembers(only) : types
}

/** `description` written on a member's JSON Schema that has none, a bare reference in an `allOf` of its own. */
const describe = (schema: Json | undefined, description: string): void => {
  if (!isJsonObject(schema) || schema["description"] !== undefined) return
  const ref = schema["$ref"]
  if (typeof ref === "string" && Object.keys(schema).length === 1) {
    delete schema["$ref"]
    schema["allOf"] = [{ $ref: ref }]
  }
  schema["description"] = description
}

/**
 * Members' descriptions that Effect 4 leaves out, written as the document publishes them. Effect 4 writes a
 * transformed schema (a `Timestamp`, `BooleanFromString`, `Email`) by its wire side, where a member's description of
 * it, on its key or its Type side, does not reach. The document has it beside the reference
 * (`{ allOf: [{ $ref }], description }`) for a parameter (on the parameter too) and an optional member; a required
 * member described again has, of a named schema, a copy of its JSON Schema written where used with the member's
 * description (an enum's, a record's), or, of a transformation, with its own (`Timestamp`'s); and of a class the
 * reference alone (the class's component taking the description of its first use). An unnamed member gets its
 * description (its last check's, when it is checked further than what it refines). A schema published as a JSON
 * Schema of its own (`publishedAs`) is written as that where it is unnamed or described again (a required member's,
 * or an optional member's key description), as its component, as a request body and as a parameter; a required
 * TypeID member has no description (its published form replaces it); a parameter of a named schema annotated again is
 * a copy of it. Read from the API's
 * structs (and those of their arrays): the components written from them, the request bodies written where used (whose
 * examples are then written in their wire form too, as `componentExamples` writes components') and the parameters;
 * then the NUL rule on the request strings written (`documentNulRule`).
 */
export const memberDescriptions = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, spec: JsonObject): JsonObject => {
  const named = namedSchemas(api)
  const components = componentsOf(spec)
  const describeMembers = (ast: SchemaAST.AST, json: Json | undefined): void => {
    const struct = structOf(ast)
    const properties = isJsonObject(json) ? json["properties"] : undefined
    if (struct === undefined || !isJsonObject(properties)) return
    for (const member of struct.propertySignatures) {
      const description = memberDescription(member, named)
      const schema = properties[String(member.name)]
      const optional = member.type.context?.isOptional === true
      // A schema published as a JSON Schema of its own, unnamed or described where used: that alone.
      const override = SchemaAST.resolveIdentifier(member.type) === undefined || (!optional && description !== undefined)
        ? publishedJsonSchemaOf(member.type)
        : undefined
      if (override !== undefined) {
        properties[String(member.name)] = override
        continue
      }
      // A required TypeID's description (its published form replaces what the member annotated on it).
      const identifier = SchemaAST.resolveIdentifier(member.type)
      if (!optional && identifier !== undefined && idComponentNames.has(identifier) && isJsonObject(schema)) {
        delete schema["description"]
        continue
      }
      // An array of structs written inside it: their members too.
      const items = isJsonObject(schema) ? schema["items"] : undefined
      const [element] = member.type._tag === "Arrays" && member.type.elements.length === 0 ? member.type.rest : []
      if (isJsonObject(items) && items["properties"] !== undefined && element !== undefined && SchemaAST.resolveIdentifier(element) === undefined) {
        describeMembers(element, items)
      }
      // A struct written inside it (not a reference): its members too.
      if (isJsonObject(schema) && schema["properties"] !== undefined && SchemaAST.resolveIdentifier(member.type) === undefined) {
        describeMembers(member.type, schema)
        // Its own examples in wire form, as a component's (`componentExamples`).
        const examples = hasOwnExamples(member.type) ? wireExamples(member.type) : []
        if (examples.length > 0) schema["examples"] = JSON.parse(JSON.stringify(examples))
      }
      // A union's undescribed, unnamed members described by their last check.
      const anyOf = isJsonObject(schema) ? schema["anyOf"] : undefined
      const types = unionMembers(member.type)
      if (types !== undefined && Array.isArray(anyOf) && anyOf.length === types.length) {
        types.forEach((type, index) => {
          const override = SchemaAST.resolveIdentifier(type) === undefined ? publishedJsonSchemaOf(type) : undefined
          if (override !== undefined) anyOf[index] = override
          if (override !== undefined || SchemaAST.resolveIdentifier(type) !== undefined || SchemaAST.resolveDescription(type) !== undefined) return
          const generated = lastCheckDescription(type)
          if (generated !== undefined) describe(anyOf[index], generated)
        })
      }
      if (description === undefined || !isJsonObject(schema)) continue
      if (optional || identifier === undefined) {
        // An unnamed member checked further than what it refines (`MemberIds` with at least one): described by its
        // last check, where Effect 4 writes the description of what it refines.
        const generated = identifier === undefined && member.type.context?.annotations?.["description"] === undefined &&
          SchemaAST.resolveDescription(member.type) === undefined
        if (generated) schema["description"] = description
        else describe(schema, description)
        continue
      }
      // A reference, bare or described (`{ allOf: [{ $ref }], description }`).
      const allOf = schema["allOf"]
      const [only] = Array.isArray(allOf) && allOf.length === 1 ? allOf : []
      const reference = Object.keys(schema).length === 1 ? schema : isJsonObject(only) && Object.keys(schema).every((key) => key === "allOf" || key === "description") ? only : undefined
      const ref = isJsonObject(reference) && Object.keys(reference).length === 1 ? reference["$ref"] : undefined
      const target = typeof ref === "string" && ref.startsWith(REF_PREFIX) ? components[ref.slice(REF_PREFIX.length)] : undefined
      if (!isJsonObject(target)) continue
      const isClass = member.type.annotations?.["~constructor"] !== undefined
      for (const key of Object.keys(schema)) delete schema[key]
      if (isClass) {
        schema["$ref"] = `${REF_PREFIX}${identifier}`
        // The described class keeps the class's name, so the description of its first use (in the API's order) goes
        // on the component, when that has none of its own.
        if (target["description"] === undefined && named.get(identifier) === member.type) target["description"] = description
      } else {
        Object.assign(schema, structuredClone(target))
        // (A struct's Type side, `toType`, has its members' Type sides: the named schema says whether it transforms.)
        if (member.type.encoding === undefined && named.get(identifier)?.encoding === undefined) schema["description"] = description
      }
    }
  }
  for (const [name, ast] of named) {
    // A schema published as a JSON Schema of its own: its component is that alone.
    const override = publishedJsonSchemaOf(ast)
    if (override !== undefined && components[name] !== undefined) components[name] = override
    else describeMembers(ast, components[name])
  }
  // Effect 4's copies of a named schema annotated again (`<Name>_1`), which differ from it in their annotations only.
  for (const copy of Object.keys(components)) {
    const ast = named.get(copy.replace(/_\d+$/, ""))
    if (copy !== copy.replace(/_\d+$/, "") && ast !== undefined) describeMembers(ast, components[copy])
  }
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
      const paths = spec["paths"]
      const item = isJsonObject(paths) ? paths[path] : undefined
      const operation = isJsonObject(item) ? item[endpoint.method.toLowerCase()] : undefined
      const parameters = isJsonObject(operation) ? operation["parameters"] : undefined
      // A request body written where it is used (an unnamed struct): its members, and its examples as components' are.
      const requestBody = isJsonObject(operation) ? operation["requestBody"] : undefined
      const content = isJsonObject(requestBody) ? requestBody["content"] : undefined
      for (const [contentType, { schemas }] of HttpMethod.hasBody(endpoint.method) ? endpoint.payload : []) {
        const media = isJsonObject(content) ? content[contentType] : undefined
        const body = isJsonObject(media) ? media["schema"] : undefined
        const [schema] = schemas
        // A body published as a JSON Schema of its own (SCIM's resources): that alone, where used.
        const override = schemas.length === 1 && schema !== undefined ? publishedJsonSchemaOf(schema.ast) : undefined
        if (isJsonObject(media) && override !== undefined) media["schema"] = override
        if (schemas.length !== 1 || schema === undefined || !isJsonObject(body) || body["$ref"] !== undefined || override !== undefined) continue
        describeMembers(schema.ast, body)
        const examples = hasOwnExamples(schema.ast) ? wireExamples(schema.ast) : []
        if (examples.length > 0) body["examples"] = JSON.parse(JSON.stringify(examples))
      }
      for (const { ast, in: location } of parameterSchemas(endpoint)) {
        for (const member of structOf(ast)?.propertySignatures ?? []) {
          const description = memberDescription(member, named)
          const parameter = (Array.isArray(parameters) ? parameters : []).find((p) => isJsonObject(p) && p["in"] === location && p["name"] === String(member.name))
          // A schema published as a JSON Schema of its own: that alone, the parameter described as it is.
          const override = SchemaAST.resolveIdentifier(member.type) === undefined ? publishedJsonSchemaOf(member.type) : undefined
          if (override !== undefined && isJsonObject(parameter)) {
            parameter["schema"] = override
            const own = override["description"]
            if (typeof own === "string") parameter["description"] = own
            else delete parameter["description"]
            continue
          }
          // A named schema annotated again (its own examples): written where used (a copy of the component), the
          // parameter described as it is.
          const identifier = SchemaAST.resolveIdentifier(member.type)
          const base = identifier === undefined ? undefined : named.get(identifier)
          const baseAnnotations = base === undefined ? {} : SchemaAST.resolve(base) ?? {}
          const annotatedAgain = Object.keys(SchemaAST.resolve(member.type) ?? {}).some((key) => !(key in baseAnnotations))
          const schema = isJsonObject(parameter) ? parameter["schema"] : undefined
          const target = identifier === undefined ? undefined : components[identifier]
          if (annotatedAgain && isJsonObject(parameter) && isJsonObject(schema) && isJsonObject(target) && Object.keys(schema).length === 1 && schema["$ref"] === `${REF_PREFIX}${identifier}`) {
            parameter["schema"] = structuredClone(target)
            const own = target["description"]
            if (typeof own === "string" && parameter["description"] === undefined) parameter["description"] = own
          }
          if (description === undefined || !isJsonObject(parameter)) continue
          describe(parameter["schema"], description)
          if (parameter["description"] === undefined) parameter["description"] = description
        }
      }
    }
  })
  // The request guard's NUL rule on the request strings written here (an override's), as on every other.
  documentNulRule(spec)
  return spec
}

/**
 * Objects with the members the document always has: a struct's `required`, empty when every member is optional, and a
 * record's (an object whose `additionalProperties` is a schema) `properties` and `required`, both empty, and a record
 * of any values (Effect 4 writes any object, `{ type: object }`) with those and `additionalProperties: {}`; a struct
 * with a record's rest with that record's `additionalProperties` (Effect 4 writes it as an `allOf` member); no
 * `propertyNames` that allows every name; an empty struct as the empty object. Effect 4 leaves out what is empty or
 * implied, and writes what allows anything; the values are the same.
 */
export const objectsAsPublished = (spec: JsonObject): void => {
  eachSchemaObject(spec, (schema) => {
    // An empty struct (`Struct({})`), which Effect 4 writes as any value but null (`{ not: { type: null } }`, an object
    // or an array, which is what it takes): the empty object, as the document publishes it.
    const not = schema["not"]
    if (schema["type"] === undefined && isJsonObject(not) && Object.keys(not).length === 1 && not["type"] === "null") {
      delete schema["not"]
      Object.assign(schema, { type: "object", properties: {}, additionalProperties: false })
    }
    if (schema["type"] !== "object") return
    // Effect 4 writes `propertyNames: { anyOf: [{ enum: [the members] }, { type: string }] }` beside a struct's members:
    // it allows every name, so says nothing, and the document has none; a struct that takes other members says so.
    const names = isJsonObject(schema["propertyNames"]) ? schema["propertyNames"]["anyOf"] : undefined
    const anyName = (name: Json) => isJsonObject(name) && name["type"] === "string" && Object.keys(name).every((key) => key === "type" || (key === "pattern" && name[key] === "^[^\\u0000]*$"))
    if (Array.isArray(names) && names.some(anyName)) {
      delete schema["propertyNames"]
      if (schema["additionalProperties"] === undefined) schema["additionalProperties"] = true
    }
    // A record of any values (`Schema.Record(Schema.String, Schema.Unknown)`), which Effect 4 writes as any object.
    const keywords = ["properties", "additionalProperties", "patternProperties", "allOf", "anyOf", "oneOf", "$ref", "not"]
    if (keywords.every((key) => schema[key] === undefined)) Object.assign(schema, { required: [], properties: {}, additionalProperties: {} })
    // A struct with a record's rest, which Effect 4 writes as an `allOf` of the record: its `additionalProperties`.
    const allOf = schema["allOf"]
    const [rest] = Array.isArray(allOf) ? allOf : []
    if (Array.isArray(allOf) && allOf.length === 1 && isJsonObject(rest) && rest["type"] === "object" && schema["additionalProperties"] === undefined) {
      const { type: _, properties, required, additionalProperties, ...other } = rest
      const empty = (value: Json | undefined) => value === undefined || (Array.isArray(value) ? value.length === 0 : isJsonObject(value) && Object.keys(value).length === 0)
      if (additionalProperties !== undefined && Object.keys(other).length === 0 && empty(properties) && empty(required)) {
        delete schema["allOf"]
        schema["additionalProperties"] = additionalProperties
      }
    }
    const properties = schema["properties"]
    const record = isJsonObject(schema["additionalProperties"]) && properties === undefined
    if (record) schema["properties"] = {}
    const struct = isJsonObject(properties) && Object.keys(properties).length > 0
    if ((record || struct) && schema["required"] === undefined) schema["required"] = []
  })
}

/**
 * A check's fragment flattened into the schema it checks, as the document publishes it. Effect 4 writes a check
 * annotated after it (a struct's "one of these members" with the struct's examples) as an `allOf` member holding the
 * check's own `allOf` and the annotation (`{ allOf: [{ allOf: [{ oneOf }], examples }] }`); the document has the
 * check's keywords in the schema's `allOf` and the examples on the schema (`{ examples, allOf: [{ oneOf }] }`).
 */
export const checksFlattened = (spec: JsonObject): void => {
  eachSchemaObject(spec, (schema) => {
    const allOf = schema["allOf"]
    if (!Array.isArray(allOf)) return
    schema["allOf"] = allOf.flatMap((member): Array<Json> => {
      if (!isJsonObject(member)) return [member]
      const { allOf: inner, examples, ...rest } = member
      if (!Array.isArray(inner) || Object.keys(rest).length > 0) return [member]
      if (examples !== undefined && schema["examples"] === undefined) schema["examples"] = examples
      else if (examples !== undefined && JSON.stringify(examples) !== JSON.stringify(schema["examples"])) return [member]
      return inner
    })
  })
}

/** The keywords of an array's checks (its length, its items). */
const arrayKeywords: ReadonlySet<string> = new Set(["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains"])

/** What an object's check written on it says: which members it takes or needs together, with the annotation after it. */
const objectKeywords: ReadonlySet<string> = new Set(["additionalProperties", "description", "examples", "dependentRequired", "minProperties", "maxProperties"])

/**
 * An array's or object's checks written on it, as the document publishes them: Effect 4 writes an array whose items are
 * checked as a whole (SCIM's `Operations`, 1 to 1000 of them) as `{ type: array, allOf: [{ minItems, maxItems, items }] }`,
 * and an object's check of its members (`JsonObject`'s, a member needing another) with the annotation after it as
 * `{ allOf: [{ additionalProperties, description }] }`, `{ allOf: [{ dependentRequired }] }`; a check saying a struct
 * takes any other member (`additionalProperties: true`, SCIM's open bodies) in place of the `false` Effect 4 writes
 * on every struct.
 */
export const arrayChecksInline = (spec: JsonObject): void => {
  eachSchemaObject(spec, (schema) => {
    const allOf = schema["allOf"]
    const keywords = schema["type"] === "array" ? arrayKeywords : schema["type"] === "object" ? objectKeywords : undefined
    if (keywords === undefined || !Array.isArray(allOf)) return
    const kept = allOf.filter((member) => {
      if (!isJsonObject(member)) return true
      const keys = Object.keys(member)
      const opens = (key: string) => key === "additionalProperties" && member[key] === true && schema[key] === false
      if (!keys.every((key) => keywords.has(key) && (schema[key] === undefined || opens(key)))) return true
      Object.assign(schema, member)
      return false
    })
    if (kept.length === 0) delete schema["allOf"]
    else schema["allOf"] = kept
  })
}
