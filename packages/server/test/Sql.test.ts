/** platform/Sql.ts's `classify` on Effect 4's SqlError reasons, as the 503 answer reads them. */
import { describe, expect, it } from "@effect/vitest"
import * as SqlErrors from "effect/sql/SqlError"
import { classify, pgCode } from "../src/platform/Sql.js"

const props = (cause: unknown) => ({ cause, message: "PgConnection: query failed", operation: "query" })
const coded = (code: string) => Object.assign(new Error(`code ${code}`), { code })
const sqlError = (reason: SqlErrors.SqlErrorReason) => new SqlErrors.SqlError({ reason })

describe("Sql.classify", () => {
  it("reads the driver's reasons: a connection error or statement timeout is unavailable, a conflict is concurrency", () => {
    expect(classify(sqlError(new SqlErrors.ConnectionError(props(new Error("Connection is closed")))))).toBe("unavailable")
    expect(classify(sqlError(new SqlErrors.StatementTimeoutError(props(coded("57014")))))).toBe("unavailable")
    expect(classify(sqlError(new SqlErrors.SerializationError(props(coded("40001")))))).toBe("concurrency")
    expect(classify(sqlError(new SqlErrors.DeadlockError(props(coded("40P01")))))).toBe("concurrency")
  })

  it("reads other reasons by SQLSTATE or socket code: shutdowns and class 53 are unavailable, the rest a bug", () => {
    expect(classify(sqlError(new SqlErrors.UnknownError(props(coded("57P01")))))).toBe("unavailable")
    expect(classify(sqlError(new SqlErrors.UnknownError(props(coded("53300")))))).toBe("unavailable")
    expect(classify(sqlError(new SqlErrors.UnknownError(props(coded("ECONNRESET")))))).toBe("unavailable")
    expect(classify(sqlError(new SqlErrors.SqlSyntaxError(props(coded("42P01")))))).toBe("bug")
    expect(classify(sqlError(new SqlErrors.UniqueViolation({ ...props(coded("23505")), constraint: "users_email_key" })))).toBe("bug")
    expect(classify(sqlError(new SqlErrors.UnknownError(props(new Error("no code")))))).toBe("bug")
  })

  it("finds the SQLSTATE behind a SqlError", () => {
    expect(pgCode(sqlError(new SqlErrors.UniqueViolation({ ...props(coded("23505")), constraint: "users_email_key" })))).toBe("23505")
    expect(pgCode(sqlError(new SqlErrors.ConnectionError(props(new Error("Connection is closed")))))).toBeUndefined()
  })
})
