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
 * still page), the durable engine's messages (so workflows and syncs resume). The keys are not in it; the dump is
 * signed with the first of them (platform/DumpSignature.ts), and made only with keys that open its secrets.
 *
 * Restoring, into an empty Postgres database or a new data folder (a backup's restore), takes the dumped instance's
 * keys too and judges the whole file before it opens the target: its signature must be one of theirs over all of it
 * (an unsigned, altered or foreign file is refused), and every statement one pg_dump writes for orgplane's schema
 * (platform/DumpStatements.ts: no role, no program, no code, nothing outside schema public), whatever the
 * signature. Then it checks that the target holds no table and that the dump's schema is one this version knows (an
 * older one is migrated forward when the server starts), and runs the statements in one transaction: a failure
 * leaves the target empty. Settings a Postgres older than the dumping pg_dump does not know (`SET
 * transaction_timeout`, Postgres 17) are skipped.
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
import { configuredKeys, type EncryptionKey, keyFileOf, type KeySettings } from "./Crypto.js"
import * as Database from "./Database.js"
import * as DataFolderLock from "./DataFolderLock.js"
import * as DumpSignature from "./DumpSignature.js"
import * as DumpStatements from "./DumpStatements.js"
import { keysOrigin } from "./InstanceSecrets.js"
import * as SnapshotChannel from "./SnapshotChannel.js"

/** The folder holds no embedded database, or PGlite or pg_dump failed on it. */
export class DumpFailed extends Data.TaggedError("DumpFailed")<{ readonly message: string; readonly cause?: unknown }> {}

/**
 * The dump is not one this version restores (unsigned, altered, signed with another key, not orgplane's statements,
 * of a newer schema), there is no key to check it with, or the target is not empty. Nothing was changed.
 */
export class RestoreRefused extends Data.TaggedError("RestoreRefused")<{ readonly message: string }> {}

/** The keys of the dumped instance, which sign a dump and check it, and where they were found, in words. */
export interface Keys {
  readonly keys: ReadonlyArray<EncryptionKey>
  /** `ORGPLANE_ENCRYPTION_KEYS`, or the key file's path (InstanceSecrets.keysOrigin). */
  readonly origin: string
}

/**
 * The keys `settings` name, none made (`Crypto.configuredKeys`: ORGPLANE_ENCRYPTION_KEYS, else an embedded folder's
 * key file), and where they come from: for a dump, the dumped folder's; for a restore, the target's.
 */
export const keysOf = Effect.fn("DatabaseDump.keysOf")(function*(settings: KeySettings) {
  return { keys: yield* configuredKeys(settings), origin: keysOrigin(settings) } satisfies Keys
})

export interface Dump {
  /** pg_dump's plain SQL, headed by the orgplane lines (`header`) and signed (its last line, DumpSignature.ts). */
  readonly sql: string
  /** The last migration applied to the dumped database. */
  readonly schemaVersion: number
  /** The ids of the keys the instance's secrets are encrypted with (what ORGPLANE_ENCRYPTION_KEYS must hold). */
  readonly keyIds: ReadonlyArray<string>
  /** The id of the key it is signed with: the first of the instance's. */
  readonly signedWith: string
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

/** pg_dump's SQL of an open PGlite holding an orgplane database, headed by the orgplane lines, unsigned. */
export const dumpOf = async (db: PGlite): Promise<Omit<Dump, "from" | "signedWith">> => {
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

const quoted = (ids: ReadonlyArray<string>) => ids.map((id) => `"${id}"`).join(", ")

/**
 * The embedded database of `dataDir` as SQL, signed with the first of `keys`: through the server holding the folder
 * when one of this host and user does, else from the folder itself (held meanwhile, so no server starts on it).
 * Fails with `DumpFailed` when there is no key, or the keys do not hold the key ids the database's secrets name; with
 * `ForeignChannel` when the channel's folder or socket is not this user's own, `SnapshotChannelError` when its
 * answer cannot be read (SnapshotChannel.ts); with `DataFolderInUse` when a process that serves no snapshot holds
 * the folder (another host's, say).
 */
export const dumpFolder = Effect.fn("DatabaseDump.dumpFolder")(function*(dataDir: string, keys: Keys) {
  const folder = Path.resolve(dataDir)
  const present = yield* Effect.promise(() => Fs.access(Path.join(folder, "PG_VERSION")).then(() => true, () => false))
  if (!present) {
    return yield* new DumpFailed({ message: `There is no embedded database in ${folder} (no PG_VERSION): name the server's folder with --data or ORGPLANE_DATA_DIR.` })
  }
  const [signing] = keys.keys
  if (signing === undefined) {
    return yield* new DumpFailed({
      message: `There is no encryption key to sign the dump with: ${keys.origin} holds none. Run the dump with the keys the server runs with (its key file beside the data folder, or ORGPLANE_ENCRYPTION_KEYS).`
    })
  }
  const real = yield* Effect.promise(() => Fs.realpath(folder))
  const snapshot = yield* SnapshotChannel.fetch(real)
  const dump = yield* Effect.scoped(Effect.gen(function*() {
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
  const missing = dump.keyIds.filter((id) => !keys.keys.some((key) => key.id === id))
  if (missing.length > 0) {
    return yield* new DumpFailed({
      message: `The database's secrets are encrypted with key(s) ${quoted(missing)}, which ${keys.origin} does not hold: dump with the keys the server runs with, which its restore needs too. Nothing was written.`
    })
  }
  return { ...dump, sql: DumpSignature.sign(dump.sql, signing), signedWith: signing.id } satisfies Dump
})

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
 * The dump `text`'s body (without its signature's line) and statements, once its signature is checked with `keys`
 * and each statement found one pg_dump writes for orgplane's schema: before anything is opened. `RestoreRefused`,
 * saying why, otherwise.
 */
const judged = Effect.fn("DatabaseDump.judged")(function*(target: Target, text: string, keys: Keys) {
  const orgplane = versionLine.test(text.slice(0, 4096))
  const verdict = DumpSignature.verify(text, keys.keys)
  if (verdict._tag === "Unsigned") {
    return yield* new RestoreRefused({
      message: orgplane
        ? "The dump is not signed: orgplane db dump signs every dump with the instance's encryption key (its last line), and a restore loads only a signed one. An older orgplane wrote its dumps unsigned (or this file was cut short): dump the database again with this version (orgplane db dump) and restore that dump. Nothing was changed."
        : "This is not a dump of `orgplane db dump` (its first lines name the schema version, its last line is its signature): load another pg_dump with psql. Nothing was changed."
    })
  }
  if (keys.keys.length === 0) {
    return yield* new RestoreRefused({
      message: `There is no key to check the dump's signature with (${keys.origin} holds none): restore with the encryption keys of the server that dumped it, which the restored server needs too, in ORGPLANE_ENCRYPTION_KEYS (an embedded server's key file, encryption.key, holds them)${
        "dataDir" in target ? `, or with its key file copied to ${keyFileOf(target.dataDir)} first` : ""
      }. Nothing was changed.`
    })
  }
  if (verdict._tag === "UnknownKey") {
    return yield* new RestoreRefused({
      message: `The dump is signed with key "${verdict.keyId}", which ${keys.origin} does not hold (it holds ${
        quoted(keys.keys.map((key) => key.id))
      }): restore with the keys of the server that dumped it. Nothing was changed.`
    })
  }
  if (verdict._tag === "Altered") {
    return yield* new RestoreRefused({
      message: `The dump's signature (key "${verdict.keyId}") does not match its content: the file was altered after it was written, or signed by another instance's key of that id. Restore the dump as orgplane db dump wrote it. Nothing was changed.`
    })
  }
  const parsed = DumpStatements.statements(verdict.body)
  const parse = yield* DumpStatements.loadParser
  for (const statement of parsed) {
    const why = DumpStatements.refusal(statement, parse)
    if (why !== undefined) {
      const shown = statement.length > 160 ? `${statement.slice(0, 160)}…` : statement
      return yield* new RestoreRefused({
        message: `The dump holds a statement pg_dump does not write for orgplane's schema (${why}): ${shown}. Nothing was changed.`
      })
    }
  }
  return { body: verdict.body, parsed }
})

/**
 * Loads the dump `text` into the empty database `target`, in one transaction, once its signature is checked with
 * `keys` and its statements judged (`judged`, before the target is opened); `latestMigration` is the last migration
 * this version knows. Fails with `RestoreRefused` (nothing changed) for a dump that is not orgplane's, unsigned,
 * altered, signed with a key `keys` do not hold, holding a statement pg_dump does not write for orgplane's schema, or
 * of a newer schema, or a target that holds tables; with `SqlError` when the database cannot be reached or a
 * statement fails (rolled back); for a folder, as the embedded database fails to open one (`DataFolderInUse`, …).
 */
export const restore = Effect.fn("DatabaseDump.restore")(function*(target: Target, text: string, latestMigration: number, keys: Keys) {
  const { body, parsed } = yield* judged(target, text, keys)
  const version = versionLine.exec(body.slice(0, 4096))
  if (version === null) {
    return yield* new RestoreRefused({ message: "This is not a dump of `orgplane db dump` (its first lines name the schema version): load another pg_dump with psql. Nothing was changed." })
  }
  const schemaVersion = Number(version[1])
  if (schemaVersion > latestMigration) {
    return yield* new RestoreRefused({
      message: `The dump is of schema version ${schemaVersion}, newer than this orgplane's (${latestMigration}): restore it with the orgplane that dumped it, or a newer one. Nothing was changed.`
    })
  }
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
    const keyIds = [...(keysLine.exec(body.slice(0, 4096))?.[1] ?? "").matchAll(/"([^"]*)"/gu)].map((match) => match[1] ?? "")
    return { statements: parsed.length, schemaVersion, skippedSettings, keyIds } satisfies Restored
  }))
})
