import { describe, expect, it } from "@effect/vitest"
import * as ApiKeys from "../src/ApiKeys.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { type Action, Actions, allows, Roles } from "../src/Policy.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { examplesAt, withGeneratedArrayDescription } from "./people.js"
import { as010, guardedSince010 } from "./changes.js"
import { closure, effect3 } from "./effect3.js"

const ApiKeys3 = effect3("ApiKeys")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("ApiKeys on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(ApiKeys, ApiKeys3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, not in the document (withGeneratedArrayDescription).
      ApiKeyScopesRequest: (schema) => withGeneratedArrayDescription(schema, 100)
    })
    expect(names.sort()).toEqual(["ApiKey", "ApiKeyPage", "ApiKeyScope", "ApiKeyScopeRequest", "ApiKeyScopesRequest", "CreateApiKeyRequest", "CreatedApiKey"])
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ApiKeys.ApiKey, ApiKeys3.ApiKey, examplesOfComponent("ApiKey"))
    roundTrips(ApiKeys.ApiKeyPage, ApiKeys3.ApiKeyPage, examplesOfComponent("ApiKeyPage"))
    roundTrips(ApiKeys.CreateApiKeyRequest, ApiKeys3.CreateApiKeyRequest, examplesAt("POST /v1/api-keys request"))
    roundTrips(ApiKeys.CreatedApiKey, ApiKeys3.CreatedApiKey, examplesAt("POST /v1/api-keys 201"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(ApiKeys.CreateApiKeyRequest, ApiKeys3.CreateApiKeyRequest, [
      { name: "CI deploys" },
      { name: " CI ", expiresAt: "2027-01-31T10:20:00+01:00", scopes: ["teams.*", "members.read"] },
      { name: "CI", scopes: ["admin.*"] },
      { name: "" },
      { name: "x".repeat(65) },
      { name: "CI", scopes: [] },
      { name: "CI", scopes: ["teams.delete"] },
      { name: "CI", scopes: ["*"] },
      { name: "CI", scopes: Array.from({ length: 101 }, () => "teams.read") },
      { name: "CI", expiresAt: "2027-01-31" }
    ])
    sameOn(ApiKeys.ApiKeyScopeRequest, ApiKeys3.ApiKeyScopeRequest, ["members.read", "members.*", "members", "nothing.*", 1])
  })

  it("expands, collapses and defaults scopes as the Effect 3 module does", () => {
    const requests: ReadonlyArray<ReadonlyArray<typeof ApiKeys.ApiKeyScopeRequest.Type>> = [
      [], ["teams.*"], ["teams.*", "teams.read", "members.read"], ["admin.*", "apiKeys.manage"], [...Actions]
    ]
    // Each asked of Effect 3 as 0.1.0 had the actions (changes.ts): every action is every action of either table.
    for (const requested of requests) {
      expect(as010(ApiKeys.expandScopes(requested))).toEqual(ApiKeys3.expandScopes(as010(requested)))
      expect(ApiKeys.collapseScopes(ApiKeys.expandScopes(requested))).toEqual(ApiKeys3.collapseScopes(ApiKeys3.expandScopes(as010(requested))))
    }
    expect(ApiKeys.collapseScopes(["teams.read"])).toEqual(["teams.read"])
    // Issue 55: actions a key made without scopes took, now only when a scope names them (changes.ts).
    for (const role of Roles) {
      const published = [...ApiKeys3.defaultScopes(closure((action: Action) => allows(role, action), role))].map(String)
      expect(ApiKeys.defaultScopes((action) => allows(role, action))).toEqual(published.filter((action) => !guardedSince010.includes(action)))
    }
    expect(ApiKeys.defaultScopes(() => true)).not.toContain("apiKeys.manage")
  })
})
