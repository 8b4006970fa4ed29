/**
 * Walks every encrypted column of `SecretColumns.ts` to rewrite its ciphertexts: the start-up upgrade of v1
 * ciphertexts (unbound) to v2 (bound to their row), and the rotation of every ciphertext to the newest key
 * (`orgplane keys rotate`). Both rewrite a value only if it is still the one read (compare-and-set), never touch
 * a value they cannot decrypt (they count and log it), and can be run again at any time: what is done is skipped.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { type Keyring, keyIdOf, loadKeys, makeKeyring } from "./Crypto.js"
import { LOCK_KEY } from "./Migrator.js"
import { allSecretColumns, bind, INSTANCE, type SecretColumn } from "./SecretColumns.js"

/** One stored ciphertext and its place. */
interface StoredValue {
  readonly organizationId: string
  readonly row: ReadonlyArray<string>
  readonly ciphertext: string
}

/** What a walk did to one column. */
export interface ColumnReport {
  readonly table: string
  readonly column: string
  /** Values rewritten. */
  readonly rewritten: number
  /** Values left as they are because they do not decrypt (logged with their place and the reason). */
  readonly unreadable: number
  /** Values changed by someone else between the read and the write (already rewritten by a server, say). */
  readonly changedMeanwhile: number
}

export interface WalkReport {
  readonly columns: ReadonlyArray<ColumnReport>
  readonly rewritten: number
  readonly unreadable: number
  readonly changedMeanwhile: number
}

const total = (columns: ReadonlyArray<ColumnReport>): WalkReport => ({
  columns,
  rewritten: columns.reduce((sum, column) => sum + column.rewritten, 0),
  unreadable: columns.reduce((sum, column) => sum + column.unreadable, 0),
  changedMeanwhile: columns.reduce((sum, column) => sum + column.changedMeanwhile, 0)
})

/** Which values a walk reads: v1 ones, or all those not written as v2 with the given key. */
type Selection = { readonly _tag: "V1" } | { readonly _tag: "NotWithKey"; readonly keyId: string }

/**
 * One batch of a column's values after `after` (in organization and row order), that `selection` picks. Across
 * organizations on purpose: the statement says so for the tenancy check. Names come from `SecretColumns.ts`, never
 * from input.
 */
/** The columns naming a value of `column`, in order: its organization's (but for an instance secret's) and its row's. */
const keysOf = (column: SecretColumn) => column.scope === "instance" ? column.row : ["organization_id", ...column.row]

const selectBatch = (sql: SqlClient.SqlClient, column: SecretColumn, selection: Selection, after: StoredValue | undefined, limit: number) => {
  const keys = keysOf(column)
  const instance = column.scope === "instance"
  const params: Array<string | number> = []
  const param = (value: string | number) => {
    params.push(value)
    return `$${params.length}`
  }
  const conditions = [
    `${column.column} IS NOT NULL`,
    selection._tag === "V1" ? `${column.column} LIKE 'v1:%'` : `${column.column} NOT LIKE ${param(`v2:${selection.keyId.replace(/[\\%_]/g, "\\$&")}:%`)}`
  ]
  if (after !== undefined) {
    conditions.push(`(${keys.join(", ")}) > (${[...(instance ? [] : [after.organizationId]), ...after.row].map(param).join(", ")})`)
  }
  const text = `/* instance-wide: re-encrypting stored secrets (platform/StoredSecrets.ts) */ SELECT ${
    keys.map((key, i) => `${key} AS k${i}`).join(", ")
  }, ${column.column} AS secret FROM ${column.table} WHERE ${conditions.join(" AND ")} ORDER BY ${keys.join(", ")} LIMIT ${param(limit)}`
  return Effect.map(
    sql.unsafe<Record<string, string>>(text, params),
    (rows): ReadonlyArray<StoredValue> =>
      rows.map((row) =>
        instance
          ? { organizationId: INSTANCE, row: column.row.map((_, i) => row[`k${i}`]!), ciphertext: row.secret! }
          : { organizationId: row.k0!, row: column.row.map((_, i) => row[`k${i + 1}`]!), ciphertext: row.secret! }
      )
  )
}

/** Writes `next` in place of `value` if it is still there; whether it was. */
const replace = (sql: SqlClient.SqlClient, column: SecretColumn, value: StoredValue, next: string) => {
  const keys = keysOf(column)
  const values = column.scope === "instance" ? value.row : [value.organizationId, ...value.row]
  const where = [...keys.map((name, i) => `${name} = $${i + 2}`), `${column.column} = $${keys.length + 2}`]
  return Effect.map(
    sql.unsafe<{ readonly n: number }>(
      `WITH changed AS (UPDATE ${column.table} SET ${column.column} = $1 WHERE ${where.join(" AND ")} RETURNING 1) SELECT count(*)::int AS n FROM changed`,
      [next, ...values, value.ciphertext]
    ),
    ([row]) => (row?.n ?? 0) > 0
  )
}

interface Walk {
  readonly selection: Selection
  /** The new ciphertext of a value, or why it cannot be opened. */
  readonly rewrite: (value: StoredValue, column: SecretColumn) => Result.Result<string, string>
  readonly batchSize: number
  /** Wraps each batch (its reads and writes): a transaction, or nothing inside an enclosing one. */
  readonly batch: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
}

const walkColumn = (sql: SqlClient.SqlClient, column: SecretColumn, walk: Walk) =>
  Effect.gen(function*() {
    let rewritten = 0
    let unreadable = 0
    let changedMeanwhile = 0
    let after: StoredValue | undefined
    while (true) {
      const values = yield* walk.batch(Effect.gen(function*() {
        const values = yield* selectBatch(sql, column, walk.selection, after, walk.batchSize)
        for (const value of values) {
          const next = walk.rewrite(value, column)
          if (Result.isFailure(next)) {
            unreadable++
            yield* Effect.logWarning(`Stored secret left as it is: ${column.table}.${column.column}: ${next.failure}`).pipe(
              Effect.annotateLogs({ organizationId: value.organizationId, row: value.row.join("/"), keyId: keyIdOf(value.ciphertext) ?? "" })
            )
            continue
          }
          if (yield* replace(sql, column, value, next.success)) rewritten++
          else changedMeanwhile++
        }
        return values
      }))
      if (values.length < walk.batchSize) break
      after = values[values.length - 1]
    }
    return { table: column.table, column: column.column, rewritten, unreadable, changedMeanwhile } satisfies ColumnReport
  })

const walkAll = (walk: Walk) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns: Array<ColumnReport> = []
    for (const column of allSecretColumns) columns.push(yield* walkColumn(sql, column, walk))
    return total(columns)
  })

const reason = (failure: { readonly _tag: string; readonly keyId?: string }) =>
  failure._tag === "UnknownKey"
    ? `its key "${failure.keyId}" is not configured (ORGPLANE_ENCRYPTION_KEYS)`
    : failure._tag === "NotAuthentic"
    ? `it does not authenticate with key "${failure.keyId}" (altered)`
    : "it is not a ciphertext of this server"

/** Whether any stored secret is still a v1 ciphertext, in one statement over every secret column. */
const anyV1 = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql.unsafe<{ readonly found: boolean }>(
      `/* instance-wide: re-encrypting stored secrets (platform/StoredSecrets.ts) */ SELECT ${
        allSecretColumns.map(({ column, table }) => `EXISTS (SELECT 1 FROM ${table} WHERE ${column} LIKE 'v1:%')`).join(" OR ")
      } AS found`
    ),
    (rows) => rows[0]?.found === true
  )

/**
 * Rewrites every v1 ciphertext (written before ciphertexts were bound to their row) as v2 with the current key, in
 * one transaction holding the migrations' lock, so servers starting together do it once. Runs at start-up after the
 * migrations (they cannot: they run without the keys, which only the server's configuration has). A v1 value whose
 * key is not configured stays as it is, logged, and reads as `stored_credential_unreadable` until a start-up with
 * that key upgrades it; nothing refuses to start.
 */
export const upgradeV1 = Effect.fn("StoredSecrets.upgradeV1")(function*(keyring: Keyring) {
  const sql = yield* SqlClient.SqlClient
  // Every start after the upgrade finds none: one statement instead of the locked walk's one a column. Nothing
  // writes v1 any more, so none found stays none.
  if (!(yield* anyV1(sql))) return total(allSecretColumns.map(({ column, table }) => ({ table, column, rewritten: 0, unreadable: 0, changedMeanwhile: 0 })))
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`
    const report = yield* walkAll({
      selection: { _tag: "V1" },
      batchSize: 1000,
      batch: (effect) => effect,
      rewrite: (value, column) =>
        Result.match(keyring.openV1(value.ciphertext), {
          onFailure: (failure) => Result.fail(reason(failure)),
          onSuccess: (plaintext) =>
            Result.mapError(keyring.seal(plaintext, bind(column, value.organizationId, ...value.row)), (error) => error.message)
        })
    })
    if (report.rewritten > 0) yield* Effect.logInfo(`Bound ${report.rewritten} stored secret(s) to their rows (v1 → v2 ciphertexts).`)
    if (report.unreadable > 0) {
      yield* Effect.logError(
        `${report.unreadable} stored secret(s) are still v1 ciphertexts that cannot be decrypted (see the warnings above): they answer stored_credential_unreadable until they are set again, or until a start-up with their key upgrades them.`
      )
    }
    return report
  }))
})

export interface RotateOptions {
  /** Values per transaction (default 500). */
  readonly batchSize?: number | undefined
}

/**
 * Re-encrypts every stored secret that is not written with the current (first) key, column by column, in batches,
 * one transaction per batch: an interrupted rotation keeps what it committed and the next run does the rest. A
 * value it cannot decrypt (its key is gone, or it was altered or moved) is left as it is and counted.
 */
export const rotate = Effect.fn("StoredSecrets.rotate")(function*(keyring: Keyring, options: RotateOptions = {}) {
  const sql = yield* SqlClient.SqlClient
  const current = keyring.current
  if (current === undefined) return yield* Effect.die(new Error("No encryption key configured"))
  return yield* walkAll({
    selection: { _tag: "NotWithKey", keyId: current.id },
    batchSize: options.batchSize ?? 500,
    batch: sql.withTransaction,
    rewrite: (value, column) => {
      const binding = bind(column, value.organizationId, ...value.row)
      const opened = value.ciphertext.startsWith("v1:") ? keyring.openV1(value.ciphertext) : keyring.open(value.ciphertext, binding)
      return Result.match(opened, {
        onFailure: (failure) => Result.fail(reason(failure)),
        onSuccess: (plaintext) => Result.mapError(keyring.seal(plaintext, binding), (error) => error.message)
      })
    }
  })
})

/** The local rotation refuses a database its migrations have not reached: `orgplane serve` of this version migrates it. */
export class DatabaseNotMigrated extends Data.TaggedError("DatabaseNotMigrated")<{ readonly message: string }> {}

/** The rotation refuses to run without a key to rotate to. */
export class NoEncryptionKey extends Data.TaggedError("NoEncryptionKey")<{ readonly message: string }> {}

/**
 * For a command run against the database without a server (`keys rotate`, `admin reset-password`): fails with
 * `DatabaseNotMigrated` unless this version's migrations, up to `latestMigration`, were applied; `then` says what to
 * run again afterwards.
 */
export const requireMigrated = Effect.fn("StoredSecrets.requireMigrated")(function*(latestMigration: number, then: string) {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql<{ readonly latest: number | null }>`SELECT max(id) AS latest FROM orgplane_migrations`.pipe(
    Effect.map(([row]) => row?.latest ?? 0),
    Effect.catchTag("SqlError", () => Effect.succeed(0))
  )
  if (applied < latestMigration) {
    return yield* new DatabaseNotMigrated({
      message: `The database is not migrated to this version (migration ${applied} of ${latestMigration}): start \`orgplane serve\` of this version once, then ${then}.`
    })
  }
})

/**
 * `orgplane keys rotate`: against the configured database (DATABASE_URL, or the embedded one in ORGPLANE_DATA_DIR,
 * which no server may have open), with the configured keys, after checking that the schema is this version's.
 */
export const rotateConfigured = Effect.fn("StoredSecrets.rotateConfigured")(function*(
  options: RotateOptions & { readonly latestMigration: number }
) {
  const keys = yield* loadKeys
  if (keys.length === 0) {
    return yield* new NoEncryptionKey({ message: "No encryption key is configured: set ORGPLANE_ENCRYPTION_KEYS (the new key first)." })
  }
  yield* requireMigrated(options.latestMigration, "rotate")
  const keyring = makeKeyring(keys)
  const report = yield* rotate(keyring, options)
  return { keyId: keyring.current!.id, ...report }
})
