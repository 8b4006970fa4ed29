/**
 * Storage of SSO intents (a test or a sign-in between its start and the provider's answer, then a sign-in's
 * one-time code) and of the SAML assertions a connection took (each once). The identity links a sign-in makes are
 * identity's (identity/IdentityLinksRepository.ts).
 */
import { OrganizationId, SsoConnectionId, SsoIntentId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, findOne } from "../platform/Statements.js"

export const SsoIntentRow = Schema.Struct({
  id: SsoIntentId,
  organizationId: OrganizationId,
  connectionId: SsoConnectionId,
  purpose: Schema.Literals(["test", "sign_in"]),
  configRevision: Schema.Number,
  nonce: Schema.String,
  codeVerifierCiphertext: Schema.NullOr(Schema.String),
  samlRequestId: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(UserId),
  loginHint: Schema.NullOr(Schema.String),
  returnTo: Schema.NullOr(Schema.String),
  createdAt: DateColumn,
  expiresAt: DateColumn,
  consumedAt: Schema.NullOr(DateColumn),
  exchangeCodeHash: Schema.NullOr(Schema.String),
  exchangeUserId: Schema.NullOr(UserId),
  exchangeExpiresAt: Schema.NullOr(DateColumn),
  exchangedAt: Schema.NullOr(DateColumn),
  /** The provider's subject the one-time code stands for: it is exchanged only while that identity leads to the account. */
  exchangeSubject: Schema.NullOr(Schema.String)
})
export type SsoIntentRow = typeof SsoIntentRow.Type

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: SsoIntentId })
type Scoped = typeof Scoped.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = Effect.fn("IntentsRepository.insert")(function*(row: SsoIntentRow) {
    yield* sql`INSERT INTO sso_intents ${sql.insert(row)}`
  })

  const setSamlRequestId = Effect.fn("IntentsRepository.setSamlRequestId")(function*(key: Scoped, samlRequestId: string) {
    yield* sql`UPDATE sso_intents SET saml_request_id = ${samlRequestId} WHERE organization_id = ${key.organizationId} AND id = ${key.id}`
  })

  /** The intent locked for the rest of the transaction. */
  const lock = findOne({
    Request: Scoped,
    Result: SsoIntentRow,
    execute: ({ id, organizationId }) => sql`SELECT * FROM sso_intents WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`
  })

  /** Spends the intent: true when it was not spent yet (single use even between two racing callbacks). */
  const consume = Effect.fn("IntentsRepository.consume")(function*(key: Scoped, at: Date) {
    const rows = yield* sql`UPDATE sso_intents SET consumed_at = ${at}
          WHERE organization_id = ${key.organizationId} AND id = ${key.id} AND consumed_at IS NULL RETURNING id`
    return rows.length > 0
  })

  /** Gives a completed sign-in its one-time code (hashed) for the person it signed in, through the provider's subject. */
  const setExchange = Effect.fn("IntentsRepository.setExchange")(function*(
    key: Scoped,
    code: { readonly hash: string; readonly userId: UserId; readonly subject: string; readonly expiresAt: Date }
  ) {
    yield* sql`UPDATE sso_intents SET exchange_code_hash = ${code.hash}, exchange_user_id = ${code.userId},
                 exchange_subject = ${code.subject}, exchange_expires_at = ${code.expiresAt}
          WHERE organization_id = ${key.organizationId} AND id = ${key.id}`
  })

  /** Spends a one-time code: the intent it belongs to, if it was live and unspent and its organization is not deleted. */
  const exchangeStatement = findOne({
    Request: Schema.Struct({ hash: Schema.String, at: DateColumn }),
    Result: SsoIntentRow,
    execute: ({ at, hash }) =>
      sql`UPDATE sso_intents SET exchanged_at = ${at}
            WHERE organization_id = (SELECT i.organization_id FROM sso_intents i
                                     JOIN organizations o ON o.id = i.organization_id AND o.deleted_at IS NULL
                                     WHERE i.exchange_code_hash = ${hash})
              AND exchange_code_hash = ${hash} AND exchanged_at IS NULL AND exchange_expires_at > ${at}
            RETURNING *`
  })
  const exchange = Effect.fn("IntentsRepository.exchange")(function*(hash: string, at: Date) {
    return Option.getOrUndefined(yield* exchangeStatement({ hash, at }))
  })

  /** Drops intents that can no longer be used (expired an hour ago), for the connection's organization. */
  const prune = Effect.fn("IntentsRepository.prune")(function*(organizationId: OrganizationId, before: Date) {
    yield* sql`DELETE FROM sso_intents WHERE organization_id = ${organizationId} AND expires_at < ${before}
            AND (exchange_expires_at IS NULL OR exchange_expires_at < ${before})`
  })

  /**
   * Takes a SAML assertion for the connection: true the first time, false when it was taken already (a replay).
   * Assertions past their expiry are dropped first (the engine refuses those anyway).
   */
  const takeAssertion = Effect.fn("IntentsRepository.takeAssertion")(function*(
    key: { readonly organizationId: OrganizationId; readonly connectionId: SsoConnectionId },
    assertion: { readonly id: string; readonly expiresAt: Date; readonly at: Date }
  ) {
    yield* sql`DELETE FROM sso_saml_assertions WHERE organization_id = ${key.organizationId} AND expires_at < ${assertion.at}`
    const rows = yield* sql`INSERT INTO sso_saml_assertions ${
      sql.insert({ organizationId: key.organizationId, connectionId: key.connectionId, assertionId: assertion.id, expiresAt: assertion.expiresAt })
    } ON CONFLICT (organization_id, connection_id, assertion_id) DO NOTHING RETURNING assertion_id`
    return rows.length > 0
  })

  /**
   * Deletes at most `limit` intents, in every organization, that expired before `before` and whose one-time code
   * (if any) did too: the cleanup job's work (sso/IntentsExpiry.ts). How many it deleted.
   */
  const deleteExpiredIntents = Effect.fn("IntentsRepository.deleteExpiredIntents")(function*(
    options: { readonly before: Date; readonly limit: number }
  ) {
    const rows = yield* sql`/* instance-wide: expired SSO intents, deleted by the cleanup job (sso/IntentsExpiry.ts) */
          DELETE FROM sso_intents WHERE id IN (
            SELECT id FROM sso_intents
            WHERE expires_at < ${options.before} AND (exchange_expires_at IS NULL OR exchange_expires_at < ${options.before})
            LIMIT ${options.limit}
          ) RETURNING 1`
    return rows.length
  })

  /** Deletes at most `limit` SAML assertions, in every organization, that expired before `at`: the cleanup job's. */
  const deleteExpiredAssertions = Effect.fn("IntentsRepository.deleteExpiredAssertions")(function*(
    options: { readonly at: Date; readonly limit: number }
  ) {
    const rows = yield* sql`/* instance-wide: expired SAML assertions, deleted by the cleanup job (sso/IntentsExpiry.ts) */
          DELETE FROM sso_saml_assertions WHERE (organization_id, connection_id, assertion_id) IN (
            SELECT organization_id, connection_id, assertion_id FROM sso_saml_assertions WHERE expires_at < ${options.at} LIMIT ${options.limit}
          ) RETURNING 1`
    return rows.length
  })

  /**
   * The person's account is being deleted (the accounts area, in its transaction): a sign-in or test of theirs under
   * way (minutes at most) goes, whose code would make a session of the tombstone.
   */
  const forgetPerson = Effect.fn("IntentsRepository.forgetPerson")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId }
  ) {
    yield* sql`DELETE FROM sso_intents WHERE organization_id = ${key.organizationId}
              AND (user_id = ${key.userId} OR exchange_user_id = ${key.userId})`
  })

  return {
    forgetPerson,
    insert,
    setSamlRequestId,
    lock,
    consume,
    setExchange,
    exchange,
    prune,
    takeAssertion,
    deleteExpiredIntents,
    deleteExpiredAssertions
  } as const
})

export class IntentsRepository extends Context.Service<IntentsRepository>()("@orgplane/server/sso/IntentsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
