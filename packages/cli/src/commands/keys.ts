/**
 * `orgplane keys generate`: prints a new encryption key, for ORGPLANE_ENCRYPTION_KEYS (nothing else: the server is
 * not loaded). `orgplane keys rotate`: re-encrypts every stored secret with the newest encryption key. A local command, like
 * `serve`: it opens the database the server uses (DATABASE_URL, or the embedded one) with the server's own
 * configuration (ORGPLANE_ENCRYPTION_KEYS), and never goes through the HTTP API, so that the keys stay on the
 * server's side and no API credential can trigger it. The server is imported only when the command runs.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as LocalDatabase from "../LocalDatabase.js"
import * as Output from "../Output.js"

const BatchSize = Schema.NumberFromString.pipe(Schema.decodeTo(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000 }, { message: "must be an integer from 1 to 10000" }))
))

const rotate = Commands.leaf("rotate", {
  summary: "Re-encrypt every stored secret with the newest encryption key (the first of ORGPLANE_ENCRYPTION_KEYS).",
  details: [
    "Rotating a key: put the new key first in ORGPLANE_ENCRYPTION_KEYS, keeping the old ones after it (kid:base64key,...), restart the servers so that they write with it, run this command with the same settings, then drop the old keys. It runs against the server's database directly (DATABASE_URL, or the embedded database in --data, which no running server may have open), in batches of --batch-size secrets, one transaction each: interrupted, it keeps what it did, and running it again does the rest. A secret that does not decrypt with any configured key is left as it is and counted as unreadable (the log names its place)."
  ],
  global: false,
  inputs: {
    ...LocalDatabase.inputs,
    batchSize: Inputs.optional(Inputs.text("batch-size", {
      placeholder: "<n>",
      description: "Secrets per transaction (default 500).",
      schema: BatchSize
    })),
    json: Inputs.boolean("json", { description: "Print the report as JSON." })
  },
  run: (flags) =>
    Effect.gen(function*() {
      const report = yield* LocalDatabase.use(flags, (server) =>
        server.StoredSecrets.rotateConfigured({
          latestMigration: Math.max(...server.migrations.map((migration) => migration.id)),
          batchSize: flags.batchSize._tag === "Some" ? flags.batchSize.value : undefined
        })
      ).pipe(
        Effect.catchTags({
          DatabaseNotMigrated: (error) => new CommandFailed({ error: "database_not_migrated", message: error.message }),
          NoEncryptionKey: (error) => new CommandFailed({ error: "no_encryption_key", message: error.message }),
          DataFolderInUse: (error) => new CommandFailed({ error: "data_folder_in_use", message: error.message })
        })
      )
      if (flags.json) return yield* Output.json(report)
      yield* Console.log(Output.table(
        ["TABLE", "COLUMN", "REWRITTEN", "UNREADABLE", "CHANGED MEANWHILE"],
        report.columns.map((column) => [
          column.table,
          column.column,
          String(column.rewritten),
          String(column.unreadable),
          String(column.changedMeanwhile)
        ])
      ))
      yield* Output.note(
        `Re-encrypted ${report.rewritten} stored secret(s) with key "${report.keyId}"; ${report.unreadable} unreadable left as they are.`
      )
    })
})

/** A key id: what ciphertexts name their key by (`v2:<id>:…`). */
const KeyId = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{1,32}$/u, { message: "must be 1 to 32 letters, digits, `-` or `_`" }))

const generate = Commands.leaf("generate", {
  summary: "Print a new encryption key (kid:base64), for ORGPLANE_ENCRYPTION_KEYS.",
  details: [
    "The server encrypts every secret it keeps (third-party credentials, its cursor key) with the first key of ORGPLANE_ENCRYPTION_KEYS and reads them with any of them, and does not start without the key its database was written with. With DATABASE_URL it must be set; the embedded database generates its own beside the data folder (encryption.key). Keep the key safe and apart from the database's backups: without it the stored secrets are lost. To change keys, put the new one first (new:…,old:…), restart the servers, then run `orgplane keys rotate`."
  ],
  global: false,
  inputs: {
    id: Inputs.optional(Inputs.text("id", {
      placeholder: "<kid>",
      description: "The key's id (default k<yyyymmdd>): 1 to 32 letters, digits, - or _.",
      schema: KeyId
    }))
  },
  run: (flags) =>
    Effect.gen(function*() {
      const id = flags.id._tag === "Some" ? flags.id.value : `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}`
      yield* Console.log(`${id}:${NodeCrypto.randomBytes(32).toString("base64")}`)
    })
})

export const keys = Commands.group("keys", "Manage the keys that encrypt stored secrets (local, like serve).", [generate, rotate])
