/** Organization API keys: for scripts and integrations, acting as the member who created them, within their scopes. */
import * as Schema from "effect/Schema"
import { type Action, Actions, KeyGuardedActions } from "./Policy.js"
import { Timestamp, TrimmedText } from "./Common.js"
import { ApiKeyId, exampleId, MembershipId } from "./Ids.js"
import { Page } from "./Pagination.js"
import { ada, exampleTime, exampleToken } from "./Examples.js"

/** A key's scope: one action of the policy table (`GET /v1/roles`). */
export const ApiKeyScope = Schema.Literals(Actions).annotate({
  identifier: "ApiKeyScope",
  description: "An action of the policy table (`GET /v1/roles`) the key may take, within its maker's role at each request."
})
export type ApiKeyScope = typeof ApiKeyScope.Type

/** The areas of the policy table: what comes before the dot of its actions. */
const areas = [...new Set(Actions.map((action) => action.slice(0, action.indexOf("."))))]
const areaScopes = areas.map((area) => `${area}.*` as const)

/** What a scope may be asked as: an action, or `<area>.*` for every action of an area (read-write). */
export const ApiKeyScopeRequest = Schema.Union([ApiKeyScope, Schema.Literals(areaScopes)]).annotate({
  identifier: "ApiKeyScopeRequest",
  description: "An action of the policy table (`members.read`), or `<area>.*` for every action of that area (`teams.*`: read and manage teams)."
})

/** The scopes a new key asks for (`POST /v1/api-keys`, `orgplane api-keys create --scope`). */
export const ApiKeyScopesRequest = Schema.Array(ApiKeyScopeRequest).check(Schema.isMinLength(1), Schema.isMaxLength(100))

/** The scopes asked for, expanded to actions (an area's `.*` to each of its actions), without repeats. */
export const expandScopes = (requested: ReadonlyArray<typeof ApiKeyScopeRequest.Type>): ReadonlyArray<Action> => {
  const wanted = new Set<Action>()
  for (const scope of requested) {
    if (scope.endsWith(".*")) {
      const prefix = scope.slice(0, -1)
      for (const action of Actions) if (action.startsWith(prefix)) wanted.add(action)
    } else {
      for (const action of Actions) if (action === scope) wanted.add(action)
    }
  }
  return Actions.filter((action) => wanted.has(action))
}

/** Actions as they may be asked: an area's `.*` where all of its actions are there (the inverse of `expandScopes`). */
export const collapseScopes = (actions: ReadonlyArray<Action>): ReadonlyArray<typeof ApiKeyScopeRequest.Type> => {
  const held = new Set(actions)
  return areas.flatMap((area) => {
    const ofArea = Actions.filter((action) => action.startsWith(`${area}.`))
    return ofArea.every((action) => held.has(action)) ? [`${area}.*` as const] : ofArea.filter((action) => held.has(action))
  })
}

/**
 * The scopes of a key made without `scopes`: every action its maker's role allows when it is made, except those
 * only a naming scope grants (`KeyGuardedActions`: key management, ownership, role changes, inviting admins, audit
 * retention, SSO and SCIM, password reset links, deleting organizations, the operator's powers and lists).
 */
export const defaultScopes = (allowed: (action: Action) => boolean): ReadonlyArray<Action> =>
  Actions.filter((action) => allowed(action) && !KeyGuardedActions.includes(action))

/** The actions a key takes only when a scope names them, as the document lists them: `a`, `b` and `c`. */
const quoted = KeyGuardedActions.map((action) => `\`${action}\``)
const guardedList = `${quoted.slice(0, -1).join(", ")} and ${quoted[quoted.length - 1]}`

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")(Schema.Struct({
  id: ApiKeyId,
  name: Schema.String,
  prefix: Schema.String.annotate({ description: "The first characters of the key, to recognise it." }),
  createdByOrgMembershipId: MembershipId,
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp),
  scopes: Schema.NullOr(Schema.Array(ApiKeyScope)).annotate({
    description:
      "The actions the key may take, each also within its maker's role at each request (a demotion narrows the key). Null for a key made before keys had scopes: it takes every action its maker's role allows, as it always did (narrow it by making a scoped key and revoking this one)."
  }),
  parentApiKeyId: Schema.NullOr(ApiKeyId).annotate({
    description: "The key this key was made with (null: made by a session). Revoking a key revokes the keys it made, and theirs."
  })
}).annotate({
  examples: [{
    id: exampleId("apk"),
    name: "CI deploys",
    prefix: exampleToken("opk").slice(0, 12),
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(50),
    expiresAt: exampleTime(50 + 90 * 24 * 60),
    lastUsedAt: null,
    scopes: ["members.read", "teams.read", "teams.manage"],
    parentApiKeyId: null
  }]
})) {}

export const CreateApiKeyRequest = Schema.Struct({
  name: TrimmedText(1, 64, "API key name"),
  expiresAt: Schema.optionalKey(Timestamp).annotateKey({
    description:
      "When the key stops working, at most the server's longest key lifetime from now (`ORGPLANE_API_KEY_MAX_LIFETIME`, 90 days unless its operator sets another; later answers 400). Omitted: the key expires after that lifetime. Every key expires."
  }),
  scopes: Schema.optionalKey(ApiKeyScopesRequest).annotateKey({
    description:
      `What the key may do: actions of the policy table, or \`<area>.*\` for all of an area's. None may exceed the caller's role, nor, when an API key makes this one, that key's scopes (400 otherwise). Omitted: every action the caller's role allows except ${guardedList}, which a key takes only when a scope names them.`
  })
}).annotate({
  examples: [{ name: "CI deploys", expiresAt: exampleTime(50 + 90 * 24 * 60), scopes: ["teams.*", "members.read"] }]
})

export const CreatedApiKey = Schema.Struct({
  apiKey: ApiKey,
  key: Schema.String.annotate({ description: "The key itself, sent as `x-api-key`. Shown only once.", examples: [exampleToken("opk")] })
}).annotate({ identifier: "CreatedApiKey" })

export const ApiKeyPage = Page(ApiKey).annotate({ identifier: "ApiKeyPage" })
