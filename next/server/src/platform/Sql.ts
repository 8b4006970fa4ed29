/**
 * The storage boundary. Repositories fail with `SqlError`, typed; services end every unit of work in
 * `transaction` (writes, and reads that must see one state) or `orUnavailable` (plain reads), which turn what is
 * left of `SqlError` into the API's answer: the database is unavailable (503 `service_unavailable`), or a bug
 * (a defect: 500, logged). A transaction that loses a serialization conflict or a deadlock runs again.
 *
 * Partial port (issue 46): what a storage failure means (`classify`, `pgCode`, `isSqlError`, the two messages), which
 * the 503 answer reads. Left in packages/server/src/platform/Sql.ts: `catchUniqueViolation`, `first`, `lockLimit`,
 * `transactionAttempts`, `retryPolicy`, `orUnavailable`, `transaction` and the transaction parties
 * (`TransactionParty`, `withTransactionParty`).
 */
import * as SqlErrors from "effect/sql/SqlError"

type SqlError = SqlErrors.SqlError

/**
 * The Postgres error code behind a SqlError, if any (for example `23505`, a unique violation). Effect 4's SqlError
 * carries a classified `reason` whose `cause` is the server's error, its SQLSTATE as `code`.
 */
export const pgCode = (error: SqlError): string | undefined => {
  const code: unknown = typeof error.reason.cause === "object" && error.reason.cause !== null
    ? Reflect.get(error.reason.cause, "code")
    : undefined
  return typeof code === "string" ? code : undefined
}

export const isSqlError = (error: unknown): error is SqlError => SqlErrors.isSqlError(error)

/**
 * What a storage failure means:
 * - `concurrency`: a serialization failure or deadlock; running the whole transaction again may succeed;
 * - `unavailable`: the database cannot be reached or does not answer in time; the request may succeed later;
 * - `bug`: anything else (bad SQL, a constraint the code should have handled): retrying cannot help.
 */
export type Verdict = "concurrency" | "unavailable" | "bug"

const concurrencyCodes = new Set(["40001", "40P01"])
/** 57014 is a statement timeout (or a cancel); 57P01-03 are shutdowns and a server not yet accepting connections. */
const unavailableCodes = new Set(["57014", "57P01", "57P02", "57P03"])
/** Class 08: connection exception; class 53: insufficient resources (too many connections, out of memory, disk full). */
const unavailableClasses = new Set(["08", "53"])
/** Socket failures, as Node reports them (ENOENT: the embedded database's socket is gone). */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EADDRNOTAVAIL",
  "ENOENT"
])

const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * Classifies a storage failure (see `Verdict`). Effect 4's driver classifies it already (`error.reason`): a
 * `ConnectionError` is a connection that could not be made or was lost (the driver's timeouts included), a
 * `StatementTimeoutError` the server's statement timeout (57014), `SerializationError` and `DeadlockError` the two
 * conflicts. Every other reason is read by its SQLSTATE (shutdowns, class 53) or its socket error code.
 */
export const classify = (error: SqlError): Verdict => {
  const reason = error.reason
  switch (reason._tag) {
    case "ConnectionError":
    case "StatementTimeoutError":
      return "unavailable"
    case "SerializationError":
    case "DeadlockError":
      return "concurrency"
  }
  let current: unknown = reason.cause
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code: unknown = Reflect.get(current, "code")
    if (typeof code === "string") {
      if (SQLSTATE.test(code)) {
        if (concurrencyCodes.has(code)) return "concurrency"
        // A SQLSTATE is the server's verdict on this statement: it answered, so it is available.
        return unavailableCodes.has(code) || unavailableClasses.has(code.slice(0, 2)) ? "unavailable" : "bug"
      }
      if (socketCodes.has(code)) return "unavailable"
    }
    current = Reflect.get(current, "cause")
  }
  return "bug"
}

export const unavailableMessage = "The database is not available right now; retry later."
export const concurrencyMessage = "The database could not complete this change because of concurrent changes; retry."
