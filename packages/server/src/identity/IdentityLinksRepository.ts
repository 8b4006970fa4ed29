/**
 * Storage of identity links (`sso_identities`): an SSO connection's subject linked to the account it signs in. A link
 * is one of an account's ways in, beside its password, sessions and API keys: it is made by a first SSO sign-in
 * (sso/Jit.ts), followed by every later one, marked by the directory's deprovisioning, and ended with the others when
 * the account's ownership is re-established (Ownership.ts) or the account is deleted.
 */
import { OrganizationId, SsoConnectionId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, findOne } from "../platform/Statements.js"

export const IdentityLinkRow = Schema.Struct({
  organizationId: OrganizationId,
  connectionId: SsoConnectionId,
  subject: Schema.String,
  userId: UserId,
  email: Schema.String,
  deprovisionedAt: Schema.NullOr(DateColumn)
})
export type IdentityLinkRow = typeof IdentityLinkRow.Type

/** What names one link: a connection of an organization, and the subject its provider knows the person by. */
export interface IdentityLinkKey {
  readonly organizationId: OrganizationId
  readonly connectionId: SsoConnectionId
  readonly subject: string
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, connectionId: SsoConnectionId, subject: Schema.String }),
    Result: IdentityLinkRow,
    execute: ({ connectionId, organizationId, subject }) =>
      sql`SELECT organization_id, connection_id, subject, user_id, email, deprovisioned_at FROM sso_identities
            WHERE organization_id = ${organizationId} AND connection_id = ${connectionId} AND subject = ${subject}`
  })

  /** Links the subject to the account, or records another sign-in through an existing link (email, claims, time). */
  const upsert = Effect.fn("IdentityLinksRepository.upsert")(function*(
    row: Omit<IdentityLinkRow, "deprovisionedAt"> & { readonly claims: unknown; readonly at: Date }
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
   * The directory's deprovisioning of the person in the organization (`at`), or its provisioning again (null): a
   * deprovisioned identity is refused at sign-in (`identity_deprovisioned`).
   */
  const setDeprovisioned = Effect.fn("IdentityLinksRepository.setDeprovisioned")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId },
    at: Date | null
  ) {
    yield* sql`UPDATE sso_identities SET deprovisioned_at = ${at} WHERE organization_id = ${key.organizationId} AND user_id = ${key.userId}`
  })

  /** Whether directory sync deprovisioned the person in the organization (any of their identities). */
  const isDeprovisioned = Effect.fn("IdentityLinksRepository.isDeprovisioned")(function*(
    key: { readonly organizationId: OrganizationId; readonly userId: UserId }
  ) {
    const rows = yield* sql`SELECT 1 FROM sso_identities WHERE organization_id = ${key.organizationId} AND user_id = ${key.userId}
            AND deprovisioned_at IS NOT NULL`
    return rows.length > 0
  })

  /** Forgets one link (the account it named was deleted: the sign-in goes on as a first one, sso/Jit.ts). */
  const forget = Effect.fn("IdentityLinksRepository.forget")(function*(key: IdentityLinkKey) {
    yield* sql`DELETE FROM sso_identities
          WHERE organization_id = ${key.organizationId} AND connection_id = ${key.connectionId} AND subject = ${key.subject}`
  })

  /**
   * The person's account is being deleted (the accounts area, in its transaction): the links that signed them in to
   * the organization go, how many answered. Where the organization's directory deprovisioned them (`keepLinked`), the
   * links stay, naming the account's tombstone, their email and claims replaced by `pseudonym`, so a sign-in through
   * them is still refused `identity_deprovisioned` rather than making a new account.
   */
  const forgetPerson = Effect.fn("IdentityLinksRepository.forgetPerson")(function*(
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
   * Ends every link to the account, in every organization it ever joined (links are made only for members), but
   * `keep`: the one re-establishing who owns it, if any. How many ended. Deprovisioned links end too: the directory's
   * refusal is kept on the membership, which `Jit` reads as well.
   */
  const endAllBut = Effect.fn("IdentityLinksRepository.endAllBut")(function*(userId: UserId, keep: IdentityLinkKey | undefined) {
    const rows = yield* sql`DELETE FROM sso_identities
          WHERE (organization_id, user_id) IN (SELECT DISTINCT organization_id, user_id FROM memberships WHERE user_id = ${userId})
            ${keep === undefined ? sql`` : sql`AND NOT (organization_id = ${keep.organizationId} AND connection_id = ${keep.connectionId} AND subject = ${keep.subject})`}
          RETURNING 1`
    return rows.length
  })

  return { find, upsert, setDeprovisioned, isDeprovisioned, forget, forgetPerson, endAllBut } as const
})

export class IdentityLinksRepository extends Context.Service<IdentityLinksRepository>()("@orgplane/server/identity/IdentityLinksRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
