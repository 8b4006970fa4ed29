/**
 * Backing up the embedded database and moving it to Postgres (`orgplane db dump`, `orgplane db restore`;
 * docs/operations.md).
 *
 * A dump is pg_dump's plain SQL (`--no-owner --no-privileges`), made by PGlite's own pg_dump in WebAssembly
 * (`@electric-sql/pglite-tools`), so it loads into any Postgres, by `orgplane db restore` or by `psql`. It is made in
 * the dumping process, never on a running server's single session (pg_dump changes its settings and deallocates
 * its prepared statements): from a running server's folder through a snapshot of its files the server hands over
 * (platform/SnapshotChannel.ts), loaded into a PGlite in memory; from a stopped folder by opening it, holding its lock.
 * Everything comes along: accounts with their password hashes, sessions and API keys (stored hashed), the
 * secrets (encrypted: the server needs the same keys), the instance's cursor key (so cursors handed out before
 * still page), the durable engine's messages (so workflows and syncs resume). The keys are not in it.
 *
 * Restoring, into an empty Postgres database or a new data folder (a backup's restore), checks that the target
 * holds no table and that the dump's schema is one this version knows (an older one is migrated forward when the
 * server starts), then runs the dump's statements in one transaction: a failure leaves the target empty. Settings a
 * Postgres older than the dumping pg_dump does not know (`SET transaction_timeout`, Postgres 17) are skipped.
 */
import { PGlite } from "@electric-sql/pglite"
import { pgDump } from "@electric-sql/pglite-tools/pg_dump"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as Database from "./Database.js"
import * as DataFolderLock from "./DataFolderLock.js"
import * as SnapshotChannel from "./SnapshotChannel.js"

/** The folder holds no embedded database, or PGlite or pg_dump failed on it. */
export class DumpFailed extends Data.TaggedError("DumpFailed")<{ readonly message: string; readonly cause?: unknown }> {}

/** The dump is not one this version restores, or the target is not empty. Nothing was changed. */
export class RestoreRefused extends Data.TaggedError("RestoreRefused")<{ readonly message: string }> {}

export interface Dump {
  /** pg_dump's plain SQL, headed by the orgplane lines (`header`). */
  readonly sql: string
  /** The last migration applied to the dumped database. */
  readonly schemaVersion: number
  /** The ids of the keys the instance's secrets are encrypted with (what ORGPLANE_ENCRYPTION_KEYS must hold). */
  readonly keyIds: ReadonlyArray<string>
  /** Where it was read: through the server holding the folder, or from the folder itself. */
  readonly from: "running server" | "stopped folder"
}

const versionLine = /^-- orgplane schema version: (\d+)$/mu
const keysLine = /^-- Its secrets are encrypted with key\(s\) (.*): the server/mu

const header = (schemaVersion: number, keyIds: ReadonlyArray<string>) =>
  [
    "-- orgplane database dump (orgplane db dump): load it with `orgplane db restore --database-url <url> <file>`",
    `-- orgplane schema version: ${schemaVersion}`,
    `-- Its secrets are encrypted with key(s) ${keyIds.map((id) => `"${id}"`).join(", ") || "(none)"}: the server reading it needs them in ORGPLANE_ENCRYPTION_KEYS.`,
    ""
  ].join("\n")

/** pg_dump's SQL of an open PGlite holding an orgplane database. */
const dumpOf = async (db: PGlite): Promise<Omit<Dump, "from">> => {
  const migrated = await db.query<{ present: boolean }>("SELECT to_regclass('public.orgplane_migrations') IS NOT NULL AS present")
  if (migrated.rows[0]?.present !== true) throw new Error("it holds no orgplane tables (orgplane_migrations is missing)")
  const version = await db.query<{ id: number }>("SELECT coalesce(max(id), 0) AS id FROM public.orgplane_migrations")
  const keys = await db.query<{ id: string }>("SELECT DISTINCT split_part(ciphertext, ':', 2) AS id FROM public.instance_secrets ORDER BY 1")
  const schemaVersion = version.rows[0]?.id ?? 0
  const keyIds = keys.rows.map((row) => row.id)
  const file = await pgDump({ pg: db, args: ["--no-owner", "--no-privileges"] })
  return { sql: header(schemaVersion, keyIds) + await file.text(), schemaVersion, keyIds }
}

const opened = (create: () => Promise<PGlite>, folder: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({ try: create, catch: (cause) => new DumpFailed({ message: `Could not open the embedded database in ${folder}`, cause }) }),
    (db) => Effect.ignore(Effect.promise(() => db.close()))
  )

/**
 * The embedded database of `dataDir` as SQL: through the server holding the folder when one of this host does, else
 * from the folder itself (held meanwhile, so no server starts on it). Fails with `DataFolderInUse` when a process
 * that serves no snapshot holds it (another host's, say).
 */
export const dumpFolder = Effect.fn("DatabaseDump.dumpFolder")(function*(dataDir: string) {
  const folder = Path.resolve(dataDir)
  const present = yield* Effect.promise(() => Fs.access(Path.join(folder, "PG_VERSION")).then(() => true, () => false))
  if (!present) {
    return yield* new DumpFailed({ message: `There is no embedded database in ${folder} (no PG_VERSION): name the server's folder with --data or ORGPLANE_DATA_DIR.` })
  }
  const real = yield* Effect.promise(() => Fs.realpath(folder))
  const snapshot = yield* SnapshotChannel.fetch(real)
  return yield* Effect.scoped(Effect.gen(function*() {
    const from = Option.isSome(snapshot) ? "running server" as const : "stopped folder" as const
    if (Option.isNone(snapshot)) yield* DataFolderLock.hold(real)
    const db = yield* Option.match(snapshot, {
      onSome: (tarball) => opened(() => PGlite.create({ loadDataDir: new Blob([tarball]) }), folder),
      onNone: () => opened(() => PGlite.create({ dataDir: real }), folder)
    })
    const dump = yield* Effect.tryPromise({
      try: () => dumpOf(db),
      catch: (cause) => new DumpFailed({ message: `Could not dump the embedded database in ${folder}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
    })
    return { ...dump, from }
  }))
})

/**
 * The statements of pg_dump's plain SQL, in order, without comments, psql's meta-commands (a line starting with a
 * backslash) or the terminating semicolons. Quoted strings (`'…'`, `E'…'`), quoted names (`"…"`), dollar-quoted
 * bodies (`$tag$…$tag$`) and comments are read as such, so a semicolon inside one does not end a statement.
 */
export const statements = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  let start = 0
  let index = 0
  const isWord = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}_]/u.test(char)
  /** The statement begun at `start`, up to `end`, without the comments before it. */
  const pending = (end: number) => text.slice(start, end).replace(/^(?:\s|--[^\n]*(?:\n|$))+/u, "").trim()
  const push = (end: number) => {
    const statement = pending(end)
    if (statement !== "") found.push(statement)
  }
  while (index < text.length) {
    const char = text[index]!
    const next = text[index + 1]
    if (char === "-" && next === "-") {
      const end = text.indexOf("\n", index)
      index = end < 0 ? text.length : end + 1
    } else if (char === "/" && next === "*") {
      let depth = 1
      index += 2
      while (index < text.length && depth > 0) {
        if (text.startsWith("/*", index)) (depth++, index += 2)
        else if (text.startsWith("*/", index)) (depth--, index += 2)
        else index++
      }
    } else if (char === "'") {
      const escapes = (text[index - 1] === "E" || text[index - 1] === "e") && !isWord(text[index - 2])
      index++
      while (index < text.length) {
        if (escapes && text[index] === "\\") index += 2
        else if (text[index] === "'" && text[index + 1] === "'") index += 2
        else if (text[index] === "'") break
        else index++
      }
      index++
    } else if (char === "\"") {
      index++
      while (index < text.length && !(text[index] === "\"" && text[index + 1] !== "\"")) index += text[index] === "\"" ? 2 : 1
      index++
    } else if (char === "$" && !isWord(text[index - 1])) {
      const tag = /^\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/u.exec(text.slice(index, index + 64))
      if (tag === null) index++
      else {
        const end = text.indexOf(tag[0], index + tag[0].length)
        index = end < 0 ? text.length : end + tag[0].length
      }
    } else if (char === "\\" && (index === 0 || text[index - 1] === "\n") && pending(index) === "") {
      // A psql meta-command (`\connect`, `\restrict`): a line of its own, not SQL.
      const end = text.indexOf("\n", index)
      index = end < 0 ? text.length : end + 1
      start = index
    } else if (char === ";") {
      push(index)
      index++
      start = index
    } else index++
  }
  push(text.length)
  return found
}

export interface Restored {
  readonly statements: number
  readonly schemaVersion: number
  /** Settings of the dump the target does not know, left out (`transaction_timeout` before Postgres 17). */
  readonly skippedSettings: ReadonlyArray<string>
  /** The keys the dump's header says its secrets are encrypted with. */
  readonly keyIds: ReadonlyArray<string>
}

/** Tables, views and sequences outside Postgres' own schemas: a database holding any is not a restore's target. */
const relationsCount = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ readonly relations: number }>`SELECT count(*)::int AS relations FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')`,
    ([row]) => row?.relations ?? 0
  )

/** Where a dump is loaded: an empty Postgres database, or a new embedded database in a folder that holds none. */
export type Target = { readonly url: Redacted.Redacted } | { readonly dataDir: string }

/**
 * Loads the dump `text` into the empty database `target`, in one transaction; `latestMigration` is the last
 * migration this version knows. Fails with `RestoreRefused` (nothing changed) for a dump that is not orgplane's or
 * is of a newer schema, or a target that holds tables; with `SqlError` when the database cannot be reached or a
 * statement fails (rolled back); for a folder, as the embedded database fails to open one (`DataFolderInUse`, …).
 */
export const restore = Effect.fn("DatabaseDump.restore")(function*(target: Target, text: string, latestMigration: number) {
  const version = versionLine.exec(text.slice(0, 4096))
  if (version === null) {
    return yield* new RestoreRefused({ message: "This is not a dump of `orgplane db dump` (its first lines name the schema version): load another pg_dump with psql." })
  }
  const schemaVersion = Number(version[1])
  if (schemaVersion > latestMigration) {
    return yield* new RestoreRefused({
      message: `The dump is of schema version ${schemaVersion}, newer than this orgplane's (${latestMigration}): restore it with the orgplane that dumped it, or a newer one. Nothing was changed.`
    })
  }
  const parsed = statements(text)
  return yield* Effect.scoped(Effect.gen(function*() {
    // One connection; a dump's statement (an index over a large table) may run long.
    const timeouts = { statementTimeout: Duration.hours(1) }
    const pool = yield* Layer.build(
      "url" in target ? Database.layerUrl(target.url, { maxConnections: 1, ...timeouts }) : Database.layerEmbedded({ dataDir: target.dataDir, ...timeouts })
    )
    const sql = Context.get(pool, SqlClient.SqlClient)
    const relations = yield* relationsCount(sql)
    if (relations > 0) {
      return yield* new RestoreRefused({
        message: `The target database already holds ${relations} table(s), view(s) or sequence(s): restore into ${
          "url" in target ? "a new, empty database (CREATE DATABASE orgplane)" : "a new folder"
        }. Nothing was changed.`
      })
    }
    const skippedSettings: Array<string> = []
    yield* sql.withTransaction(Effect.forEach(parsed, (statement) =>
      Effect.gen(function*() {
        const setting = /^SET\s+([A-Za-z_][\w.]*)\s*(?:=|TO\b)/iu.exec(statement)?.[1]?.toLowerCase()
        if (setting !== undefined) {
          const known = yield* sql`SELECT 1 FROM pg_catalog.pg_settings WHERE name = ${setting}`
          if (known.length === 0) {
            skippedSettings.push(setting)
            return
          }
        }
        yield* sql.unsafe(statement).unprepared
      }), { discard: true }))
    const keyIds = [...(keysLine.exec(text.slice(0, 4096))?.[1] ?? "").matchAll(/"([^"]*)"/gu)].map((match) => match[1] ?? "")
    return { statements: parsed.length, schemaVersion, skippedSettings, keyIds } satisfies Restored
  }))
})
