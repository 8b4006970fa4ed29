/**
 * Attribute paths over the advertised SCIM schemas (RFC 7643), for filters, projection and PATCH. The table itself,
 * and the discovery documents built from it, is the schema package's `ScimAttributes` (so the API's examples are the
 * documents the server answers): re-exported here under the names the server uses.
 */
import { ScimAttributes } from "@orgplane/schema"

export type AttributeType = ScimAttributes.AttributeType
export type Mutability = ScimAttributes.Mutability
export type Returned = ScimAttributes.Returned
export type Uniqueness = ScimAttributes.Uniqueness
export type Attribute = ScimAttributes.Attribute
export type SchemaDefinition = ScimAttributes.SchemaDefinition
export type ResourceTypeDefinition = ScimAttributes.ResourceTypeDefinition

// Each with its type named through the namespace: declaration files cannot name the namespace's interfaces otherwise.
export const CommonAttributes: typeof ScimAttributes.CommonAttributes = ScimAttributes.CommonAttributes
export const listResponse: typeof ScimAttributes.listResponse = ScimAttributes.listResponse
export const EnterpriseUserSchema: typeof ScimAttributes.EnterpriseUserSchema = ScimAttributes.EnterpriseUserSchema
export const EnterpriseUserSchemaId: typeof ScimAttributes.EnterpriseUserSchemaId = ScimAttributes.EnterpriseUserSchemaId
export const GroupResourceType: typeof ScimAttributes.GroupResourceType = ScimAttributes.GroupResourceType
export const GroupSchema: typeof ScimAttributes.GroupSchema = ScimAttributes.GroupSchema
export const GroupSchemaId: typeof ScimAttributes.GroupSchemaId = ScimAttributes.GroupSchemaId
export const MaxFilterLength: typeof ScimAttributes.MaxFilterLength = ScimAttributes.MaxFilterLength
export const MaxOperations: typeof ScimAttributes.MaxOperations = ScimAttributes.MaxOperations
export const MaxResults: typeof ScimAttributes.MaxResults = ScimAttributes.MaxResults
export const MaxStringLength: typeof ScimAttributes.MaxStringLength = ScimAttributes.MaxStringLength
export const MaxValues: typeof ScimAttributes.MaxValues = ScimAttributes.MaxValues
export const ResourceTypes: typeof ScimAttributes.ResourceTypes = ScimAttributes.ResourceTypes
export const resourceTypeDocument: typeof ScimAttributes.resourceTypeDocument = ScimAttributes.resourceTypeDocument
export const schemaDocument: typeof ScimAttributes.schemaDocument = ScimAttributes.schemaDocument
export const Schemas: typeof ScimAttributes.Schemas = ScimAttributes.Schemas
export const serviceProviderConfigDocument: typeof ScimAttributes.serviceProviderConfigDocument = ScimAttributes.serviceProviderConfigDocument
export const UserResourceType: typeof ScimAttributes.UserResourceType = ScimAttributes.UserResourceType
export const UserSchema: typeof ScimAttributes.UserSchema = ScimAttributes.UserSchema
export const UserSchemaId: typeof ScimAttributes.UserSchemaId = ScimAttributes.UserSchemaId

/**
 * An attribute path resolved against a resource type: `schema` is the URN that holds it (the enterprise extension's
 * attributes live under their URN key in a resource), `attribute` the top-level attribute, `subAttribute` the one
 * below it when the path has two parts.
 */
export interface ResolvedPath {
  readonly schema: string
  readonly attribute: Attribute
  readonly subAttribute: Attribute | undefined
}

const findIn = (attributes: ReadonlyArray<Attribute> | undefined, name: string) =>
  attributes?.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase())

/** The core schema's URN prefix of a path (`urn:…:User:userName`) and the extension's are matched without case. */
const splitUrn = (
  resourceType: ResourceTypeDefinition,
  path: string
): { readonly schema: SchemaDefinition; readonly rest: string } | undefined => {
  const lower = path.toLowerCase()
  for (const schema of [resourceType.schema, ...resourceType.extensions]) {
    const prefix = schema.id.toLowerCase()
    if (lower === prefix) return { schema, rest: "" }
    if (lower.startsWith(`${prefix}:`)) return { schema, rest: path.slice(prefix.length + 1) }
  }
  return lower.startsWith("urn:") ? undefined : { schema: resourceType.schema, rest: path }
}

/**
 * Resolves `attr`, `attr.sub`, `urn:…:attr` or `urn:…:attr.sub` (names without case, RFC 7644 §3.10); undefined for
 * anything not advertised.
 */
export const resolvePath = (resourceType: ResourceTypeDefinition, path: string): ResolvedPath | undefined => {
  const split = splitUrn(resourceType, path)
  if (split === undefined || split.rest === "") return undefined
  const [name, sub, ...more] = split.rest.split(".")
  if (more.length > 0 || name === undefined || name === "") return undefined
  const isCore = split.schema.id === resourceType.schema.id
  const top = findIn(split.schema.attributes, name) ?? (isCore ? findIn(CommonAttributes, name) : undefined)
  if (top === undefined) return undefined
  if (sub === undefined) return { schema: split.schema.id, attribute: top, subAttribute: undefined }
  const subAttribute = findIn(top.subAttributes, sub)
  return subAttribute === undefined ? undefined : { schema: split.schema.id, attribute: top, subAttribute }
}

/** An extension's URN when `name` is one of the resource type's extensions (a key of a resource holding its attributes). */
export const extensionOf = (resourceType: ResourceTypeDefinition, name: string): SchemaDefinition | undefined =>
  resourceType.extensions.find((schema) => schema.id.toLowerCase() === name.toLowerCase())
