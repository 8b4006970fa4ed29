import { describe, expect, it } from "@effect/vitest"
import * as ScimAttributes from "../src/ScimAttributes.js"
import * as ScimProtocol from "../src/ScimProtocol.js"
import { roundTrips, sameOn } from "./differential.js"
import { type Effect3, effect3 } from "./effect3.js"

const ScimAttributes3 = effect3("ScimAttributes")
const ScimProtocol3 = effect3("ScimProtocol")

const base = "https://orgplane.example/scim/v2/scc_01m6dsg7e0f5cv7n2jh5v61kpp"

describe("ScimAttributes on Effect 4", () => {
  it("advertises the same attributes, limits and documents as the Effect 3 module", () => {
    expect(ScimAttributes.Schemas).toEqual(ScimAttributes3.Schemas)
    expect(ScimAttributes.ResourceTypes).toEqual(ScimAttributes3.ResourceTypes)
    expect(ScimAttributes.CommonAttributes).toEqual(ScimAttributes3.CommonAttributes)
    expect([ScimAttributes.MaxResults, ScimAttributes.MaxStringLength, ScimAttributes.MaxValues, ScimAttributes.MaxOperations, ScimAttributes.MaxFilterLength])
      .toEqual([ScimAttributes3.MaxResults, ScimAttributes3.MaxStringLength, ScimAttributes3.MaxValues, ScimAttributes3.MaxOperations, ScimAttributes3.MaxFilterLength])
    expect(ScimAttributes.serviceProviderConfigDocument(base)).toEqual(ScimAttributes3.serviceProviderConfigDocument(base))
    const schemas = ScimAttributes.Schemas.map((schema) => ScimAttributes.schemaDocument(schema, base))
    expect(schemas).toEqual(ScimAttributes3.Schemas.map((schema: Effect3) => ScimAttributes3.schemaDocument(schema, base)))
    const types = ScimAttributes.ResourceTypes.map((type) => ScimAttributes.resourceTypeDocument(type, base))
    expect(types).toEqual(ScimAttributes3.ResourceTypes.map((type: Effect3) => ScimAttributes3.resourceTypeDocument(type, base)))
    expect(ScimAttributes.listResponse(types)).toEqual(ScimAttributes3.listResponse(types))
  })

  it("makes documents the protocol's schemas (ScimProtocol, which types them) read and write back", () => {
    roundTrips(ScimProtocol.ScimSchemaDocument, ScimProtocol3.ScimSchemaDocument, ScimAttributes.Schemas.map((schema) => ScimAttributes.schemaDocument(schema, base)))
    roundTrips(ScimProtocol.ScimResourceTypeDocument, ScimProtocol3.ScimResourceTypeDocument, ScimAttributes.ResourceTypes.map((type) => ScimAttributes.resourceTypeDocument(type, base)))
    roundTrips(ScimProtocol.ScimServiceProviderConfig, ScimProtocol3.ScimServiceProviderConfig, [ScimAttributes.serviceProviderConfigDocument(base)])
    const [userName] = ScimAttributes.UserSchema.attributes.map((attribute) => ScimAttributes.schemaDocument({ ...ScimAttributes.UserSchema, attributes: [attribute] }, base).attributes[0])
    sameOn(ScimProtocol.ScimAttributeDocument, ScimProtocol3.ScimAttributeDocument, [
      userName,
      { ...userName, subAttributes: [{ ...userName, subAttributes: [] }] },
      { ...userName, canonicalValues: ["work"], referenceTypes: ["User"] },
      { ...userName, subAttributes: [{ name: "x" }] },
      { ...userName, multiValued: "false" },
      { ...userName, canonicalValues: "work" }
    ])
  })
})
