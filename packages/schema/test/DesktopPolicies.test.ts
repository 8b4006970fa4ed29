/**
 * DesktopPolicies.ts: the document's examples of policies decode and encode back unchanged, the requests, queries and
 * paths taken and refused (a misspelt switch refused, not dropped), and the settings a policy decides.
 */
import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { requestBody } from "../src/Common.js"
import * as DesktopPolicies from "../src/DesktopPolicies.js"
import { alan } from "../src/Examples.js"
import { exampleId } from "../src/Ids.js"
import { examplesOfComponent, operationExamples, withMember } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("DesktopPolicies", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(DesktopPolicies.DesktopPolicy, examplesOfComponent("DesktopPolicy"))
    roundTrips(DesktopPolicies.DesktopPolicyDocument, examplesOfComponent("DesktopPolicyDocument"))
    roundTrips(DesktopPolicies.DesktopPolicyPage, examplesOfComponent("DesktopPolicyPage"))
    roundTrips(DesktopPolicies.DesktopPolicyResponse, examplesOfComponent("DesktopPolicyResponse"))
    roundTrips(DesktopPolicies.DesktopPolicySource, examplesOfComponent("DesktopPolicySource"))
    roundTrips(DesktopPolicies.EffectiveDesktopPolicy, examplesOfComponent("EffectiveDesktopPolicy"))
    roundTrips(DesktopPolicies.EffectiveDesktopPolicyResponse, examplesOfComponent("EffectiveDesktopPolicyResponse"))
    roundTrips(DesktopPolicies.CreateDesktopPolicyRequest, operationExamples("POST /v1/desktop-policies request"))
    roundTrips(DesktopPolicies.UpdateDesktopPolicyRequest, operationExamples("PATCH /v1/desktop-policies/{desktopPolicyId} request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const teams = Array.from({ length: 501 }, () => exampleId("tem"))
    takes(DesktopPolicies.CreateDesktopPolicyRequest, [
      { policyName: "Contractors", policy: {} },
      { policyName: " Contractors ", policy: { allowCustomProviders: false, onboardingPrompts: [" Summarize "], onboardingPromptDescriptions: [""] }, priority: 1_000_000, isEnabled: false, memberIds: [alan.membershipId], teamIds: teams.slice(0, 500) },
      { policyName: "Contractors", policy: {}, priority: 0 }
    ])
    refuses(DesktopPolicies.CreateDesktopPolicyRequest, [
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
    takes(DesktopPolicies.UpdateDesktopPolicyRequest, [
      {},
      { priority: 20, isEnabled: false },
      { policy: { showWelcomePage: false } },
      { memberIds: [] }
    ])
    refuses(DesktopPolicies.UpdateDesktopPolicyRequest, [
      { priority: "20" },
      { isEnabled: null },
      { policyName: "   " }
    ])
    takes(DesktopPolicies.DesktopPolicyListQuery, [{}, { limit: "100" }])
    refuses(DesktopPolicies.DesktopPolicyListQuery, [{ limit: "101" }])
    takes(DesktopPolicies.DesktopPolicyPath, [{ desktopPolicyId: exampleId("dpo") }])
    refuses(DesktopPolicies.DesktopPolicyPath, [{ desktopPolicyId: exampleId("tem") }])
    // A misspelt switch is refused, not dropped: the API's PayloadParseOptions (`requestBody`) reach the nested document.
    const misspelt = { policyName: "Contractors", policy: { allowCustomProvider: false } }
    expect(Exit.isFailure(Schema.decodeUnknownExit(DesktopPolicies.CreateDesktopPolicyRequest, requestBody)(misspelt))).toBe(true)
    expect(Exit.isSuccess(Schema.decodeUnknownExit(DesktopPolicies.CreateDesktopPolicyRequest, requestBody)({ ...misspelt, policy: {} }))).toBe(true)
    // What a policy decides, and a stored priority read back as it is.
    expect(DesktopPolicies.DesktopPolicySettings).toEqual([
      "allowCustomProviders",
      "allowPartnerModel",
      "allowMultipleWorkspaces",
      "allowControlSettings",
      "allowManageExtensions",
      "allowBuiltInExtensions",
      "allowAlphaUpdates",
      "showWelcomePage",
      "onboardingPrompts"
    ])
    const [policy] = examplesOfComponent("DesktopPolicy")
    takes(DesktopPolicies.DesktopPolicy, [policy, withMember(policy ?? null, "priority", 2.5)])
    refuses(DesktopPolicies.DesktopPolicy, [withMember(policy ?? null, "priority", "10")])
  })
})
