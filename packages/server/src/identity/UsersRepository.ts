/** Storage of user accounts (not tenant-scoped: a person may belong to several organizations). */
import { Model, SqlClient } from "@effect/sql"
import { Conflict, User, UserId } from "@orgplane/schema"
import { Effect, Schema } from "effect"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findOne } from "../platform/Statements.js"

export class UserRow extends Model.Class<UserRow>("UserRow")({
  id: Model.GeneratedByApp(UserId),
  email: User.fields.email,
  name: User.fields.name,
  passwordHash: Model.Sensitive(Schema.String),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** The API's user from a row (decoded, so valid: the class does not check it again). */
export const toUser = (row: Pick<UserRow, "id" | "email" | "name" | "createdAt">) =>
  new User({ id: row.id, email: row.email, name: row.name, createdAt: row.createdAt }, true)

const emailTaken = () => new Conflict({ error: "email_taken", message: "An account with this email already exists." })

export class UsersRepository extends Effect.Service<UsersRepository>()("@orgplane/server/identity/UsersRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRow = execute({ Request: UserRow.insert, execute: (row) => sql`INSERT INTO users ${sql.insert(row)}` })
    const insert = (row: typeof UserRow.insert.Type) => insertRow(row).pipe(catchUniqueViolation(emailTaken), Effect.as(row))

    const findByEmail = findOne({
      Request: Schema.String,
      Result: UserRow,
      execute: (email) => sql`SELECT * FROM users WHERE lower(email) = lower(${email})`
    })

    const findById = findOne({ Request: UserId, Result: UserRow, execute: (id) => sql`SELECT * FROM users WHERE id = ${id}` })

    const count = sql<{ count: number }>`SELECT count(*)::int AS count FROM users`.pipe(Effect.map((rows) => rows[0].count))

    const update = execute({
      Request: Schema.Struct({
        id: UserId,
        name: Schema.optional(Schema.String),
        passwordHash: Schema.optional(Schema.String),
        updatedAt: DateColumn
      }),
      execute: ({ id, ...changes }) => sql`UPDATE users SET ${sql.update(changes)} WHERE id = ${id}`
    })

    /** Whether the account's email is proven to the whole instance (an SSO sign-in through a verified domain). */
    const emailVerified = (id: UserId) =>
      sql`SELECT 1 FROM users WHERE id = ${id} AND email_verified_at IS NOT NULL`.pipe(Effect.map((rows) => rows.length > 0))

    /** Records the proof, once: an SSO sign-in through a domain an organization verified made or took the account. */
    const markEmailVerified = (input: { readonly id: UserId; readonly at: Date }) =>
      sql`UPDATE users SET email_verified_at = ${input.at} WHERE id = ${input.id} AND email_verified_at IS NULL`.pipe(Effect.asVoid)

    /**
     * A reset link's new password, set only while the account's password and email are still those it was issued
     * against (`passwordDigest`: SHA-256 of the stored hash, hex), in one statement: a change of either voids it.
     */
    const resetPassword = findOne({
      Request: Schema.Struct({ id: UserId, email: Schema.String, passwordDigest: Schema.String, passwordHash: Schema.String, at: DateColumn }),
      Result: UserRow,
      execute: (input) =>
        sql`UPDATE users SET password_hash = ${input.passwordHash}, updated_at = ${input.at}
            WHERE id = ${input.id} AND lower(email) = lower(${input.email})
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
            WHERE id = ${input.id} AND lower(email) = lower(${input.email})
            RETURNING *`
    })

    return { insert, findByEmail, findById, count, update, emailVerified, markEmailVerified, resetPassword, proveEmail } as const
  })
}) {}
