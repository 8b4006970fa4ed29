/**
 * The operations' responses as the API publishes them, from what Effect 4's generator writes, so the document keeps
 * the responses it has had since 0.1.0 and clients generated from it expect:
 * - an error response lists the errors its operation has from middleware (the API's `ApiErrors`, a group's
 *   authentication) before the operation's own, and is described by the first of them, where Effect 4 lists the
 *   endpoint's errors first and describes the response by all their names (`NotFound | OrganizationNotFound`). An
 *   error the endpoint declares itself keeps its place among its own (an endpoint lists `memberAuthenticationErrors`
 *   after its own errors where the document has them there);
 * - every 400 is described as "The request did not match the expected schema" (`decodeErrorDescription`);
 * - a response without a body is described as `Success`, where Effect 4 writes `<No Content>`, and a plain string's
 *   as `a string`;
 * - an error response is described by its first error's description when it has one (a SCIM 304's), else its name;
 * - a success body the API annotates for HTTP (a 201, SCIM's media type) is written where it is used, not as a
 *   reference to its component, so are a request union (its members' `oneOf` alone) and a request body's copy of a
 *   named schema (with its examples), and the document keeps only the components it refers to
 *   (`annotatedBodiesInline`).
 * Functions over the document as JSON, with the API they were generated from.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as SchemaAST from "effect/SchemaAST"
import type { Json, JsonObject } from "./OpenApiExamples.js"
import { isJsonObject, objectAt } from "./internal/json.js"

const REF_PREFIX = "#/components/schemas/"

/** What the document describes every 400 as. */
export const decodeErrorDescription = "The request did not match the expected schema"

/** What the document describes a success without a description of its own as. */
const successDescription = "Success"

/** What the document describes an undescribed plain string's body as. */
const stringDescription = "a string"

/** What Effect 4 describes a response without a body as. */
const noContentDescription = "<No Content>"



const nameOf = (member: Json): string | undefined => {
  const ref = isJsonObject(member) ? member["$ref"] : undefined
  return typeof ref === "string" && ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined
}

/**
 * Each operation's responses described and ordered as the document publishes them (the module's comment says how):
 * error members of the API's middleware first in every `anyOf` of an error response, each error response described
 * by its first error (a 400 by `decodeErrorDescription`), and bodiless successes described as `Success`.
 */
export const responsesAsPublished = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  spec: JsonObject
): JsonObject => {
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, errors, middleware, successes }) {
      const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
      const operation = objectAt(objectAt(spec, "paths"), path)?.[endpoint.method.toLowerCase()]
      const responses = objectAt(operation, "responses")
      if (responses === undefined) return
      const own = new Set([...endpoint.error].flatMap((schema) => SchemaAST.resolveIdentifier(schema.ast) ?? []))
      const fromMiddleware = new Set([...middleware].flatMap((service) => [...service.error].flatMap((schema) => SchemaAST.resolveIdentifier(schema.ast) ?? [])))
      const rank = (name: string | undefined) => name !== undefined && fromMiddleware.has(name) && !own.has(name) ? 0 : 1
      for (const [status, schemas] of errors) {
        const response = objectAt(responses, String(status))
        if (response === undefined) continue
        const [first] = [...schemas].sort((a, b) => rank(SchemaAST.resolveIdentifier(a.ast)) - rank(SchemaAST.resolveIdentifier(b.ast)))
        const described = first === undefined ? undefined : SchemaAST.resolveDescription(first.ast) ?? SchemaAST.resolveIdentifier(first.ast)
        if (status === 400) response["description"] = decodeErrorDescription
        else if (described !== undefined) response["description"] = described
        for (const media of Object.values(objectAt(response, "content") ?? {})) {
          const schema = objectAt(media, "schema")
          const anyOf = schema?.["anyOf"]
          if (schema !== undefined && Array.isArray(anyOf)) schema["anyOf"] = [...anyOf].sort((a, b) => rank(nameOf(a)) - rank(nameOf(b)))
        }
      }
      for (const [status, response] of Object.entries(responses)) {
        if (!isJsonObject(response)) continue
        if (response["description"] === noContentDescription) response["description"] = successDescription
        // A plain string's body without a description of its own: "a string".
        const [schema] = successes.get(Number(status)) ?? []
        if (response["description"] === successDescription && schema !== undefined && schema.ast._tag === "String" && SchemaAST.resolveDescription(schema.ast) === undefined) {
          response["description"] = stringDescription
        }
      }
    }
  })
  return spec
}

/** The components every reference of the document reaches, from its paths and other members through the components. */
const referencedComponents = (spec: JsonObject, components: JsonObject): Set<string> => {
  const names = (value: unknown): Array<string> =>
    [...JSON.stringify(value).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].flatMap((match) => match[1] === undefined ? [] : [match[1]])
  const outside = Object.fromEntries(Object.entries(spec).filter(([key]) => key !== "components"))
  const otherComponents = Object.fromEntries(Object.entries(objectAt(spec, "components") ?? {}).filter(([key]) => key !== "schemas"))
  const reached = new Set<string>()
  const queue = [...names(outside), ...names(otherComponents)]
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (reached.has(name)) continue
    reached.add(name)
    queue.push(...names(components[name]))
  }
  return reached
}

/**
 * Success bodies written where they are used, described as `Success`, when the API annotates them for HTTP: a status
 * other than 200 (`HttpApiSchema.status(201)`) or a media type other than JSON (SCIM's `application/scim+json`),
 * where Effect 4 refers to the named schema's component. So are request bodies read from another media type than
 * JSON (the SAML ACS form) and request unions (one member per `kind`), which the document has never made components;
 * a union of named successes as their `anyOf`, described by the first; and the copies Effect 4 names `<Name>_1` (a
 * named schema annotated again). A component then referred to by nothing is left out: the document holds only those
 * it refers to.
 */
export const annotatedBodiesInline = (spec: JsonObject): JsonObject => {
  const components = objectAt(objectAt(spec, "components"), "schemas") ?? {}
  for (const item of Object.values(objectAt(spec, "paths") ?? {})) {
    for (const operation of Object.values(isJsonObject(item) ? item : {})) {
      for (const [status, response] of Object.entries(objectAt(operation, "responses") ?? {})) {
        if (!/^2\d\d$/.test(status) || !isJsonObject(response)) continue
        for (const [mediaType, media] of Object.entries(objectAt(response, "content") ?? {})) {
          const schema = objectAt(media, "schema")
          const name = schema === undefined ? undefined : nameOf(schema)
          const component = name === undefined ? undefined : components[name]
          if (!isJsonObject(media) || name === undefined || !isJsonObject(component)) continue
          // A union of named successes: each member a success of its own, written as their `anyOf` and described by
          // the first.
          const members = component["anyOf"]
          const [first] = Array.isArray(members) ? members : []
          const firstName = first === undefined ? undefined : nameOf(first)
          if (Array.isArray(members) && firstName !== undefined && members.every((member) => nameOf(member) !== undefined)) {
            media["schema"] = { anyOf: structuredClone(members) }
            if (response["description"] === name) response["description"] = firstName
            continue
          }
          if (status === "200" && mediaType === "application/json") continue
          media["schema"] = structuredClone(component)
          if (response["description"] === name) response["description"] = successDescription
        }
      }
    }
  }
  for (const item of Object.values(objectAt(spec, "paths") ?? {})) {
    for (const operation of Object.values(isJsonObject(item) ? item : {})) {
      for (const [mediaType, media] of Object.entries(objectAt(objectAt(operation, "requestBody"), "content") ?? {})) {
        const schema = objectAt(media, "schema")
        const name = schema === undefined ? undefined : nameOf(schema)
        const component = name === undefined ? undefined : components[name]
        const union = isJsonObject(component) && (component["oneOf"] !== undefined || component["anyOf"] !== undefined)
        if (!isJsonObject(media) || !isJsonObject(component) || !(union || mediaType !== "application/json")) continue
        // A union payload as its members, each a payload of its own, written as their `anyOf` (a discriminated
        // `oneOf`, `OpenApiDocument.ts`), without the union's examples (its members', which the media type shows) and
        // description.
        const members = Object.fromEntries(Object.entries(component).filter(([key]) => ["anyOf", "oneOf", "discriminator"].includes(key)))
        media["schema"] = structuredClone(union ? members : component)
      }
    }
  }
  // Effect 4 names a named schema annotated again (its own examples) `<Name>_1`: the document writes it where used.
  const copies = new Set(Object.keys(components).filter((name) => /_\d+$/.test(name) && components[name.replace(/_\d+$/, "")] !== undefined))
  // A request body's copy with its examples: a payload's own examples go on its schema.
  for (const item of Object.values(objectAt(spec, "paths") ?? {})) {
    for (const operation of Object.values(isJsonObject(item) ? item : {})) {
      for (const media of Object.values(objectAt(objectAt(operation, "requestBody"), "content") ?? {})) {
        const schema = objectAt(media, "schema")
        const name = schema === undefined ? undefined : nameOf(schema)
        const copy = name !== undefined && copies.has(name) ? components[name] : undefined
        if (isJsonObject(media) && isJsonObject(copy) && schema !== undefined && Object.keys(schema).length === 1) media["schema"] = structuredClone(copy)
      }
    }
  }
  const inlineCopies = (value: Json): void => {
    if (Array.isArray(value)) {
      value.forEach(inlineCopies)
    } else if (isJsonObject(value)) {
      const name = nameOf(value)
      const copy = name !== undefined && copies.has(name) ? components[name] : undefined
      if (isJsonObject(copy) && Object.keys(value).length === 1) {
        delete value["$ref"]
        // Without the examples that made it a copy: the document has none where used.
        const { examples: _, ...schema } = copy
        Object.assign(value, structuredClone(schema))
        return
      }
      for (const [key, member] of Object.entries(value)) if (key !== "examples" && key !== "example") inlineCopies(member)
    }
  }
  if (copies.size > 0) inlineCopies(spec)
  const reached = referencedComponents(spec, components)
  for (const name of Object.keys(components)) if (!reached.has(name)) delete components[name]
  return spec
}
