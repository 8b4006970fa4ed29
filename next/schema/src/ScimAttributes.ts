/**
 * The advertised SCIM schemas (RFC 7643): one table of the User (with the enterprise extension) and Group attributes
 * that drives the `/Schemas`, `/ResourceTypes` and `/ServiceProviderConfig` documents (built here, so the API's
 * examples are the documents the server answers) and, on the server, the filter mapping (types, case sensitivity),
 * attribute projection (`returned`) and PATCH (`mutability`, value types). Only what is here is stored and returned.
 */
import type { ScimAttributeDocument } from "./ScimProtocol.js"

export type AttributeType = "string" | "boolean" | "complex" | "dateTime" | "reference" | "integer" | "decimal"
export type Mutability = "readOnly" | "readWrite" | "immutable" | "writeOnly"
export type Returned = "always" | "never" | "default" | "request"
export type Uniqueness = "none" | "server" | "global"

export interface Attribute {
  readonly name: string
  readonly type: AttributeType
  readonly multiValued: boolean
  readonly description: string
  readonly required: boolean
  readonly caseExact: boolean
  readonly mutability: Mutability
  readonly returned: Returned
  readonly uniqueness: Uniqueness
  readonly canonicalValues?: ReadonlyArray<string>
  readonly referenceTypes?: ReadonlyArray<string>
  readonly subAttributes?: ReadonlyArray<Attribute>
}

export interface SchemaDefinition {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly attributes: ReadonlyArray<Attribute>
}

export const UserSchemaId = "urn:ietf:params:scim:schemas:core:2.0:User"
export const EnterpriseUserSchemaId = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
export const GroupSchemaId = "urn:ietf:params:scim:schemas:core:2.0:Group"

const attribute = (
  name: string,
  type: AttributeType,
  description: string,
  options: Partial<Omit<Attribute, "name" | "type" | "description">> = {}
): Attribute => ({
  name,
  type,
  description,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...options
})

/**
 * What a User needs beyond `userName` (a rule the schema's flags cannot say): an email, by which the person's account
 * is found or created. Said in the User schema's descriptions and on the page `documentationUri` leads to.
 */
export const UserEmailRule =
  "A User needs an email: its primary email, else its first, else its userName when that is an email address; without one, a create is 400 invalidValue."

export const UserSchema: SchemaDefinition = {
  id: UserSchemaId,
  name: "User",
  description: `User Account: an organization member. ${UserEmailRule}`,
  attributes: [
    attribute("userName", "string", "Unique identifier for the User, compared case-insensitively; the User's email when emails holds none.", {
      required: true,
      uniqueness: "server"
    }),
    attribute("name", "complex", "The components of the user's name.", {
      subAttributes: [
        attribute("formatted", "string", "The full name, formatted for display."),
        attribute("familyName", "string", "The family name of the User."),
        attribute("givenName", "string", "The given name of the User.")
      ]
    }),
    attribute("displayName", "string", "The name of the User, suitable for display to end-users."),
    attribute("title", "string", "The user's title, such as \"Vice President\"."),
    attribute("active", "boolean", "The User's administrative status: false suspends the membership."),
    attribute("emails", "complex", `Email addresses for the user. ${UserEmailRule}`, {
      multiValued: true,
      subAttributes: [
        attribute("value", "string", "Email address for the User."),
        attribute("type", "string", "A label indicating the email's function.", {
          canonicalValues: ["work", "home", "other"]
        }),
        attribute(
          "primary",
          "boolean",
          "Indicates the primary email address, the one the person's account is found by: true on one email at most (more is 400 invalidValue); making one primary makes the others not."
        )
      ]
    })
  ]
}

export const EnterpriseUserSchema: SchemaDefinition = {
  id: EnterpriseUserSchemaId,
  name: "EnterpriseUser",
  description: "Enterprise User",
  attributes: [
    attribute("employeeNumber", "string", "Numeric or alphanumeric identifier assigned to a person."),
    attribute("department", "string", "Identifies the name of a department."),
    attribute("manager", "complex", "The User's manager.", {
      subAttributes: [
        attribute("value", "string", "The id of the SCIM resource representing the User's manager."),
        attribute("displayName", "string", "The displayName of the User's manager.", { mutability: "readOnly" })
      ]
    })
  ]
}

export const GroupSchema: SchemaDefinition = {
  id: GroupSchemaId,
  name: "Group",
  description: "Group: maps onto a team according to the connection's group mapping mode.",
  attributes: [
    attribute("displayName", "string", "A human-readable name for the Group, unique in the connection.", {
      required: true,
      uniqueness: "server"
    }),
    attribute("members", "complex", "A list of members of the Group (Users only).", {
      multiValued: true,
      subAttributes: [
        attribute("value", "string", "Identifier of the member of this Group.", {
          caseExact: true,
          mutability: "immutable"
        }),
        attribute("$ref", "reference", "The URI of the member resource.", {
          caseExact: true,
          mutability: "immutable",
          referenceTypes: ["User"]
        }),
        attribute("display", "string", "A human-readable name of the member.", { mutability: "readOnly" }),
        attribute("type", "string", "The type of the member.", {
          mutability: "immutable",
          canonicalValues: ["User"]
        })
      ]
    })
  ]
}

/**
 * The common attributes of every resource (RFC 7643 §3.1): not part of any schema's `attributes` (so not in the
 * `/Schemas` documents), but projected, filtered and protected from PATCH by the same rules.
 */
export const CommonAttributes: ReadonlyArray<Attribute> = [
  attribute("id", "string", "Unique identifier of the resource, issued by the service provider.", {
    caseExact: true,
    mutability: "readOnly",
    returned: "always",
    uniqueness: "server"
  }),
  attribute("externalId", "string", "The resource's identifier in the provisioning client.", { caseExact: true }),
  attribute("schemas", "string", "The schemas of the resource.", {
    multiValued: true,
    caseExact: true,
    mutability: "readOnly",
    returned: "always"
  }),
  attribute("meta", "complex", "Resource metadata.", {
    mutability: "readOnly",
    returned: "always",
    subAttributes: [
      attribute("resourceType", "string", "The resource type.", { caseExact: true, mutability: "readOnly" }),
      attribute("created", "dateTime", "When the resource was created.", { mutability: "readOnly" }),
      attribute("lastModified", "dateTime", "When the resource was last changed.", { mutability: "readOnly" }),
      attribute("location", "reference", "The URI of the resource.", { caseExact: true, mutability: "readOnly" }),
      attribute("version", "string", "The resource's version (its ETag).", { caseExact: true, mutability: "readOnly" })
    ]
  })
]

export interface ResourceTypeDefinition {
  readonly name: "User" | "Group"
  readonly endpoint: "/Users" | "/Groups"
  readonly description: string
  readonly schema: SchemaDefinition
  readonly extensions: ReadonlyArray<SchemaDefinition>
}

export const UserResourceType: ResourceTypeDefinition = {
  name: "User",
  endpoint: "/Users",
  description: "User Account: an organization member",
  schema: UserSchema,
  extensions: [EnterpriseUserSchema]
}

export const GroupResourceType: ResourceTypeDefinition = {
  name: "Group",
  endpoint: "/Groups",
  description: "Group: a team of the organization, per the connection's mapping mode",
  schema: GroupSchema,
  extensions: []
}

export const ResourceTypes: ReadonlyArray<ResourceTypeDefinition> = [UserResourceType, GroupResourceType]
export const Schemas: ReadonlyArray<SchemaDefinition> = [UserSchema, EnterpriseUserSchema, GroupSchema]

/** The attributes of a schema as its `/Schemas` document lists them (RFC 7643 §7). */
const attributeDocument = (attribute: Attribute): ScimAttributeDocument => ({
  name: attribute.name,
  type: attribute.type,
  multiValued: attribute.multiValued,
  description: attribute.description,
  required: attribute.required,
  caseExact: attribute.caseExact,
  mutability: attribute.mutability,
  returned: attribute.returned,
  uniqueness: attribute.uniqueness,
  ...(attribute.canonicalValues === undefined ? {} : { canonicalValues: attribute.canonicalValues }),
  ...(attribute.referenceTypes === undefined ? {} : { referenceTypes: attribute.referenceTypes }),
  ...(attribute.subAttributes === undefined ? {} : { subAttributes: attribute.subAttributes.map(attributeDocument) })
})

export const schemaDocument = (schema: SchemaDefinition, baseUrl: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
  id: schema.id,
  name: schema.name,
  description: schema.description,
  attributes: schema.attributes.map(attributeDocument),
  meta: { resourceType: "Schema", location: `${baseUrl}/Schemas/${schema.id}` }
})

export const resourceTypeDocument = (resourceType: ResourceTypeDefinition, baseUrl: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
  id: resourceType.name,
  name: resourceType.name,
  endpoint: resourceType.endpoint,
  description: resourceType.description,
  schema: resourceType.schema.id,
  schemaExtensions: resourceType.extensions.map((extension) => ({ schema: extension.id, required: false })),
  meta: { resourceType: "ResourceType", location: `${baseUrl}/ResourceTypes/${resourceType.name}` }
})

/** A ListResponse of every one of `resources` on one page (the discovery lists: `/Schemas`, `/ResourceTypes`). */
export const listResponse = <A>(resources: ReadonlyArray<A>) => ({
  schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources
})

/** The most results one list answers, advertised as `filter.maxResults`. */
export const MaxResults = 1000

/**
 * What the server reads of a request, at most: characters of a string (an attribute's value, a PATCH path), values of
 * a multi-valued attribute (a User's emails, a Group's members), operations of a PatchOp, characters of a filter.
 * Beyond them a request is a SCIM 400 (`invalidValue`, `invalidPath`, `invalidFilter`).
 */
export const MaxStringLength = 2048
export const MaxValues = 10_000
export const MaxOperations = 1000
export const MaxFilterLength = 4096

export const serviceProviderConfigDocument = (baseUrl: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
  // The section that states what a User needs (UserEmailRule), which the document's flags cannot say.
  documentationUri: "https://github.com/orgplane/orgplane/blob/main/docs/scim.md#what-orgplane-supports",
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MaxResults },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: true },
  authenticationSchemes: [
    {
      type: "oauthbearertoken",
      name: "OAuth Bearer Token",
      description: "A SCIM token of this connection (scim_…), sent as `Authorization: Bearer <token>`.",
      primary: true
    }
  ],
  meta: { resourceType: "ServiceProviderConfig", location: `${baseUrl}/ServiceProviderConfig` }
})
