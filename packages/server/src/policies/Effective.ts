/**
 * The effective desktop policy of one member, decided setting by setting: the first policy (in priority order)
 * that sets a setting decides it, and the default policy, last, decides what no other sets.
 */
import {
  type DesktopPolicyDocument,
  type DesktopPolicyId,
  type DesktopPolicySetting,
  type DesktopPolicySwitch,
  DesktopPolicySettings,
  DesktopPolicySwitches,
  type EffectiveDesktopPolicy
} from "@orgplane/schema"

export interface Candidate {
  readonly id: DesktopPolicyId | null
  readonly policyName: string
  readonly via: "member" | "team" | "default"
  readonly policy: DesktopPolicyDocument
}

/** Every switch on, no onboarding prompts: the default policy's document before anyone changes it. */
export const defaultDocument: DesktopPolicyDocument = {
  ...Object.fromEntries(DesktopPolicySwitches.map((key) => [key, true])),
  onboardingPrompts: [],
  onboardingPromptDescriptions: []
}

/** A default policy's document with every switch it leaves out filled in from the built-in defaults. */
export const completeDefault = (document: DesktopPolicyDocument): DesktopPolicyDocument => ({
  ...defaultDocument,
  ...document,
  ...(document.onboardingPrompts !== undefined && document.onboardingPromptDescriptions === undefined
    ? { onboardingPromptDescriptions: [] }
    : {})
})

/** What an organization without the enterprise plan gets. */
export const builtIn: Candidate = { id: null, policyName: "Built-in defaults", via: "default", policy: defaultDocument }

const sets = (document: DesktopPolicyDocument, setting: DesktopPolicySetting) => document[setting] !== undefined

/**
 * Resolves candidates given highest priority first (ties: older first) with the default policy last. A setting that
 * no candidate sets falls back to the built-in defaults, so the answer is always complete.
 */
export const resolve = (candidates: ReadonlyArray<Candidate>): EffectiveDesktopPolicy => {
  const ordered = [...candidates, builtIn]
  const decider = (setting: DesktopPolicySetting) => ordered.find((candidate) => sets(candidate.policy, setting))!
  const decidedBy = Object.fromEntries(
    DesktopPolicySettings.map((setting) => {
      const { id, policyName, via } = decider(setting)
      return [setting, { desktopPolicyId: id, policyName, via }]
    })
  ) as EffectiveDesktopPolicy["decidedBy"]
  const prompts = decider("onboardingPrompts").policy
  const onboardingPrompts = prompts.onboardingPrompts ?? []
  const switches = Object.fromEntries(
    DesktopPolicySwitches.map((key) => [key, decider(key).policy[key]!])
  ) as Record<DesktopPolicySwitch, boolean>
  const policy = {
    ...switches,
    onboardingPrompts,
    // Paired by position: one description per prompt.
    onboardingPromptDescriptions: onboardingPrompts.map((_, i) => prompts.onboardingPromptDescriptions?.[i] ?? "")
  }
  return { policy, decidedBy }
}
