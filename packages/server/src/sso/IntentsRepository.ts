/**
 * Storage of SSO intents (a test or a sign-in between its start and the provider's answer, then a sign-in's
 * one-time code), of the SAML assertions a connection took (each once), and of identity links (a connection's
 * subject → a person), with the deprovisioning hook.
 *
 * The Effect 4 form of packages/server/src/sso/IntentsRepository.ts, whole: the same statements, word for word. What
 * differs under the same behaviour: `Schema.Literal(a, b)` is `Schema.Literals([a, b])`; the service is a
 * `Context.Service` with `make` and a static `layer`, its functions named with `Effect.fn`.
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
  exchangedAt: Schema.NullOr(DateColumn)
})
export type SsoIntentRow = typeof SsoIntentRow.Type

export const SsoIdentityRow = Schema.Struct({
  organizationId: OrganizationId,
  connectionId: SsoConnectionId,
  subject: Schema.String,
  userId: UserId,
  email: Schema.String,
  deprovisionedAt: Schema.NullOr(DateColumn)
})
export type SsoIdentityRow = typeof SsoIdentityRow.Type

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

  /** Gives a completed sign-in its one-time code (hashed) for the person it signed in. */
  const setExchange = Effect.fn("IntentsRepository.setExchange")(function*(
    key: Scoped,
    code: { readonly hash: string; readonly userId: UserId; readonly expiresAt: Date }
  ) {
    yield* sql`UPDATE sso_intents SET exchange_code_hash = ${code.hash}, exchange_user_id = ${code.userId}, exchange_expires_at = ${code.expiresAt}
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

  // Identity links

  const findIdentity = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, connectionId: SsoConnectionId, subject: Schema.String }),
    Result: SsoIdentityRow,
    execute: ({ connectionId, organizationId, subject }) =>
      sql`SELECT organization_id, connection_id, subject, user_id, email, deprovisioned_at FROM sso_identities
            WHERE organization_id = ${organizationId} AND connection_id = ${connectionId} AND subject = ${subject}`
  })

  const upsertIdentity = Effect.fn("IntentsRepository.upsertIdentity")(function*(
    row: Omit<SsoIdentityRow, "deprovisionedAt"> & { readonly claims: unknown; readonly at: Date }
  ) {
    yield* sql`INSERT INTO sso_identities ${
      sql.insert({
        organizationId: row.organizationId,
        connectionId: row.connectionId,
        subject: row.subject,
        userId: row.userId,
        email: row.email,
        claims: JSON.stringify(row.claims),
        deprovisionedAt: null,
        createdAt: row.at,
        lastSignInAt: row.at
      })
    } ON CONFLICT (organization_id, connection_id, subject) DO UPDATE SET
          email = EXCLUDED.email, claims = EXCLUDED.claims, last_sign_in_at = EXCLUDED.last_sign_in_at
        WHERE sso_identities.organization_id = ${row.organizationId}`
  })

  /**
   * The deprovisioning hook for directory sync (SCIM, issue to come): an identity deprovisioned here is refused at
   * sign-in (`identity_deprovisioned`) until it is provisioned again (`deprovisioned` false).
   */
  const setDeprovisioned = Effect.fn("IntentsRepository.setDeprovisioned")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId },
    at: Date | null
  ) {
    yield* sql`UPDATE sso_identities SET deprovisioned_at = ${at} WHERE organization_id = ${key.organizationId} AND user_id = ${key.userId}`
  })

  /** Whether directory sync deprovisioned the person in the organization (any of their identities). */
  const isDeprovisioned = Effect.fn("IntentsRepository.isDeprovisioned")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId }
  ) {
    const rows = yield* sql`SELECT 1 FROM sso_identities WHERE organization_id = ${key.organizationId} AND user_id = ${key.userId}
            AND deprovisioned_at IS NOT NULL`
    return rows.length > 0
  })

  /** Forgets one link (the account it named was deleted: the sign-in goes on as a first one, sso/Jit.ts). */
  const forgetIdentity = Effect.fn("IntentsRepository.forgetIdentity")(function*(
    key: { readonly organizationId: OrganizationId; readonly connectionId: SsoConnectionId; readonly subject: string }
  ) {
    yield* sql`DELETE FROM sso_identities
          WHERE organization_id = ${key.organizationId} AND connection_id = ${key.connectionId} AND subject = ${key.subject}`
  })

  const forgetLinks = Effect.fn("IntentsRepository.forgetLinks")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId },
    options: { readonly keepLinked: boolean; readonly pseudonym: string }
  ) {
    if (options.keepLinked) {
      yield* sql`UPDATE sso_identities SET email = ${options.pseudonym}, claims = '{}'::jsonb
              WHERE organization_id = ${key.organizationId} AND user_id = ${key.userId}`
      return 0
    }
    const rows = yield* sql`DELETE FROM sso_identities WHERE organization_id = ${key.organizationId} AND user_id = ${key.userId} RETURNING 1`
    return rows.length
  })

  /**
   * The person's account is being deleted (the accounts area, in its transaction): the external identities that
   * signed them in to the organization go, how many answered. Where the organization's directory deprovisioned them
   * (`keepLinked`), the links stay, naming the account's tombstone, their email and claims replaced by `pseudonym`,
   * so a sign-in through them is still refused `identity_deprovisioned` rather than making a new account.
   */
  const forgetPerson = Effect.fn("IntentsRepository.forgetPerson")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId },
    options: { readonly keepLinked: boolean; readonly pseudonym: string }
  ) {
    // A sign-in or test of theirs under way (minutes at most) goes too: its code would make a session of the tombstone.
    yield* sql`DELETE FROM sso_intents WHERE organization_id = ${key.organizationId}
              AND (user_id = ${key.userId} OR exchange_user_id = ${key.userId})`
    return yield* forgetLinks(key, options)
  })

  return {
    forgetIdentity,
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
    deleteExpiredAssertions,
    findIdentity,
    upsertIdentity,
    setDeprovisioned,
    isDeprovisioned
  } as const
})

export class IntentsRepository extends Context.Service<IntentsRepository>()("@orgplane/server/sso/IntentsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
