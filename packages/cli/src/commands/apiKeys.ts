/** `orgplane api-keys create | list | revoke`: the active organization's API keys (owners and admins). */
import { Args, Command, Options } from "@effect/cli"
import { type ApiKey, ApiKeyId, ApiKeyPage, CreateApiKeyRequest, CreatedApiKey } from "@orgplane/schema"
import { Effect, Schema } from "effect"
import { global } from "../GlobalOptions.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Paging from "../Paging.js"
import * as Target from "../Target.js"
import { group } from "./group.js"

export const create = Command.make(
  "create",
  {
    name: Inputs.arg(Args.text({ name: "name" }), "name", CreateApiKeyRequest.fields.name),
    expiresAt: Options.date("expires-at").pipe(
      Options.withDescription("When the key stops working (ISO 8601, e.g. 2030-01-01T00:00:00Z). Default: never."),
      Options.optional
    ),
    global
  },
  ({ expiresAt, global, name }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        const created = yield* client.apiKeys.create({
          payload: { name, ...Inputs.ifSome("expiresAt", expiresAt) }
        })
        yield* Output.emit(global, CreatedApiKey, created, ({ apiKey, key }) =>
          [
            `Created API key '${apiKey.name}' (${apiKey.id}), expires ${apiKey.expiresAt === null ? "never" : Output.date(apiKey.expiresAt)}.`,
            "The key is shown only this once; store it now (send it as the x-api-key header, or set ORGPLANE_API_KEY):",
            "",
            `  ${key}`
          ].join("\n"))
      }))
).pipe(Command.withDescription("Create an API key for the active organization and print it (only this once)."))

const rows = (items: ReadonlyArray<ApiKey>) =>
  Output.table(
    ["id", "name", "prefix", "created", "expires", "last used"],
    items.map((key) => [key.id, key.name, key.prefix, Output.date(key.createdAt), Output.date(key.expiresAt), Output.date(key.lastUsedAt)])
  )

export const list = Command.make(
  "list",
  { ...Paging.options, global },
  ({ global, ...paging }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        yield* Paging.check(paging)
        const client = yield* Target.connect(target, { authenticated: true })
        const result = yield* Paging.fetch(paging, (page) => client.apiKeys.list({ urlParams: page }))
        yield* Output.emit(global, ApiKeyPage, result, ({ items }) => items.length === 0 ? "No API keys." : rows(items))
        yield* Paging.hint(global, "keys", "api-keys list", result)
      }))
).pipe(Command.withDescription("List the active organization's API keys, newest first (the keys themselves are never shown again)."))

const Revoked = Schema.Struct({ ok: Schema.Literal(true), revoked: ApiKeyId })

export const revoke = Command.make(
  "revoke",
  { apiKeyId: Inputs.arg(Args.text({ name: "apiKeyId" }), "apiKeyId", ApiKeyId), global },
  ({ apiKeyId, global }) =>
    Target.run(global, (target) =>
      Effect.gen(function*() {
        const client = yield* Target.connect(target, { authenticated: true })
        yield* client.apiKeys.revoke({ path: { apiKeyId } })
        yield* Output.emit(global, Revoked, { ok: true, revoked: apiKeyId }, () => `Revoked API key ${apiKeyId}; it stops working at once.`)
      }))
).pipe(Command.withDescription("Revoke an API key."))

export const apiKeys = group("api-keys", "Manage the active organization's API keys (owners and admins).", [create, list, revoke])
