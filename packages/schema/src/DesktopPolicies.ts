/** Desktop policies: switches of the desktop app set for members and teams, resolved into each member's effective policy. */
import * as Schema from "effect/Schema"
import { Int, Timestamp, TrimmedText } from "./Common.js"
import { DesktopPolicyId, exampleId, MembershipId, OrganizationId, TeamId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { MemberIds } from "./Teams.js"
import { acme, ada, alan, exampleTime } from "./Examples.js"

/** The boolean switches of a policy document, each on (`true`) in the default policy. */
export const DesktopPolicySwitches = [
  "allowCustomProviders",
  "allowPartnerModel",
  "allowMultipleWorkspaces",
  "allowControlSettings",
  "allowManageExtensions",
  "allowBuiltInExtensions",
  "allowAlphaUpdates",
  "showWelcomePage"
] as const
export type DesktopPolicySwitch = typeof DesktopPolicySwitches[number]

/** What a policy can decide: every switch, and the onboarding prompts (decided with their descriptions, as one). */
export const DesktopPolicySettings = [...DesktopPolicySwitches, "onboardingPrompts"] as const
export type DesktopPolicySetting = typeof DesktopPolicySettings[number]

const switchField = Schema.optionalKey(Schema.Boolean)

export const OnboardingPrompts = Schema.Array(TrimmedText(1, 500, "An onboarding prompt")).check(Schema.isMaxLength(3)).annotate({
  description: "Prompts the desktop app offers a new user, at most 3. An empty array sets \"no prompts\"."
})
export const OnboardingPromptDescriptions = Schema.Array(TrimmedText(0, 120, "A prompt's description")).check(Schema.isMaxLength(3))
  .annotate({
    description: "Descriptions of the prompts, by position: a prompt without one has the empty description, one without a prompt is ignored."
  })

const documentFields = {
  allowCustomProviders: switchField,
  allowPartnerModel: switchField,
  allowMultipleWorkspaces: switchField,
  allowControlSettings: switchField,
  allowManageExtensions: switchField,
  allowBuiltInExtensions: switchField,
  allowAlphaUpdates: switchField,
  showWelcomePage: switchField,
  onboardingPrompts: Schema.optionalKey(OnboardingPrompts),
  onboardingPromptDescriptions: Schema.optionalKey(OnboardingPromptDescriptions)
}

/** The example policy: contractors get no custom providers and no alpha updates, and one onboarding prompt. */
const contractors = {
  policyName: "Contractors",
  policy: {
    allowCustomProviders: false,
    allowAlphaUpdates: false,
    onboardingPrompts: ["Summarize the open pull requests assigned to me"],
    onboardingPromptDescriptions: ["Review queue"]
  }
}

const documentDescription =
  "The switches and onboarding prompts this policy sets. A member left out is not set by this policy: lower-priority policies and then the default policy decide it."

/**
 * A policy document: a policy sets only the members it has; a member it leaves out is decided by a lower policy,
 * and in the end by the organization's default policy.
 */
export const DesktopPolicyDocument = Schema.Struct(documentFields).annotate({
  identifier: "DesktopPolicyDocument",
  description: documentDescription,
  examples: [contractors.policy]
})
export type DesktopPolicyDocument = typeof DesktopPolicyDocument.Type

/**
 * The document as a request sends it: strict (a misspelt switch is a 400, not a switch silently left unset), by the
 * API's `HttpApi.PayloadParseOptions` (`requestBody`), which reach nested structs too.
 */
export const DesktopPolicyDocumentInput = Schema.Struct(documentFields).annotate({
  description: documentDescription,
  examples: [contractors.policy]
})

export const DesktopPolicyName = TrimmedText(1, 255, "Policy name")
export const DesktopPolicyPriority = Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 })).annotate({
  description: "0 to 1000000; for each switch, the highest-priority enabled policy that sets it decides (ties: the older one)."
})
export const PolicyTeamIds = Schema.Array(TeamId).check(Schema.isMaxLength(500)).annotate({
  description: "Ids (`tem_`) of teams of the organization; at most 500 entries. A repeated id is taken once."
})

export class DesktopPolicy extends Schema.Class<DesktopPolicy>("DesktopPolicy")(Schema.Struct({
  id: DesktopPolicyId,
  organizationId: OrganizationId,
  policyName: Schema.String,
  isDefault: Schema.Boolean.annotate({
    description: "The organization's default policy: applies to every member, below every other; cannot be deleted or disabled."
  }),
  isEnabled: Schema.Boolean,
  priority: Schema.Finite,
  policy: DesktopPolicyDocument,
  memberIds: Schema.Array(MembershipId).annotate({ description: "Members the policy is assigned to directly." }),
  teamIds: Schema.Array(TeamId).annotate({ description: "Teams whose members the policy applies to." }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Schema.NullOr(Timestamp)
}).annotate({
  examples: [{
    id: exampleId("dpo"),
    organizationId: acme.id,
    ...contractors,
    isDefault: false,
    isEnabled: true,
    priority: 10,
    memberIds: [alan.membershipId],
    teamIds: [exampleId("tem")],
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(300),
    updatedAt: exampleTime(300),
    deletedAt: null
  }]
})) {}

export const DesktopPolicyResponse = Schema.Struct({ desktopPolicy: DesktopPolicy }).annotate({
  identifier: "DesktopPolicyResponse"
})
export const DesktopPolicyPage = Page(DesktopPolicy).annotate({ identifier: "DesktopPolicyPage" })
/** Every bad member reported: the API's `HttpApi.QueryParseOptions` (`allErrors`), not an annotation here. */
export const DesktopPolicyListQuery = Schema.Struct(PageQueryFields)
export type DesktopPolicyListQuery = typeof DesktopPolicyListQuery.Type
export const DesktopPolicyPath = Schema.Struct({ desktopPolicyId: DesktopPolicyId })

export const CreateDesktopPolicyRequest = Schema.Struct({
  policyName: DesktopPolicyName,
  policy: DesktopPolicyDocumentInput,
  priority: Schema.optionalKey(DesktopPolicyPriority).annotateKey({ description: "Default 0." }),
  isEnabled: Schema.optionalKey(Schema.Boolean).annotateKey({ description: "Default true." }),
  memberIds: Schema.optionalKey(MemberIds),
  teamIds: Schema.optionalKey(PolicyTeamIds)
}).annotate({ examples: [{ ...contractors, priority: 10, memberIds: [alan.membershipId], teamIds: [exampleId("tem")] }] })
export type CreateDesktopPolicyRequest = typeof CreateDesktopPolicyRequest.Type

export const UpdateDesktopPolicyRequest = Schema.Struct({
  policyName: Schema.optionalKey(DesktopPolicyName),
  policy: Schema.optionalKey(DesktopPolicyDocumentInput.annotate({
    description: "The whole document: replaces the current one."
  })),
  priority: Schema.optionalKey(DesktopPolicyPriority),
  isEnabled: Schema.optionalKey(Schema.Boolean),
  memberIds: Schema.optionalKey(MemberIds.annotate({
    description: "The policy's whole list of members: replaces the current one."
  })),
  teamIds: Schema.optionalKey(PolicyTeamIds.annotate({
    description: "The policy's whole list of teams: replaces the current one."
  }))
}).annotate({ examples: [{ priority: 20, isEnabled: false }] })
export type UpdateDesktopPolicyRequest = typeof UpdateDesktopPolicyRequest.Type

/** Which policy decided one setting of an effective policy. */
export const DesktopPolicySource = Schema.Struct({
  desktopPolicyId: Schema.NullOr(DesktopPolicyId).annotate({
    description: "Null for the built-in defaults (an organization without the enterprise plan)."
  }),
  policyName: Schema.String,
  via: Schema.Literals(["member", "team", "default"]).annotate({
    description: "How the policy reached the member: assigned directly, through a team, or as the default."
  })
}).annotate({ identifier: "DesktopPolicySource", examples: [{ desktopPolicyId: exampleId("dpo"), policyName: contractors.policyName, via: "team" }] })

/** Alan's effective policy in the example: the contractors' policy (through his team) and the default for the rest. */
const effectiveExample = () => {
  const contractorsPolicy = { desktopPolicyId: exampleId("dpo"), policyName: contractors.policyName, via: "team" as const }
  const defaultPolicy = { desktopPolicyId: exampleId("dpo", 2), policyName: "Default", via: "default" as const }
  return {
    policy: {
      allowCustomProviders: false,
      allowPartnerModel: true,
      allowMultipleWorkspaces: true,
      allowControlSettings: true,
      allowManageExtensions: true,
      allowBuiltInExtensions: true,
      allowAlphaUpdates: false,
      showWelcomePage: true,
      onboardingPrompts: contractors.policy.onboardingPrompts,
      onboardingPromptDescriptions: contractors.policy.onboardingPromptDescriptions
    },
    decidedBy: {
      allowCustomProviders: contractorsPolicy,
      allowPartnerModel: defaultPolicy,
      allowMultipleWorkspaces: defaultPolicy,
      allowControlSettings: defaultPolicy,
      allowManageExtensions: defaultPolicy,
      allowBuiltInExtensions: defaultPolicy,
      allowAlphaUpdates: contractorsPolicy,
      showWelcomePage: defaultPolicy,
      onboardingPrompts: contractorsPolicy
    }
  }
}

export const EffectiveDesktopPolicy = Schema.Struct({
  policy: Schema.Struct({
    allowCustomProviders: Schema.Boolean,
    allowPartnerModel: Schema.Boolean,
    allowMultipleWorkspaces: Schema.Boolean,
    allowControlSettings: Schema.Boolean,
    allowManageExtensions: Schema.Boolean,
    allowBuiltInExtensions: Schema.Boolean,
    allowAlphaUpdates: Schema.Boolean,
    showWelcomePage: Schema.Boolean,
    onboardingPrompts: Schema.Array(Schema.String),
    onboardingPromptDescriptions: Schema.Array(Schema.String)
  }).annotate({ description: "Every switch decided, and the onboarding prompts with their descriptions." }),
  decidedBy: Schema.Struct({
    allowCustomProviders: DesktopPolicySource,
    allowPartnerModel: DesktopPolicySource,
    allowMultipleWorkspaces: DesktopPolicySource,
    allowControlSettings: DesktopPolicySource,
    allowManageExtensions: DesktopPolicySource,
    allowBuiltInExtensions: DesktopPolicySource,
    allowAlphaUpdates: DesktopPolicySource,
    showWelcomePage: DesktopPolicySource,
    onboardingPrompts: DesktopPolicySource.annotateKey({ description: "Decides the prompts and their descriptions." })
  }).annotate({ description: "Per setting, the policy that decided it." })
}).annotate({ identifier: "EffectiveDesktopPolicy", examples: [effectiveExample()] })
export type EffectiveDesktopPolicy = typeof EffectiveDesktopPolicy.Type

export const EffectiveDesktopPolicyResponse = Schema.Struct({ effectivePolicy: EffectiveDesktopPolicy }).annotate({
  identifier: "EffectiveDesktopPolicyResponse"
})
