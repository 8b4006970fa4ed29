/**
 * The migrated templates of the embedded database. `--data memory` would run initdb and every migration at each
 * start (seconds), and a new data folder at its first: instead the first such start dumps a database right after the
 * migrations into a file of the cache folder, and later starts load that dump (`loadDataDir`). Two kinds: `memory`
 * (memoryInitdb's small WAL segments, without the template databases) and `folder` (initdb's defaults, made in
 * memory so that nothing of a folder's own, its lock or key file, is ever in it).
 *
 * The file is named after a fingerprint of the migrations' code and PGlite's version, so a changed migration set
 * (or engine) makes a new template and never loads an old one. It holds the schema only: it is dumped before the
 * server writes anything of its own (the cursor key, the first account), so no two instances share a secret.
 * Written under a temporary name and renamed, so servers starting together never read half a file.
 */
import type { PGlite } from "@electric-sql/pglite"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * Where templates are kept: ORGPLANE_CACHE_DIR, else the OS's cache folder for orgplane (`$XDG_CACHE_HOME/orgplane`
 * or `~/.cache/orgplane` on Linux, `~/Library/Caches/orgplane` on macOS, `%LOCALAPPDATA%\orgplane\cache` on Windows).
 */
export const cacheDir: Config.Config<string> = Config.all({
  configured: Config.option(Config.String("ORGPLANE_CACHE_DIR")),
  xdg: Config.option(Config.String("XDG_CACHE_HOME")),
  localAppData: Config.option(Config.String("LOCALAPPDATA"))
}).pipe(Config.map(({ configured, localAppData, xdg }) => {
  if (Option.isSome(configured) && configured.value.trim() !== "") return Path.resolve(configured.value)
  const home = Os.homedir()
  if (process.platform === "darwin") return Path.join(home, "Library", "Caches", "orgplane")
  if (process.platform === "win32") return Path.join(Option.getOrElse(localAppData, () => Path.join(home, "AppData", "Local")), "orgplane", "cache")
  return Path.join(Option.getOrElse(Option.filter(xdg, Path.isAbsolute), () => Path.join(home, ".cache")), "orgplane")
}))

/** Which start a template is for: `--data memory`, or a new data folder. */
export type Kind = "memory" | "folder"

const PREFIX: Record<Kind, string> = { memory: "embedded-template-", folder: "embedded-folder-template-" }

/** The installed PGlite's version, from its package.json (not in its exports: found beside its entry point). */
const pgliteVersion = async () => {
  let dir = Path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"))
  for (let i = 0; i < 5; i++, dir = Path.dirname(dir)) {
    const text = await Fs.readFile(Path.join(dir, "package.json"), "utf8").catch(() => undefined)
    if (text === undefined) continue
    const manifest: unknown = JSON.parse(text)
    if (typeof manifest !== "object" || manifest === null || Reflect.get(manifest, "name") !== "@electric-sql/pglite") continue
    const version: unknown = Reflect.get(manifest, "version")
    return typeof version === "string" ? version : "unknown"
  }
  return "unknown"
}

/**
 * The migrations' code: every file of their folder when run from source (or from tsc's output), else the bundle
 * that holds them (any change to it makes a new template: more often than needed, never less).
 */
const migrationsFingerprint = async (hash: ReturnType<typeof createHash>, migrationsUrl: string) => {
  const file = fileURLToPath(migrationsUrl)
  const dir = Path.dirname(file)
  if (Path.basename(dir) !== "migrations") return void hash.update(await Fs.readFile(file))
  for (const name of (await Fs.readdir(dir)).sort()) {
    if (!/\.[cm]?[jt]s$/.test(name)) continue
    hash.update(name)
    hash.update(await Fs.readFile(Path.join(dir, name)))
  }
}

/**
 * The template's file for this migration set (`migrationsUrl`: the `import.meta.url` of the module listing the
 * migrations), PGlite version and kind.
 */
export const templateFile = (cacheDir: string, migrationsUrl: string, kind: Kind = "memory") =>
  Effect.promise(async () => {
    const hash = createHash("sha256")
    // The layout of a template (memoryInitdb, dumpOf): a change to it makes a new one.
    hash.update(`pglite ${await pgliteVersion()}\nlayout 2\n`)
    await migrationsFingerprint(hash, migrationsUrl)
    return Path.join(cacheDir, `${PREFIX[kind]}${hash.digest("hex").slice(0, 20)}.tar`)
  })

/**
 * A migrated database in memory as its template: without the databases initdb makes beside `postgres` (template0
 * and template1, half of what a fresh one holds: nothing creates a database in it), checkpointed, dumped.
 */
export const dumpOf = async (db: PGlite) => {
  const { rows } = await db.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname IN ('template0', 'template1')")
  for (const { datname } of rows) {
    await db.exec(`ALTER DATABASE ${datname} IS_TEMPLATE false`)
    await db.exec(`DROP DATABASE ${datname}`)
  }
  await db.exec("CHECKPOINT")
  return db.dumpDataDir("none")
}

/** A migrated database as a new data folder's template: all initdb made, checkpointed, dumped. */
export const folderDumpOf = async (db: PGlite) => {
  await db.exec("CHECKPOINT")
  return db.dumpDataDir("none")
}

/** The template, if one was saved for this migration set. */
export const read = (file: string): Effect.Effect<Option.Option<Blob>> =>
  Effect.promise(() => Fs.readFile(file).then((bytes) => Option.some(new Blob([bytes])), () => Option.none()))

/** Forgets a template that could not be loaded (a damaged file), so the next start makes it again. */
export const remove = (file: string) => Effect.promise(() => Fs.rm(file, { force: true }))

/**
 * Saves a dump as the template: written beside it under a temporary name, then renamed over it (atomic, so a
 * concurrent start reads the whole of one file or none). Other templates of its kind in the folder, of other
 * migration sets, are removed. A folder that cannot be written only costs the next start its speed: logged, not failed.
 */
export const save = (file: string, dump: Blob) =>
  Effect.tryPromise(async () => {
    const dir = Path.dirname(file)
    await Fs.mkdir(dir, { recursive: true })
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
    try {
      await Fs.writeFile(temporary, Buffer.from(await dump.arrayBuffer()))
      await Fs.rename(temporary, file)
    } finally {
      await Fs.rm(temporary, { force: true })
    }
    const base = Path.basename(file)
    const prefix = Object.values(PREFIX).find((prefix) => base.startsWith(prefix))
    for (const name of await Fs.readdir(dir)) {
      if (prefix !== undefined && name.startsWith(prefix) && name.endsWith(".tar") && Path.join(dir, name) !== file) {
        await Fs.rm(Path.join(dir, name), { force: true })
      }
    }
  }).pipe(
    Effect.catch((error) => Effect.logWarning(`Could not save the embedded database's template in ${Path.dirname(file)}: ${error.cause}`))
  )
