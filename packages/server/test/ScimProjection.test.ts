/**
 * SCIM attribute projection with the advertised `returned` rules: pure, no server. packages/server/test/
 * ScimProjection.test.ts's assertions.
 */
import { describe, expect, it } from "@effect/vitest"
import { EnterpriseUserSchemaId, UserResourceType } from "../src/scim/Attributes.js"
import { projectResource } from "../src/scim/Projection.js"

const resource = {
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", EnterpriseUserSchemaId],
  id: "om_1",
  externalId: "ext-1",
  userName: "ada@example.com",
  name: { givenName: "Ada", familyName: "Lovelace" },
  active: true,
  emails: [{ value: "ada@example.com", type: "work", primary: true }],
  [EnterpriseUserSchemaId]: { department: "R&D", employeeNumber: "7" },
  meta: { resourceType: "User", version: "W/\"1\"" }
}
const always = { schemas: resource.schemas, id: "om_1", meta: resource.meta }

describe("projectResource", () => {
  it("answers everything by default", () => {
    expect(projectResource(UserResourceType, resource, {})).toEqual(resource)
  })
  it("attributes: id, schemas and meta always, plus what is named (sub-attributes, case-insensitive, URN-prefixed)", () => {
    expect(projectResource(UserResourceType, resource, { attributes: "userName" })).toEqual({ ...always, userName: "ada@example.com" })
    expect(projectResource(UserResourceType, resource, { attributes: "NAME.givenName, emails.value" })).toEqual({
      ...always,
      name: { givenName: "Ada" },
      emails: [{ value: "ada@example.com" }]
    })
    expect(projectResource(UserResourceType, resource, { attributes: `${EnterpriseUserSchemaId}:department` })).toEqual({
      ...always,
      [EnterpriseUserSchemaId]: { department: "R&D" }
    })
    expect(projectResource(UserResourceType, resource, { attributes: "urn:ietf:params:scim:schemas:core:2.0:User:userName,nickName" }))
      .toEqual({ ...always, userName: "ada@example.com" })
  })
  it("excludedAttributes drops what is named, never id, schemas or meta", () => {
    const { emails: _emails, ...rest } = resource
    expect(projectResource(UserResourceType, resource, { excludedAttributes: "emails,id,meta" })).toEqual(rest)
    expect(projectResource(UserResourceType, resource, { excludedAttributes: "name.familyName" }).name).toEqual({ givenName: "Ada" })
    expect(projectResource(UserResourceType, resource, { excludedAttributes: EnterpriseUserSchemaId })).not.toHaveProperty(EnterpriseUserSchemaId)
  })
  it("drops attributes that are not advertised", () => {
    expect(projectResource(UserResourceType, { ...resource, password: "x", nickName: "y" }, {})).toEqual(resource)
  })
})
