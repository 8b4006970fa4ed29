/**
 * `orgplane policies create | update | list | get | delete | effective`: desktop policies of the active
 * organization (enterprise plan; owners and admins), and the caller's own effective policy (any member, any plan).
 */
import {
  CreateDesktopPolicyRequest,
  DesktopPoliciesApi,
  type DesktopPolicy,
  DesktopPolicyDocumentInput,
  DesktopPolicyId,
  DesktopPolicyPage,
  DesktopPolicyPriority,
  DesktopPolicyResponse,
  DesktopPolicySettings,
  EffectiveDesktopPolicyResponse,
  MemberIds,
  MembershipId,
  PolicyTeamIds,
  TeamId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaParser from "effect/SchemaParser"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const desktopPolicyId = Inputs.argument("desktopPolicyId", { schema: DesktopPolicyId, description: "The desktop policy (dpo_…)." })

/** Each id once (the API counts a repeated id once, but its size limit counts every entry), then the API's limit. */
const distinctMemberIds = Schema.Array(MembershipId).pipe(Schema.decodeTo(Schema.toType(MemberIds), {
  decode: SchemaGetter.transform((ids: ReadonlyArray<MembershipId>) => [...new Set(ids)]),
  encode: SchemaGetter.transform((ids: ReadonlyArray<MembershipId>) => ids)
}))
const distinctTeamIds = Schema.Array(TeamId).pipe(Schema.decodeTo(Schema.toType(PolicyTeamIds), {
  decode: SchemaGetter.transform((ids: ReadonlyArray<TeamId>) => [...new Set(ids)]),
  encode: SchemaGetter.transform((ids: ReadonlyArray<TeamId>) => ids)
}))

const members = Inputs.repeatedText("member", {
  placeholder: "<memberId>",
  description: "A member (om_…) the policy applies to directly; repeat for more.",
  schema: distinctMemberIds
})
const teams = Inputs.repeatedText("team", {
  placeholder: "<teamId>",
  description: "A team (tem_…) whose members the policy applies to; repeat for more.",
  schema: distinctTeamIds
})
/**
 * `--policy`'s JSON as a document, a key it does not know refused as the API refuses it (the API's payload parse
 * option, `onExcessProperty: "error"`, given to this decoding too).
 */
const PolicyDocument = Schema.fromJsonString(Schema.Unknown).pipe(Schema.decodeTo(Schema.toType(DesktopPolicyDocumentInput), {
  decode: SchemaGetter.transformEffect(SchemaParser.decodeUnknownEffect(DesktopPolicyDocumentInput, { onExcessProperty: "error" })),
  encode: SchemaGetter.transformEffect(SchemaParser.encodeUnknownEffect(DesktopPolicyDocumentInput))
}))
const document = (description: string) => Inputs.text("policy", { placeholder: "<json>", description, schema: PolicyDocument })
const priority = Inputs.optional(Inputs.text("priority", {
  placeholder: "<0-1000000>",
  description: "For each switch, the highest-priority policy that sets it decides (ties: the older one).",
  schema: Schema.NumberFromString.pipe(Schema.decodeTo(DesktopPolicyPriority))
}))

const summary = (policy: DesktopPolicy) =>
  `${policy.policyName} (${policy.id})${policy.isDefault ? ", the default policy" : ""}: priority ${policy.priority}, ${
    policy.isEnabled ? "enabled" : "disabled"
  }, ${policy.memberIds.length} member(s), ${policy.teamIds.length} team(s)`

export const create = Commands.endpoint("create", {
  examples: [
    ["A policy for one team.", ["policies", "create", "Engineering laptops", "--policy", "{\"allowAlphaUpdates\":false}", "--team", "tem_01m6dsg7e0f6xbks25eta8m5bm"]],
  ],
  summary: "Create a desktop policy (owners and admins, enterprise plan).",
  inputs: {
    policyName: Inputs.argument("policyName", { schema: CreateDesktopPolicyRequest.fields.policyName }),
    policy: document("The switches and onboarding prompts it sets, as JSON, e.g. '{\"allowAlphaUpdates\":false}'."),
    priority,
    disabled: Inputs.boolean("disabled", { description: "Create it disabled (it applies to nobody until enabled)." }),
    members,
    teams
  },
  call: (client, input) =>
    client.desktopPolicies.create({
      payload: {
        policyName: input.policyName,
        policy: input.policy,
        ...Inputs.ifSome("priority", input.priority),
        ...(input.disabled ? { isEnabled: false } : {}),
        ...(input.members.length > 0 ? { memberIds: input.members } : {}),
        ...(input.teams.length > 0 ? { teamIds: input.teams } : {})
      }
    }),
  output: DesktopPolicyResponse,
  human: ({ desktopPolicy }) => `Created desktop policy ${summary(desktopPolicy)}.`
})

export const update = Commands.endpoint("update", {
  summary: "Change a desktop policy: only what is given changes; --member/--team replace the assignments.",
  inputs: {
    desktopPolicyId,
    name: Inputs.optional(Inputs.text("name", { schema: CreateDesktopPolicyRequest.fields.policyName, description: "A new name." })),
    policy: Inputs.optional(document("A new document as JSON: replaces the whole current one.")),
    priority,
    enabled: Inputs.optional(Inputs.choice("enabled", ["true", "false"], { description: "Enable or disable the policy." })),
    members,
    clearMembers: Inputs.boolean("clear-members", { description: "Assign the policy to no member directly." }),
    teams,
    clearTeams: Inputs.boolean("clear-teams", { description: "Assign the policy to no team." })
  },
  call: (client, input) =>
    client.desktopPolicies.update({
      params: { desktopPolicyId: input.desktopPolicyId },
      payload: {
        ...Inputs.ifSome("policyName", input.name),
        ...Inputs.ifSome("policy", input.policy),
        ...Inputs.ifSome("priority", input.priority),
        ...Inputs.ifSome("isEnabled", Option.map(input.enabled, (value) => value === "true")),
        ...(input.members.length > 0 || input.clearMembers ? { memberIds: input.members } : {}),
        ...(input.teams.length > 0 || input.clearTeams ? { teamIds: input.teams } : {})
      }
    }),
  output: DesktopPolicyResponse,
  human: ({ desktopPolicy }) => `Updated desktop policy ${summary(desktopPolicy)}.`
})

export const list = Commands.list("list", {
  summary: "List the organization's desktop policies, oldest (the default) first (owners and admins, enterprise plan).",
  noun: "desktop policies",
  inputs: {},
  call: (client, _, page) => client.desktopPolicies.list({ query: page }),
  output: DesktopPolicyPage,
  columns: [
    ["id", (policy) => policy.id],
    ["name", (policy) => policy.policyName + (policy.isDefault ? " (default)" : "")],
    ["priority", (policy) => String(policy.priority)],
    ["enabled", (policy) => (policy.isEnabled ? "yes" : "no")],
    ["members", (policy) => String(policy.memberIds.length)],
    ["teams", (policy) => String(policy.teamIds.length)],
    ["created", (policy) => Output.date(policy.createdAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show one desktop policy with its document and assignments.",
  inputs: { desktopPolicyId },
  call: (client, { desktopPolicyId }) => client.desktopPolicies.get({ params: { desktopPolicyId } }),
  output: DesktopPolicyResponse,
  human: ({ desktopPolicy }) => `${summary(desktopPolicy)}\n${JSON.stringify(desktopPolicy.policy, null, 2)}`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: DesktopPolicyId })

export const del = Commands.endpoint("delete", {
  summary: "Delete a desktop policy (kept on record; it stops applying). The default policy cannot be deleted.",
  inputs: { desktopPolicyId },
  call: (client, { desktopPolicyId }) =>
    client.desktopPolicies.delete({ params: { desktopPolicyId } }).pipe(Effect.as({ ok: true as const, deleted: desktopPolicyId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted desktop policy ${deleted}; it no longer applies.`
})

export const effective = Commands.endpoint("effective", {
  summary: "Show your effective desktop policy and which policy decided each setting (any member, any plan).",
  inputs: {},
  call: (client) => client.desktopPolicies.effective(),
  output: EffectiveDesktopPolicyResponse,
  human: ({ effectivePolicy }) =>
    DesktopPolicySettings.map((setting) => {
      const source = effectivePolicy.decidedBy[setting]
      const value = effectivePolicy.policy[setting]
      return `${setting}: ${Array.isArray(value) ? JSON.stringify(value) : String(value)}  (${source.policyName}, ${source.via}${
        source.desktopPolicyId === null ? "" : `, ${source.desktopPolicyId}`
      })`
    }).join("\n")
})

export const policies = Commands.group(
  "policies",
  "Manage the active organization's desktop policies (owners and admins, enterprise plan) and read your effective one.",
  [create, update, list, get, del, effective],
  [DesktopPoliciesApi]
)
