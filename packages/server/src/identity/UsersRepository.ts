/**
 * Storage of user accounts (not tenant-scoped: a person may belong to several organizations): who they are, their
 * password and what is known of it (docs/security.md, "Who owns an account"), the proof of their email, and their state.
 */
import { AdminUser, type AdminUserListQuery, Conflict, OrganizationId, User, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findAll, findOne, likePattern, trustedClassRow } from "../platform/Statements.js"

export class UserRow extends Model.Class<UserRow>("UserRow")({
  id: Model.GeneratedByApp(UserId),
  email: User.fields.email,
  name: User.fields.name,
  passwordHash: Model.Sensitive(Schema.String),
  /** Whether the account has a password of its own: not when made by SSO or a directory, or taken back. */
  hasPassword: Schema.Boolean,
  /**
   * The organization whose owner or admin was shown the reset link that set the password: they may know it, and what
   * was chosen in its place, so it ends when the account joins another organization.
   */
  passwordBoundOrganizationId: Schema.NullOr(OrganizationId),
  /** The password is temporary: its sign-in chooses the person's own (`newPassword`). */
  passwordChangeRequired: Schema.Boolean,
  createdAt: DateColumn,
  updatedAt: DateColumn,
  /** The instance's operator disabled the account: no session, API key or sign-in of it is admitted until enabled. */
  disabledAt: Schema.NullOr(DateColumn),
  /** The account was deleted: the row is its tombstone (a pseudonym for name and email, an unusable password). */
  deletedAt: Schema.NullOr(DateColumn)
}) {}

/**
 * The password hash a sign-in or a confirmation checks, if the account has a password of its own (undefined: none,
 * and `Crypto.verifyPassword` then spends a full hash on nothing, so it answers as slowly as a wrong password).
 */
export const storedPassword = (row: Pick<UserRow, "passwordHash" | "hasPassword">): string | undefined =>
  row.hasPassword ? row.passwordHash : undefined

/** What `password_hash` holds once the account has no password (`has_password` false): nothing is checked against it. */
const NO_PASSWORD = "none"

/** The API's user from a row (decoded, so valid: the class does not check it again). */
export const toUser = (row: Pick<UserRow, "id" | "email" | "name" | "createdAt">) =>
  new User({ id: row.id, email: row.email, name: row.name, createdAt: row.createdAt }, { disableChecks: true })

const emailTaken = () => new Conflict({ error: "email_taken", message: "An account with this email already exists." })

/** The operator's list of accounts, oldest first (user ids are time-ordered). */
const oldestFirst = Keyset.make<AdminUser>("admin-users", "asc", [{ column: "u.id", value: (user) => user.id }])

/** An account as the operator sees it: the user, its proof, its state, and its active memberships counted. */
const adminColumns = (sql: SqlClient.SqlClient) =>
  sql`u.id, u.email, u.name, u.created_at, u.email_verified_at IS NOT NULL AS email_verified, u.disabled_at,
      (SELECT count(*)::int FROM memberships m WHERE m.user_id = u.id AND m.removed_at IS NULL) AS organization_count`

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = execute({ Request: UserRow.insert, execute: (row) => sql`INSERT INTO users ${sql.insert(row)}` })
  const insert = (row: Omit<typeof UserRow.insert.Type, "disabledAt" | "deletedAt" | "passwordBoundOrganizationId" | "passwordChangeRequired">) =>
    insertRow({ ...row, passwordBoundOrganizationId: null, passwordChangeRequired: false, disabledAt: null, deletedAt: null }).pipe(
      catchUniqueViolation(emailTaken),
      Effect.as(row)
    )

  const findByEmail = findOne({
    Request: Schema.String,
    Result: UserRow,
    execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
  })

  const findById = findOne({ Request: UserId, Result: UserRow, execute: (id) => sql`SELECT * FROM users WHERE id = ${id}` })

  /** The account unless it was deleted, its row locked until the transaction ends (a deletion, a disable). */
  const lockLive = findOne({
    Request: UserId,
    Result: UserRow,
    execute: (id) => sql`SELECT * FROM users WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`
  })

  const count = sql<{ count: number }>`SELECT count(*)::int AS count FROM users`.pipe(Effect.map((rows) => rows[0].count))

  const update = execute({
    Request: Schema.Struct({
      id: UserId,
      name: Schema.optional(Schema.String),
      updatedAt: DateColumn
    }),
    execute: ({ id, ...changes }) => sql`UPDATE users SET ${sql.update(changes)} WHERE id = ${id}`
  })

  /**
   * Sets the account's email; unless `sameAddress` (only the letters' case changed), the proof of the old one is
   * cleared with it: nobody proved the new one. 409 `email_taken` when another account has it.
   */
  const changeEmail = (input: { readonly id: UserId; readonly email: string; readonly sameAddress: boolean; readonly at: Date }) =>
    sql`UPDATE users SET email = ${input.email}, updated_at = ${input.at}
            ${input.sameAddress ? sql`` : sql`, email_verified_at = NULL`}
          WHERE id = ${input.id}`.pipe(catchUniqueViolation(emailTaken), Effect.asVoid)

  /** Whether the account's email is proven to the whole instance (an SSO sign-in through a verified domain). */
  const emailVerified = (id: UserId) =>
    sql`SELECT 1 FROM users WHERE id = ${id} AND email_verified_at IS NOT NULL`.pipe(Effect.map((rows) => rows.length > 0))

  /** Records the proof, once: an SSO sign-in through a domain an organization verified made or took the account. */
  const markEmailVerified = (input: { readonly id: UserId; readonly at: Date }) =>
    sql`UPDATE users SET email_verified_at = ${input.at} WHERE id = ${input.id} AND email_verified_at IS NULL`.pipe(Effect.asVoid)

  /**
   * A password the person chose, knowing the account's (a change, the first sign-in with a temporary one): no longer
   * temporary; an organization's hold on it (`passwordBoundOrganizationId`) stays, since whoever knew the one before
   * may have chosen this one.
   */
  const setPassword = (input: { readonly id: UserId; readonly passwordHash: string; readonly at: Date }) =>
    sql`UPDATE users SET password_hash = ${input.passwordHash}, has_password = true, password_change_required = false,
            updated_at = ${input.at}
          WHERE id = ${input.id}`.pipe(Effect.asVoid)

  /** The account has no password any more: it signs in another way. */
  const endPassword = (input: { readonly id: UserId; readonly at: Date }) =>
    sql`UPDATE users SET password_hash = ${NO_PASSWORD}, has_password = false, password_bound_organization_id = NULL,
            password_change_required = false, updated_at = ${input.at}
          WHERE id = ${input.id}`.pipe(Effect.asVoid)

  /**
   * The account joins `organizationId`: a password an owner or admin of another organization may know ends with it.
   * Whether it ended.
   */
  const endPasswordBoundElsewhere = (input: { readonly id: UserId; readonly organizationId: OrganizationId; readonly at: Date }) =>
    sql`UPDATE users SET password_hash = ${NO_PASSWORD}, has_password = false, password_bound_organization_id = NULL,
            password_change_required = false, updated_at = ${input.at}
          WHERE id = ${input.id} AND password_bound_organization_id IS NOT NULL AND password_bound_organization_id <> ${input.organizationId}
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  /**
   * A reset link's new password, set only while the account's password and email are still those it was issued
   * against (`passwordDigest`: SHA-256 of the stored hash, hex), in one statement: a change of either voids it. A
   * link shown to an organization's owner or admin sets a temporary password bound to that organization
   * (`boundOrganizationId`); any other link, the person's own.
   */
  const resetPassword = findOne({
    Request: Schema.Struct({
      id: UserId,
      email: Schema.String,
      passwordDigest: Schema.String,
      passwordHash: Schema.String,
      boundOrganizationId: Schema.NullOr(OrganizationId),
      at: DateColumn
    }),
    Result: UserRow,
    execute: (input) =>
      sql`UPDATE users SET password_hash = ${input.passwordHash}, has_password = true,
                password_bound_organization_id = ${input.boundOrganizationId},
                password_change_required = ${input.boundOrganizationId !== null}, updated_at = ${input.at}
            WHERE id = ${input.id} AND lower(email) = lower(${input.email}) AND disabled_at IS NULL AND deleted_at IS NULL
              AND encode(sha256(convert_to(password_hash, 'UTF8')), 'hex') = ${input.passwordDigest}
            RETURNING *`
  })

  /**
   * A mailed verification link's proof: the email is proven, while it is still the one the link was sent to; an
   * earlier proof's time is kept. Answers the account with the time of its proof.
   */
  const proveEmail = findOne({
    Request: Schema.Struct({ id: UserId, email: Schema.String, at: DateColumn }),
    Result: Schema.Struct({ ...UserRow.fields, emailVerifiedAt: DateColumn }),
    execute: (input) =>
      sql`UPDATE users SET email_verified_at = COALESCE(email_verified_at, ${input.at})
            WHERE id = ${input.id} AND lower(email) = lower(${input.email}) AND deleted_at IS NULL
            RETURNING *`
  })

  /** Disables (`at`) or enables (null) a live account; a disabled one keeps the instant it was first disabled. */
  const setDisabled = (input: { readonly id: UserId; readonly at: Date | null }) =>
    sql`UPDATE users SET disabled_at = ${input.at === null ? null : sql`COALESCE(disabled_at, ${input.at})`}
          WHERE id = ${input.id} AND deleted_at IS NULL`.pipe(Effect.asVoid)

  /**
   * Makes the account its own tombstone: name and email become `pseudonym` (no `@`: no address, so no sign-in or
   * sign-up ever matches it, and the real address is free again), the password `unusableHash`, the proof gone.
   */
  const tombstone = (input: { readonly id: UserId; readonly pseudonym: string; readonly unusableHash: string; readonly at: Date }) =>
    sql`UPDATE users SET name = ${input.pseudonym}, email = ${input.pseudonym}, password_hash = ${input.unusableHash},
            has_password = false, password_bound_organization_id = NULL, password_change_required = false,
            email_verified_at = NULL, disabled_at = NULL, deleted_at = ${input.at}, updated_at = ${input.at}
          WHERE id = ${input.id}`.pipe(Effect.asVoid)

  const adminRow = trustedClassRow(AdminUser)

  const listRows = findAll({
    Request: Schema.Struct({ email: Schema.optional(Schema.String), disabled: Schema.optional(Schema.Boolean), page: Keyset.PageRequest }),
    Result: adminRow,
    execute: ({ disabled, email, page }) =>
      sql`SELECT ${adminColumns(sql)} FROM users u WHERE ${
          sql.and([
            sql`u.deleted_at IS NULL`,
            email === undefined ? sql`true` : sql`u.email ILIKE ${likePattern(email)}`,
            disabled === undefined ? sql`true` : disabled ? sql`u.disabled_at IS NOT NULL` : sql`u.disabled_at IS NULL`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /** Every live account, oldest first, as the operator lists them (`GET /v1/admin/users`). */
  const listForOperator = (query: AdminUserListQuery) =>
    Keyset.page(oldestFirst, query, (page) => listRows({ email: query.email, disabled: query.disabled, page }))

  const adminView = findOne({
    Request: UserId,
    Result: adminRow,
    execute: (id) => sql`SELECT ${adminColumns(sql)} FROM users u WHERE u.id = ${id} AND u.deleted_at IS NULL`
  })

  /** One live account as the operator sees it. */
  const findForOperator = (id: UserId) => adminView(id)

  /** Whether the account may act: neither disabled nor deleted (an absent one may not). */
  const admitted = (row: Option.Option<UserRow>) => Option.exists(row, (user) => user.disabledAt === null && user.deletedAt === null)

  return {
    insert,
    findByEmail,
    findById,
    lockLive,
    count,
    update,
    changeEmail,
    emailVerified,
    markEmailVerified,
    setPassword,
    endPassword,
    endPasswordBoundElsewhere,
    resetPassword,
    proveEmail,
    setDisabled,
    tombstone,
    listForOperator,
    findForOperator,
    admitted
  } as const
})

export class UsersRepository extends Context.Service<UsersRepository>()("@orgplane/server/identity/UsersRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
