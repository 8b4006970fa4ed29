/**
 * An OAuth credential at rest, as MCP connections and the suites' members keep it: its token columns, the stored
 * view of them, and the tokens a token endpoint answers, encrypted for storage.
 */
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { McpCredentialHealth } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as Struct from "effect/Struct"
import { Crypto } from "./Crypto.js"
import type { TokenBindings } from "./SecretColumns.js"
import { DateColumn } from "./Statements.js"

/** An OAuth credential's columns, the same in an MCP connection's row (shared) and an MCP member's. */
export const credentialColumns = {
  accessTokenCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  refreshTokenCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  tokenType: Schema.NullOr(Schema.String),
  grantedScopes: Schema.Array(Schema.String),
  tokenExpiresAt: Schema.NullOr(DateColumn),
  /** Compare-and-set counter: a refresh writes only if the version it read is still current. */
  credentialVersion: Schema.Number,
  credentialHealth: McpCredentialHealth,
  credentialHealthReason: Schema.NullOr(Schema.String),
  credentialCheckedAt: Schema.NullOr(DateColumn),
  /** When the credential was stored (`apikey`, OAuth) or the last successful `initialize` (`none`). */
  connectedAt: Schema.NullOr(DateColumn)
}

/** One stored OAuth credential: the credential columns as a row reads them. */
export const StoredCredential = Model.extract(Model.Struct(credentialColumns), "select").mapFields(Struct.pick([
  "accessTokenCiphertext",
  "refreshTokenCiphertext",
  "tokenType",
  "grantedScopes",
  "tokenExpiresAt",
  "credentialVersion",
  "credentialHealth",
  "credentialHealthReason",
  "connectedAt"
]))
export type StoredCredential = typeof StoredCredential.Type

/** New tokens, encrypted. */
export const NewTokens = Schema.Struct({
  accessTokenCiphertext: Schema.String,
  refreshTokenCiphertext: Schema.NullOr(Schema.String),
  tokenType: Schema.String,
  grantedScopes: Schema.Array(Schema.String),
  tokenExpiresAt: Schema.NullOr(DateColumn)
})
export type NewTokens = typeof NewTokens.Type

/**
 * Encrypts tokens from a token endpoint for the row they are stored in (`where`); the scopes granted are the
 * answer's, else `fallbackScopes`.
 */
export const encryptTokens = Effect.fn("StoredCredential.encryptTokens")(function*(
  tokens: OAuthTokens,
  at: Date,
  fallbackScopes: ReadonlyArray<string>,
  where: TokenBindings
) {
  const crypto = yield* Crypto
  const scopes = tokens.scope === undefined ? fallbackScopes : tokens.scope.split(" ").filter((scope) => scope !== "")
  const result: NewTokens = {
    accessTokenCiphertext: yield* crypto.encrypt(tokens.access_token, where.access),
    refreshTokenCiphertext: tokens.refresh_token === undefined ? null : yield* crypto.encrypt(tokens.refresh_token, where.refresh),
    tokenType: tokens.token_type,
    grantedScopes: scopes,
    tokenExpiresAt: tokens.expires_in === undefined ? null : new Date(at.getTime() + tokens.expires_in * 1000)
  }
  return result
})
