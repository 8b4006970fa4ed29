/**
 * `orgplane db dump`: the embedded database as SQL, consistent even while a server runs on it. `orgplane db restore`:
 * a dump loaded into an empty Postgres, the move off the embedded database (docs/operations.md). Local commands,
 * like `serve`: they read the data folder and write the target database directly, never through the HTTP API. The
 * server package (PGlite, pg_dump) is imported only when one runs.
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const stamp = (date: Date) => date.toISOString().slice(0, 19).replaceAll("-", "").replaceAll(":", "").replace("T", "-")

const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`

/** The settings the server would start with, the flags on top. */
const settingsOf = (server: typeof import("@orgplane/server"), overrides: import("@orgplane/server").Config.Options) =>
  Effect.scoped(Effect.map(Layer.build(server.Config.layer(overrides)), (context) => Context.get(context, server.Config.ServerConfig)))

const dump = Commands.leaf("dump", {
  examples: [
    ["Back up the embedded database in ./.orgplane/data, while its server runs or not.", ["db", "dump", "--out", "backup.sql"]]
  ],
  summary: "Write the embedded database to a SQL file (pg_dump's), also while a server runs on it.",
  details: [
    "A backup, and the first step of the move to Postgres (`orgplane db restore`). With the server running, the dump is of one instant: the server of this user hands over a snapshot of its files, through a folder of this user's closed to others (a channel folder or socket another user made is refused), and the dump is made from it in this process; with the server stopped, the folder is read directly. The dump holds everything but the encryption keys, and is signed with the first of them (its last line): keep the key (the key file encryption.key beside the data folder, or ORGPLANE_ENCRYPTION_KEYS) with it, stored apart; its restore checks the signature with it. Back up a Postgres database with pg_dump."
  ],
  global: false,
  inputs: {
    data: Inputs.optional(Inputs.text("data", {
      placeholder: "<dir>",
      description: "Embedded database folder (overrides ORGPLANE_DATA_DIR; default ./.orgplane/data)."
    })),
    out: Inputs.optional(Inputs.text("out", { placeholder: "<file>", description: "File to write (default orgplane-<date>-<time>.sql here)." })),
    json: Inputs.boolean("json", { description: "Print what was written as JSON." })
  },
  run: (flags) =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(() => import("@orgplane/server"))
      const settings = yield* settingsOf(server, Inputs.ifSome("dataDir", flags.data))
      if (Option.isNone(flags.data) && settings.databaseUrl !== undefined) {
        return yield* new CommandFailed({
          error: "not_embedded",
          message: "DATABASE_URL is set: this server keeps its data in Postgres, which pg_dump backs up. To dump an embedded data folder, name it with --data."
        })
      }
      if (settings.dataDir === "memory") {
        return yield* new CommandFailed({ error: "not_embedded", message: "An in-memory database ('memory') lives only in its server's process: there is nothing to dump." })
      }
      const keys = yield* server.DatabaseDump.keysOf({ ...settings, databaseUrl: undefined })
      const result = yield* server.DatabaseDump.dumpFolder(settings.dataDir, keys).pipe(
        Effect.catchTags({
          DumpFailed: (error) => new CommandFailed({ error: "dump_failed", message: error.message }),
          SnapshotChannelError: (error) => new CommandFailed({ error: "dump_failed", message: error.message }),
          ForeignChannel: (error) => new CommandFailed({ error: "channel_not_private", message: error.message }),
          DataFolderInUse: (error) => new CommandFailed({ error: "data_folder_in_use", message: error.message }),
          DataFolderLockFailed: (error) => new CommandFailed({ error: "dump_failed", message: error.message })
        })
      )
      const file = Path.resolve(Option.getOrElse(flags.out, () => `orgplane-${stamp(new Date())}.sql`))
      yield* Effect.tryPromise({
        try: () => Fs.writeFile(file, result.sql, { mode: 0o600 }),
        catch: (cause) => new CommandFailed({ error: "dump_failed", message: `Could not write ${file}: ${cause instanceof Error ? cause.message : String(cause)}` })
      })
      const bytes = Buffer.byteLength(result.sql)
      if (flags.json) {
        return yield* Output.json({ file, bytes, schemaVersion: result.schemaVersion, keyIds: result.keyIds, signedWith: result.signedWith, from: result.from })
      }
      const folder = Path.resolve(settings.dataDir)
      yield* Console.log(
        `Wrote ${file} (${megabytes(bytes)}, schema version ${result.schemaVersion}) from the embedded database in ${folder}, ${
          result.from === "running server" ? "as the running server had it at one instant" : "a folder no server was running on"
        }.`
      )
      yield* Output.note(
        `Its secrets are encrypted with key ${result.keyIds.map((id) => `"${id}"`).join(", ")}, from ${keys.origin}, and it is signed with key "${result.signedWith}": keep the key with the dump, stored apart from it. Its restore checks the signature with it, and a server on the restored database starts with ORGPLANE_ENCRYPTION_KEYS set to it. To move to Postgres: ORGPLANE_ENCRYPTION_KEYS=<the key> orgplane db restore --database-url <url> ${file}`
      )
    })
})

const restore = Commands.leaf("restore", {
  examples: [
    ["Move to Postgres: load the dump into a new, empty database (with ORGPLANE_ENCRYPTION_KEYS set to the dumped server's keys).", ["db", "restore", "--database-url", "postgres://orgplane@db.internal:5432/orgplane", "backup.sql"]],
    ["Restore a backup into a new data folder (its key file copied to ./restored/encryption.key first).", ["db", "restore", "--data", "./restored/data", "backup.sql"]]
  ],
  summary: "Load a dump of `orgplane db dump` into an empty Postgres database (the move off the embedded database) or a new data folder.",
  details: [
    "It takes the keys the dumped server used, which its server needs too: ORGPLANE_ENCRYPTION_KEYS set to them (an embedded server's are in its key file, encryption.key, which orgplane db dump names), or for a data folder that key file copied beside it first. It loads only a dump signed with one of them, as written, and of it only the statements pg_dump writes for orgplane's schema: an unsigned dump (an older orgplane's: dump again with this one), an altered one, or one holding anything else (a role, a program, code, another schema) is refused before the target is opened. The target must hold no table: a new Postgres database (CREATE DATABASE orgplane) or a new data folder. The dump runs in one transaction, so a failure leaves it empty; a dump of an older orgplane is migrated when the server starts, one of a newer orgplane is refused. Then start the server on it with the same keys. Accounts sign in, and API keys, secrets, cursors and syncs carry on."
  ],
  global: false,
  inputs: {
    databaseUrl: Inputs.optional(Inputs.secret("database-url", {
      placeholder: "<url>",
      description: "The Postgres database to load it into (overrides DATABASE_URL)."
    })),
    data: Inputs.optional(Inputs.text("data", { placeholder: "<dir>", description: "A new embedded database folder to load it into, instead of Postgres." })),
    json: Inputs.boolean("json", { description: "Print what was restored as JSON." }),
    file: Inputs.argument("file", { placeholder: "<file.sql>", description: "The dump (`orgplane db dump`)." })
  },
  run: (flags) =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(() => import("@orgplane/server"))
      const settings = yield* settingsOf(server, Inputs.ifSome("databaseUrl", flags.databaseUrl))
      if (Option.isSome(flags.data) && Option.isSome(flags.databaseUrl)) {
        return yield* new CommandFailed({ error: "usage", message: "Restore into one database: --database-url or --data, not both." })
      }
      const target: import("@orgplane/server").DatabaseDump.Target | undefined = Option.isSome(flags.data)
        ? { dataDir: flags.data.value }
        : settings.databaseUrl === undefined
        ? undefined
        : { url: settings.databaseUrl }
      if (target === undefined) {
        return yield* new CommandFailed({
          error: "no_target",
          message: "Name the database to restore into: --database-url postgres://… (or DATABASE_URL) for Postgres, or --data <new folder> for the embedded database."
        })
      }
      const file = Path.resolve(flags.file)
      const text = yield* Effect.tryPromise({
        try: () => Fs.readFile(file, "utf8"),
        catch: (cause) => new CommandFailed({ error: "dump_unreadable", message: `Could not read ${file}: ${cause instanceof Error ? cause.message : String(cause)}` })
      })
      const latest = Math.max(...server.migrations.map((migration) => migration.id))
      const keys = yield* server.DatabaseDump.keysOf("url" in target ? settings : { ...settings, databaseUrl: undefined, dataDir: target.dataDir })
      const restored = yield* server.DatabaseDump.restore(target, text, latest, keys).pipe(
        Effect.catchTags({
          RestoreRefused: (error) => new CommandFailed({ error: "restore_refused", message: error.message }),
          DataFolderInUse: (error) => new CommandFailed({ error: "data_folder_in_use", message: error.message }),
          DataFolderLockFailed: (error) => new CommandFailed({ error: "restore_failed", message: error.message }),
          EmbeddedDatabaseError: (error) => new CommandFailed({ error: "restore_failed", message: error.message }),
          SqlError: (error) =>
            new CommandFailed(
              server.Database.connectFailure(error) === undefined
                ? { error: "restore_failed", message: `A statement of the dump failed, and nothing was restored: ${error.message}` }
                : { error: "database_unreachable", message: server.Database.connectFailure(error) ?? error.message }
            )
        })
      )
      if (flags.json) return yield* Output.json({ file, ...restored })
      yield* Console.log(
        `Restored ${file} (${restored.statements} statements, schema version ${restored.schemaVersion}).${
          restored.skippedSettings.length === 0 ? "" : ` Left out the setting(s) this Postgres does not know: ${restored.skippedSettings.join(", ")}.`
        }`
      )
      const keyIds = restored.keyIds.map((id) => `"${id}"`).join(", ")
      yield* Output.note(
        "url" in target
          ? `Start the server on it with the keys the dumped server used (${keyIds}), as this restore had them: DATABASE_URL=<url> ORGPLANE_ENCRYPTION_KEYS=<those keys> orgplane serve.`
          : `Start the server on it with the keys the dumped server used (${keyIds}), as this restore had them (${keys.origin}): orgplane serve --data ${Path.resolve(target.dataDir)}.`
      )
    })
})

export const db = Commands.group("db", "Back up the embedded database, and move it to Postgres (local, like serve).", [dump, restore])
