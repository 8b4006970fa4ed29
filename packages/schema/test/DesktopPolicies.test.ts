import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { requestBody } from "../src/Common.js"
import * as DesktopPolicies from "../src/DesktopPolicies.js"
import { alan } from "../src/Examples.js"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { operationExamples, refinedIntAsDocumented, withMember } from "./catalog.js"
import { priority, priorityAsDocumented } from "./desktopPolicies.js"
import { componentSchema, decode3, examplesOfComponent, idsAsReferences, jsonSchema3Of, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { effect3 } from "./effect3.js"

const JSONSchema3 = effect3("effect/JSONSchema")
const DesktopPolicies3 = effect3("DesktopPolicies")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("DesktopPolicies on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(DesktopPolicies, DesktopPolicies3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // The same difference at the root. The comparison reads Effect 3's JSON Schema with a root reference resolved
      // and the keywords beside it left out, so the port is held here to Effect 3's own output, then read as the
      // comparison reads it.
      DesktopPolicyPriority: (schema) => {
        expect(refinedIntAsDocumented(schema)).toEqual({ $ref: "ref:Int", ...priority })
        expect(JSON.parse(JSON.stringify(JSONSchema3.make(DesktopPolicies3.DesktopPolicyPriority)))).toMatchObject({ $ref: "#/$defs/Int", ...priority })
        return jsonSchema3Of(DesktopPolicies3.DesktopPolicyPriority)
      },
      CreateDesktopPolicyRequest: priorityAsDocumented("Default 0."),
      UpdateDesktopPolicyRequest: priorityAsDocumented(),
      // A real difference, for the OpenAPI normalisation step: a member that describes a named schema
      // (`decidedBy.onboardingPrompts`, DesktopPolicySource) refers to it with its description beside (annotateKey),
      // where Effect 3 inlined a described copy.
      EffectiveDesktopPolicy: (schema) => {
        const source = { $ref: "ref:DesktopPolicySource", description: "Decides the prompts and their descriptions." }
        expect(schema).toMatchObject({ properties: { decidedBy: { properties: { onboardingPrompts: source } } } })
        const decidedBy = splitKey(splitKey(componentSchema("EffectiveDesktopPolicy"), "properties").value ?? null, "decidedBy").value ?? null
        const copy = splitKey(splitKey(decidedBy, "properties").value ?? null, "onboardingPrompts").value ?? null
        return JSON.parse(JSON.stringify(schema).replace(JSON.stringify(source), JSON.stringify(idsAsReferences(copy))))
      }
    })
    expect(names.length).toBeGreaterThan(10)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(DesktopPolicies.DesktopPolicy, DesktopPolicies3.DesktopPolicy, examplesOfComponent("DesktopPolicy"))
    roundTrips(DesktopPolicies.DesktopPolicyDocument, DesktopPolicies3.DesktopPolicyDocument, examplesOfComponent("DesktopPolicyDocument"))
    roundTrips(DesktopPolicies.DesktopPolicyPage, DesktopPolicies3.DesktopPolicyPage, examplesOfComponent("DesktopPolicyPage"))
    roundTrips(DesktopPolicies.DesktopPolicyResponse, DesktopPolicies3.DesktopPolicyResponse, examplesOfComponent("DesktopPolicyResponse"))
    roundTrips(DesktopPolicies.DesktopPolicySource, DesktopPolicies3.DesktopPolicySource, examplesOfComponent("DesktopPolicySource"))
    roundTrips(DesktopPolicies.EffectiveDesktopPolicy, DesktopPolicies3.EffectiveDesktopPolicy, examplesOfComponent("EffectiveDesktopPolicy"))
    roundTrips(DesktopPolicies.EffectiveDesktopPolicyResponse, DesktopPolicies3.EffectiveDesktopPolicyResponse, examplesOfComponent("EffectiveDesktopPolicyResponse"))
    roundTrips(DesktopPolicies.CreateDesktopPolicyRequest, DesktopPolicies3.CreateDesktopPolicyRequest, operationExamples("POST /v1/desktop-policies request"))
    roundTrips(DesktopPolicies.UpdateDesktopPolicyRequest, DesktopPolicies3.UpdateDesktopPolicyRequest, operationExamples("PATCH /v1/desktop-policies/{desktopPolicyId} request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    const teams = Array.from({ length: 501 }, () => exampleId("tem"))
    sameOn(DesktopPolicies.CreateDesktopPolicyRequest, DesktopPolicies3.CreateDesktopPolicyRequest, [
      { policyName: "Contractors", policy: {} },
      { policyName: " Contractors ", policy: { allowCustomProviders: false, onboardingPrompts: [" Summarize "], onboardingPromptDescriptions: [""] }, priority: 1_000_000, isEnabled: false, memberIds: [alan.membershipId], teamIds: teams.slice(0, 500) },
      { policyName: "Contractors", policy: {}, priority: 0 },
      { policyName: "", policy: {} },
      { policyName: "Contractors" },
      { policyName: "Contractors", policy: { allowCustomProviders: "no" } },
      { policyName: "Contractors", policy: { onboardingPrompts: ["a", "b", "c", "d"] } },
      { policyName: "Contractors", policy: { onboardingPrompts: [""] } },
      { policyName: "Contractors", policy: { onboardingPrompts: ["x".repeat(501)] } },
      { policyName: "Contractors", policy: { onboardingPromptDescriptions: ["x".repeat(121)] } },
      { policyName: "Contractors", policy: {}, priority: -1 },
      { policyName: "Contractors", policy: {}, priority: 1_000_001 },
      { policyName: "Contractors", policy: {}, priority: 1.5 },
      { policyName: "Contractors", policy: {}, teamIds: teams },
      { policyName: "Contractors", policy: {}, teamIds: [alan.membershipId] }
    ])
    sameOn(DesktopPolicies.UpdateDesktopPolicyRequest, DesktopPolicies3.UpdateDesktopPolicyRequest, [
      {}, { priority: 20, isEnabled: false }, { policy: { showWelcomePage: false } }, { memberIds: [] }, { priority: "20" }, { isEnabled: null }, { policyName: "   " }
    ])
    sameOn(DesktopPolicies.DesktopPolicyListQuery, DesktopPolicies3.DesktopPolicyListQuery, [{}, { limit: "100" }, { limit: "101" }])
    sameOn(DesktopPolicies.DesktopPolicyPath, DesktopPolicies3.DesktopPolicyPath, [{ desktopPolicyId: exampleId("dpo") }, { desktopPolicyId: exampleId("tem") }])
    // A misspelt switch is refused, not dropped: Effect 3 by the document's own parse options, Effect 4 by the API's
    // PayloadParseOptions (`requestBody`), which reach the nested document as well.
    const misspelt = { policyName: "Contractors", policy: { allowCustomProvider: false } }
    expect(decode3(DesktopPolicies3.CreateDesktopPolicyRequest, misspelt).ok).toBe(false)
    expect(Exit.isFailure(Schema.decodeUnknownExit(DesktopPolicies.CreateDesktopPolicyRequest, requestBody)(misspelt))).toBe(true)
    expect(Exit.isSuccess(Schema.decodeUnknownExit(DesktopPolicies.CreateDesktopPolicyRequest, requestBody)({ ...misspelt, policy: {} }))).toBe(true)
    // What a policy decides, and a stored priority read back as it is.
    expect(DesktopPolicies.DesktopPolicySettings).toEqual(DesktopPolicies3.DesktopPolicySettings)
    const [policy] = examplesOfComponent("DesktopPolicy")
    sameOn(DesktopPolicies.DesktopPolicy, DesktopPolicies3.DesktopPolicy, [policy, withMember(policy ?? null, "priority", 2.5), withMember(policy ?? null, "priority", "10")])
  })
})
