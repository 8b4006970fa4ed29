/** `orgplane api-keys create | list | revoke`: the active organization's API keys (owners and admins). */
import { type ApiKey, ApiKeyId, ApiKeyPage, ApiKeyScopesRequest, ApiKeysApi, collapseScopes, CreateApiKeyRequest, CreatedApiKey, Timestamp } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/** A key's scopes as a line: the actions (a whole area as `area.*`), or what a key made before scopes takes. */
const scopeList = (scopes: ApiKey["scopes"]) => (scopes === null ? "all of its maker's role (made before scopes)" : collapseScopes(scopes).join(" "))

/** The longest scope line a table shows; past it, a count (`--json` lists them all). */
const TABLE_SCOPES = 40
const scopeCell = (scopes: ApiKey["scopes"]) => {
  if (scopes === null) return "role (made before scopes)"
  const line = scopeList(scopes)
  return line.length <= TABLE_SCOPES ? line : `${scopes.length} actions (--json lists them)`
}

export const create = Commands.endpoint("create", {
  examples: [
    ["A key for CI, shown once.", ["api-keys", "create", "ci"]],
  ],
  summary: "Create an API key for the active organization and print it (only this once).",
  inputs: {
    name: Inputs.argument("name", { schema: CreateApiKeyRequest.fields.name }),
    expiresAt: Inputs.optional(Inputs.text("expires-at", {
      placeholder: "<time>",
      description: "When the key stops working (ISO 8601, e.g. 2030-01-01T00:00:00Z), within the server's longest lifetime. Default: that lifetime (90 days unless ORGPLANE_API_KEY_MAX_LIFETIME says otherwise).",
      schema: Timestamp
    })),
    scopes: Inputs.repeatedText("scope", {
      placeholder: "<action|area.*>",
      description:
        "What the key may do: an action of 'orgplane roles' (members.read) or area.* (teams.*); repeat for more. Default: your role's actions except those a key takes only when a scope names them: key management, ownership and role changes, inviting admins, audit retention, SSO, SCIM, password resets, deleting the organization and the operator's.",
      schema: Inputs.wordsAs(ApiKeyScopesRequest)
    })
  },
  call: (client, { expiresAt, name, scopes }) =>
    client.apiKeys.create({ payload: { name, ...Inputs.ifSome("expiresAt", expiresAt), ...(scopes.length === 0 ? {} : { scopes }) } }),
  output: CreatedApiKey,
  human: ({ apiKey, key }) =>
    [
      `Created API key '${apiKey.name}' (${apiKey.id}), expires ${apiKey.expiresAt === null ? "never" : Output.date(apiKey.expiresAt)}.`,
      `Scopes: ${scopeList(apiKey.scopes)}.`,
      "The key is shown only this once; store it now (send it as the x-api-key header, or set ORGPLANE_API_KEY):",
      "",
      `  ${key}`
    ].join("\n")
})

export const list = Commands.list("list", {
  summary: "List the active organization's API keys, newest first (the keys themselves are never shown again).",
  noun: "keys",
  inputs: {},
  call: (client, _, page) => client.apiKeys.list({ query: page }),
  output: ApiKeyPage,
  columns: [
    ["id", (key) => key.id],
    ["name", (key) => key.name],
    ["prefix", (key) => key.prefix],
    ["created", (key) => Output.date(key.createdAt)],
    ["expires", (key) => Output.date(key.expiresAt)],
    ["scopes", (key) => scopeCell(key.scopes)],
    ["last used", (key) => Output.date(key.lastUsedAt)]
  ]
})

const Revoked = Schema.Struct({ ok: Schema.Literal(true), revoked: ApiKeyId })

export const revoke = Commands.endpoint("revoke", {
  summary: "Revoke an API key; it stops working at once.",
  inputs: { apiKeyId: Inputs.argument("apiKeyId", { schema: ApiKeyId, description: "The key's id (apk_…), from 'api-keys list'." }) },
  call: (client, { apiKeyId }) => client.apiKeys.revoke({ params: { apiKeyId } }).pipe(Effect.as({ ok: true as const, revoked: apiKeyId })),
  output: Revoked,
  human: ({ revoked }) => `Revoked API key ${revoked}; it stops working at once.`
})

export const apiKeys = Commands.group("api-keys", "Manage the active organization's API keys (owners and admins).", [create, list, revoke], [ApiKeysApi])
