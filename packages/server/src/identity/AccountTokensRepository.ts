/**
 * Storage of an account's one-time tokens (not tenant-scoped: an account belongs to no one organization): password
 * reset and email verification links, one of each per account, kept as the token's SHA-256 (migration 0041).
 */
import { OrganizationId, Role, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, execute, findOne } from "../platform/Statements.js"

export const Purpose = Schema.Literals(["password_reset", "email_verification"])
export type Purpose = typeof Purpose.Type

/** Who issued a link: an owner or admin (`member`), the instance's operator, the server's own command, the person. */
export const Issuer = Schema.Literals(["member", "operator", "machine", "self"])
export type Issuer = typeof Issuer.Type

export class AccountTokenRow extends Model.Class<AccountTokenRow>("AccountTokenRow")({
  userId: UserId,
  purpose: Purpose,
  tokenHash: Model.Sensitive(Schema.String),
  /** The account's email when it was issued (a verification link proves it): a change of email voids the token. */
  email: Schema.String,
  /** A reset link's: SHA-256 of the password hash it was issued against, so that a change of password voids it. */
  passwordDigest: Schema.NullOr(Schema.String),
  issuedBy: Issuer,
  /** How it reached the person: `shown` to its issuer, or `mailed` to the account's address (its use proves it). */
  delivery: Schema.Literals(["shown", "mailed"]),
  /** Who issued it, as the audit log names them, for the event of its use. */
  issuerLabel: Schema.NullOr(Schema.String),
  /** The organization whose owner or admin issued it (its log records the use too), or whose operator did. */
  issuerOrganizationId: Schema.NullOr(OrganizationId),
  /** An owner's or admin's link: the highest role the account may have in that organization when it is used. */
  allowedRole: Schema.NullOr(Role),
  createdAt: DateColumn,
  expiresAt: DateColumn
}) {}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Issues the account's token of its purpose, replacing the one it had: an older link stops working. */
  const replace = execute({
    Request: AccountTokenRow.insert,
    execute: (row) =>
      sql`INSERT INTO account_tokens ${sql.insert(row)}
          ON CONFLICT (user_id, purpose) DO UPDATE SET
            token_hash = EXCLUDED.token_hash, email = EXCLUDED.email, password_digest = EXCLUDED.password_digest,
            issued_by = EXCLUDED.issued_by, delivery = EXCLUDED.delivery, issuer_label = EXCLUDED.issuer_label,
            issuer_organization_id = EXCLUDED.issuer_organization_id, allowed_role = EXCLUDED.allowed_role,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`
  })

  /**
   * Takes the token with this hash and purpose: deleted, so that of two uses at once one finds it (the other waits
   * for the row and then finds nothing). The caller checks what it says within the same transaction.
   */
  const take = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String, purpose: Purpose }),
    Result: AccountTokenRow,
    execute: ({ purpose, tokenHash }) =>
      sql`DELETE FROM account_tokens WHERE token_hash = ${tokenHash} AND purpose = ${purpose} RETURNING *`
  })

  /** Takes the token as `take` does, only when it is the account's: another account's use leaves it as it was. */
  const takeOwn = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String, purpose: Purpose, userId: UserId }),
    Result: AccountTokenRow,
    execute: ({ purpose, tokenHash, userId }) =>
      sql`DELETE FROM account_tokens WHERE token_hash = ${tokenHash} AND purpose = ${purpose} AND user_id = ${userId} RETURNING *`
  })

  /** Voids the account's token of a purpose (a use of the other kind made it pointless, or the account changed). */
  const discard = execute({
    Request: Schema.Struct({ userId: UserId, purpose: Purpose }),
    execute: ({ purpose, userId }) => sql`DELETE FROM account_tokens WHERE user_id = ${userId} AND purpose = ${purpose}`
  })

  /** Voids every token of the account: its ownership was re-established, and no link issued before may outlive that. */
  const discardAll = (userId: UserId) => sql`DELETE FROM account_tokens WHERE user_id = ${userId}`.pipe(Effect.asVoid)

  return { replace, take, takeOwn, discard, discardAll } as const
})

export class AccountTokensRepository extends Context.Service<AccountTokensRepository>()("@orgplane/server/identity/AccountTokensRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
