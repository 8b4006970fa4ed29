/**
 * Tag `discovery`: ServiceProviderConfig, ResourceTypes and Schemas (RFC 7643 §5–7, RFC 7644 §4), their shapes and
 * URNs, each resource type's schema and extensions present, each readable on its own, as `application/scim+json`.
 * `discover` also gives the other tags what the server advertises.
 */
import { asArray, asObject, type Check, check, type Context, expectListResponse, expectScimJson, expectStatus, fail, type ScimObject } from "./Check.js"
import { type Client, URN } from "./Client.js"
import type { ResourceTypeDoc, SchemaDoc } from "./Schema.js"

export interface Discovery {
  readonly serviceProviderConfig: ScimObject
  readonly resourceTypes: ReadonlyArray<ResourceTypeDoc>
  readonly schemas: ReadonlyMap<string, SchemaDoc>
}

/** What the server advertises, or a failure saying which discovery document could not be read. */
export const discover = async (client: Client): Promise<Discovery> => {
  const config = await client.get("/ServiceProviderConfig")
  const types = await client.get("/ResourceTypes")
  const schemas = await client.get("/Schemas")
  const serviceProviderConfig = asObject(expectStatus(config, 200))
  const resourceTypes = expectListResponse(types).Resources.filter(isResourceTypeDoc)
  const schemaDocs = expectListResponse(schemas).Resources.filter(isSchemaDoc)
  return { serviceProviderConfig, resourceTypes, schemas: new Map(schemaDocs.map((schema) => [schema.id, schema])) }
}

export const supported = (discovery: Discovery, feature: string): boolean => asObject(discovery.serviceProviderConfig[feature]).supported === true

/**
 * What the other tags need of a ResourceType and a Schema document (the `discovery` checks say what else is wrong
 * with them): a type without name, endpoint and schema, or a schema without id and attributes, is not used.
 */
const isResourceTypeDoc = (value: ScimObject): value is ScimObject & ResourceTypeDoc =>
  typeof value.name === "string" && typeof value.endpoint === "string" && typeof value.schema === "string" &&
  (value.schemaExtensions === undefined || Array.isArray(value.schemaExtensions))
const isSchemaDoc = (value: ScimObject): value is ScimObject & SchemaDoc => typeof value.id === "string" && Array.isArray(value.attributes)

const TYPES: ReadonlyArray<unknown> = ["string", "boolean", "decimal", "integer", "dateTime", "reference", "complex", "binary"]
const MUTABILITY: ReadonlyArray<unknown> = ["readOnly", "readWrite", "immutable", "writeOnly"]
const RETURNED: ReadonlyArray<unknown> = ["always", "never", "default", "request"]
const UNIQUENESS: ReadonlyArray<unknown> = ["none", "server", "global"]

/** Where an attribute definition breaks RFC 7643 §7 (undefined when it does not). */
const attributeProblem = (attribute: ScimObject, at: string): string | undefined => {
  if (typeof attribute.name !== "string" || attribute.name === "") return `${at}: no name`
  const where = `${at}${attribute.name}`
  const subAttributes = attribute.subAttributes
  if (!TYPES.includes(attribute.type)) return `${where}: type ${JSON.stringify(attribute.type)}`
  if (attribute.multiValued !== undefined && typeof attribute.multiValued !== "boolean") return `${where}: multiValued not boolean`
  if (attribute.required !== undefined && typeof attribute.required !== "boolean") return `${where}: required not boolean`
  if (attribute.mutability !== undefined && !MUTABILITY.includes(attribute.mutability)) return `${where}: mutability ${String(attribute.mutability)}`
  if (attribute.returned !== undefined && !RETURNED.includes(attribute.returned)) return `${where}: returned ${String(attribute.returned)}`
  if (attribute.uniqueness !== undefined && !UNIQUENESS.includes(attribute.uniqueness)) return `${where}: uniqueness ${String(attribute.uniqueness)}`
  if (attribute.type === "complex") {
    if (!Array.isArray(subAttributes) || subAttributes.length === 0) return `${where}: complex without subAttributes`
    for (const sub of subAttributes.map(asObject)) {
      if (sub.type === "complex") return `${where}.${String(sub.name)}: a complex sub-attribute (RFC 7643 §2.3.8)`
      const problem = attributeProblem(sub, `${where}.`)
      if (problem !== undefined) return problem
    }
  }
  if (attribute.type === "reference" && !Array.isArray(attribute.referenceTypes)) return `${where}: reference without referenceTypes`
  return undefined
}

export const checks = ({ client, discovery }: Context): ReadonlyArray<Check> => [
  {
    id: "discovery.serviceProviderConfig",
    description: "GET /ServiceProviderConfig: the core schema, every feature as {supported: boolean}, authenticationSchemes",
    run: async () => {
      const response = await client.get("/ServiceProviderConfig")
      const body = asObject(expectStatus(response, 200))
      expectScimJson(response)
      check(Array.isArray(body.schemas) && body.schemas.includes(URN.serviceProviderConfig), `schemas must include ${URN.serviceProviderConfig}`, response)
      for (const feature of ["patch", "bulk", "filter", "changePassword", "sort", "etag"]) {
        check(typeof asObject(body[feature]).supported === "boolean", `${feature}.supported must be a boolean`, response)
      }
      const bulk = asObject(body.bulk)
      const filter = asObject(body.filter)
      if (bulk.supported) check(Number.isInteger(bulk.maxOperations) && Number.isInteger(bulk.maxPayloadSize), "bulk needs maxOperations and maxPayloadSize", response)
      if (filter.supported) check(Number.isInteger(filter.maxResults), "filter needs maxResults", response)
      check(Array.isArray(body.authenticationSchemes), "authenticationSchemes must be an array", response)
      for (const scheme of asArray(body.authenticationSchemes).map(asObject)) {
        check(typeof scheme.type === "string" && typeof scheme.name === "string" && typeof scheme.description === "string", "an authentication scheme needs type, name, description", response)
      }
    }
  },
  {
    id: "discovery.resourceTypes",
    description: "GET /ResourceTypes: a ListResponse of ResourceType resources (name, endpoint, schema, extensions), each readable at /ResourceTypes/{name}",
    run: async () => {
      const list = await client.get("/ResourceTypes")
      const { Resources, totalResults } = expectListResponse(list)
      check(Resources.length > 0 && totalResults === Resources.length, "expected every resource type in one page", list)
      for (const type of Resources) {
        check(Array.isArray(type.schemas) && type.schemas.includes(URN.resourceType), `${type.name}: schemas must include ${URN.resourceType}`, list)
        check(typeof type.name === "string" && typeof type.endpoint === "string" && type.endpoint.startsWith("/"), `${type.name}: name and an endpoint starting with /`, list)
        check(typeof type.schema === "string" && type.schema.startsWith("urn:"), `${type.name}: schema must be a URN`, list)
        check(type.schemaExtensions === undefined || type.schemaExtensions === null || Array.isArray(type.schemaExtensions), `${type.name}: schemaExtensions must be an array`, list)
        for (const extension of asArray(type.schemaExtensions).map(asObject)) {
          check(typeof extension.schema === "string" && typeof extension.required === "boolean", `${type.name}: schemaExtensions need schema and required`, list)
        }
        const one = await client.get(`/ResourceTypes/${encodeURIComponent(String(type.id ?? type.name))}`)
        expectScimJson(one)
        check(asObject(expectStatus(one, 200)).name === type.name, `/ResourceTypes/${type.name} must answer that type`, one)
      }
    }
  },
  {
    id: "discovery.schemas",
    description: "GET /Schemas: a ListResponse of schema definitions with valid attribute characteristics, each readable at /Schemas/{id}",
    run: async () => {
      const list = await client.get("/Schemas")
      const { Resources } = expectListResponse(list)
      check(Resources.length > 0, "expected schemas", list)
      for (const schema of Resources) {
        check(typeof schema.id === "string" && schema.id.startsWith("urn:"), `schema id must be a URN: ${schema.id}`, list)
        check(Array.isArray(schema.attributes), `${schema.id}: attributes must be an array`, list)
        for (const attribute of asArray(schema.attributes).map(asObject)) {
          const problem = attributeProblem(attribute, `${schema.id}:`)
          if (problem !== undefined) fail(problem)
        }
        const one = await client.get(`/Schemas/${encodeURIComponent(String(schema.id))}`)
        expectScimJson(one)
        check(asObject(expectStatus(one, 200)).id === schema.id, `/Schemas/${schema.id} must answer that schema`, one)
      }
    }
  },
  {
    id: "discovery.resourceTypeSchemas",
    description: "Every resource type's schema and schema extensions are defined in /Schemas",
    run: async () => {
      for (const type of discovery.resourceTypes) {
        for (const urn of [type.schema, ...(type.schemaExtensions ?? []).map((e) => e.schema)]) {
          check(discovery.schemas.has(urn), `${type.name} names ${urn}, which /Schemas does not define`)
        }
      }
      return `${discovery.resourceTypes.map((t) => t.name).join(", ")}`
    }
  }
]
