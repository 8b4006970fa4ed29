/** Storage of user accounts. */
import { SqlClient } from "@effect/sql"
import { Conflict, User, type UserId } from "@orgplane/schema"
import { Effect } from "effect"
import { catchUniqueViolation, first } from "../platform/Sql.js"

interface UserRow {
  readonly id: UserId
  readonly email: string
  readonly name: string
  readonly passwordHash: string
  readonly createdAt: Date
}

export const toUser = (row: UserRow) => new User({ id: row.id, email: row.email, name: row.name, createdAt: row.createdAt })

export class UsersRepository extends Effect.Service<UsersRepository>()("@orgplane/server/UsersRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (row: UserRow) =>
      sql`INSERT INTO users ${sql.insert({ ...row, updatedAt: row.createdAt })}`.pipe(
        catchUniqueViolation(() => new Conflict({ error: "email_taken", message: "An account with this email already exists." })),
        Effect.as(toUser(row))
      )

    const findByEmail = (email: string) =>
      sql<UserRow>`SELECT id, email, name, password_hash, created_at FROM users WHERE lower(email) = lower(${email})`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const findById = (id: UserId) =>
      sql<UserRow>`SELECT id, email, name, password_hash, created_at FROM users WHERE id = ${id}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const count = sql<{ count: number }>`SELECT count(*)::int AS count FROM users`.pipe(
      Effect.map((rows) => rows[0].count),
      Effect.orDie
    )

    const update = (id: UserId, changes: { readonly name?: string; readonly passwordHash?: string }, at: Date) =>
      sql`UPDATE users SET ${sql.update({ ...changes, updatedAt: at })} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    return { insert, findByEmail, findById, count, update } as const
  })
}) {}
