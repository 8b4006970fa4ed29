/**
 * Namespaces.ts: the modules `@orgplane/schema` exports as namespaces (`Examples`, `OpenApiExamples`, `OpenApiLinks`,
 * `ScimAttributes`), each the module itself, with the names code written against the package uses.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Examples from "../src/Examples.js"
import * as Namespaces from "../src/Namespaces.js"
import * as OpenApiExamples from "../src/OpenApiExamples.js"
import * as OpenApiLinks from "../src/OpenApiLinks.js"
import * as ScimAttributes from "../src/ScimAttributes.js"

describe("Namespaces", () => {
  it("exports the modules as namespaces, each the module itself", () => {
    expect(Object.keys(Namespaces).sort()).toEqual(["Examples", "OpenApiExamples", "OpenApiLinks", "ScimAttributes"])
    expect(Namespaces.Examples).toBe(Examples)
    expect(Namespaces.OpenApiExamples).toBe(OpenApiExamples)
    expect(Namespaces.OpenApiLinks).toBe(OpenApiLinks)
    expect(Namespaces.ScimAttributes).toBe(ScimAttributes)
  })

  it("gives each namespace its names", () => {
    const names = Object.fromEntries(Object.entries(Namespaces).map(([name, module]) => [name, Object.keys(module).sort()]))
    expect(names).toEqual({
      Examples: ["acme", "ada", "alan", "edsger", "exampleOf", "examplePassword", "exampleTime", "exampleToken", "grace"],
      OpenApiExamples: ["addExamples", "composeExample", "encodeExample", "ownExamples", "parameterExamples", "parameterSchemas", "wireExamples"],
      OpenApiLinks: ["addLinks", "createdIds", "operationsOf"],
      ScimAttributes: [
        "CommonAttributes",
        "EnterpriseUserSchema",
        "EnterpriseUserSchemaId",
        "GroupResourceType",
        "GroupSchema",
        "GroupSchemaId",
        "MaxFilterLength",
        "MaxOperations",
        "MaxResults",
        "MaxStringLength",
        "MaxValues",
        "ResourceTypes",
        "Schemas",
        "UserEmailRule",
        "UserResourceType",
        "UserSchema",
        "UserSchemaId",
        "listResponse",
        "resourceTypeDocument",
        "schemaDocument",
        "serviceProviderConfigDocument"
      ]
    })
  })
})
