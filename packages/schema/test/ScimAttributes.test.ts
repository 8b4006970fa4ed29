/**
 * ScimAttributes.ts, what the SCIM discovery endpoints advertise: the schemas and their attributes, the resource types,
 * the service provider's configuration and limits; documents the protocol's schemas read and write back.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ScimAttributes from "../src/ScimAttributes.js"
import * as ScimProtocol from "../src/ScimProtocol.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

const base = "https://orgplane.example/scim/v2/scc_01m6dsg7e0f5cv7n2jh5v61kpp"

describe("ScimAttributes", () => {
  it("advertises the schemas, resource types and limits an identity provider reads (RFC 7643)", () => {
    expect([ScimAttributes.MaxResults, ScimAttributes.MaxStringLength, ScimAttributes.MaxValues, ScimAttributes.MaxOperations, ScimAttributes.MaxFilterLength])
      .toEqual([1000, 2048, 10000, 1000, 4096])
    expect(ScimAttributes.Schemas.map((schema) => [schema.id, schema.name, schema.attributes.map(({ name }) => name)])).toEqual([
      ["urn:ietf:params:scim:schemas:core:2.0:User", "User", ["userName", "name", "displayName", "title", "active", "emails"]],
      ["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "EnterpriseUser", ["employeeNumber", "department", "manager"]],
      ["urn:ietf:params:scim:schemas:core:2.0:Group", "Group", ["displayName", "members"]]
    ])
    expect(ScimAttributes.CommonAttributes.map(({ name, mutability, returned }) => [name, mutability, returned])).toEqual([
      ["id", "readOnly", "always"],
      ["externalId", "readWrite", "default"],
      ["schemas", "readOnly", "always"],
      ["meta", "readOnly", "always"]
    ])
    expect(ScimAttributes.serviceProviderConfigDocument(base)).toMatchObject({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
      patch: { supported: true },
      bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
      filter: { supported: true, maxResults: 1000 },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      authenticationSchemes: [{ type: "oauthbearertoken", primary: true }],
      meta: { resourceType: "ServiceProviderConfig", location: `${base}/ServiceProviderConfig` }
    })
    const types = ScimAttributes.ResourceTypes.map((type) => ScimAttributes.resourceTypeDocument(type, base))
    expect(types).toMatchObject([
      {
        id: "User",
        endpoint: "/Users",
        schema: "urn:ietf:params:scim:schemas:core:2.0:User",
        schemaExtensions: [{ schema: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", required: false }],
        meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/User` }
      },
      { id: "Group", endpoint: "/Groups", schema: "urn:ietf:params:scim:schemas:core:2.0:Group", schemaExtensions: [] }
    ])
    expect(ScimAttributes.listResponse(types)).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 2,
      startIndex: 1,
      itemsPerPage: 2,
      Resources: types
    })
  })

  it("makes documents the protocol's schemas (ScimProtocol, which types them) read and write back", () => {
    roundTrips(ScimProtocol.ScimSchemaDocument, ScimAttributes.Schemas.map((schema) => ScimAttributes.schemaDocument(schema, base)))
    roundTrips(ScimProtocol.ScimResourceTypeDocument, ScimAttributes.ResourceTypes.map((type) => ScimAttributes.resourceTypeDocument(type, base)))
    roundTrips(ScimProtocol.ScimServiceProviderConfig, [ScimAttributes.serviceProviderConfigDocument(base)])
    const [userName] = ScimAttributes.UserSchema.attributes.map((attribute) => ScimAttributes.schemaDocument({ ...ScimAttributes.UserSchema, attributes: [attribute] }, base).attributes[0])
    takes(ScimProtocol.ScimAttributeDocument, [
      userName,
      { ...userName, subAttributes: [{ ...userName, subAttributes: [] }] },
      { ...userName, canonicalValues: ["work"], referenceTypes: ["User"] }
    ])
    refuses(ScimProtocol.ScimAttributeDocument, [
      { ...userName, subAttributes: [{ name: "x" }] },
      { ...userName, multiValued: "false" },
      { ...userName, canonicalValues: "work" }
    ])
  })
})
