/**
 * The migrated template of `--data memory`: a fresh in-memory embedded database would run initdb and every
 * migration at each start (seconds); instead the first start dumps its database right after the migrations into a
 * file of the cache folder, and later starts load that dump (`loadDataDir`).
 *
 * The file is named after a fingerprint of the migrations' code and PGlite's version, so a changed migration set
 * (or engine) makes a new template and never loads an old one. It holds the schema only: it is dumped before the
 * server writes anything of its own (the cursor key, the first account), so no two instances share a secret.
 * Written under a temporary name and renamed, so servers starting together never read half a file.
 */
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

const PREFIX = "embedded-template-"

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
 * migrations) and PGlite version.
 */
export const templateFile = (cacheDir: string, migrationsUrl: string) =>
  Effect.promise(async () => {
    const hash = createHash("sha256")
    hash.update(`pglite ${await pgliteVersion()}\n`)
    await migrationsFingerprint(hash, migrationsUrl)
    return Path.join(cacheDir, `${PREFIX}${hash.digest("hex").slice(0, 20)}.tar`)
  })

/** The template, if one was saved for this migration set. */
export const read = (file: string): Effect.Effect<Option.Option<Blob>> =>
  Effect.promise(() => Fs.readFile(file).then((bytes) => Option.some(new Blob([bytes])), () => Option.none()))

/** Forgets a template that could not be loaded (a damaged file), so the next start makes it again. */
export const remove = (file: string) => Effect.promise(() => Fs.rm(file, { force: true }))

/**
 * Saves a dump as the template: written beside it under a temporary name, then renamed over it (atomic, so a
 * concurrent start reads the whole of one file or none). Other templates in the folder, of other migration sets,
 * are removed. A folder that cannot be written only costs the next start its speed: logged, not failed.
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
    for (const name of await Fs.readdir(dir)) {
      if (name.startsWith(PREFIX) && name.endsWith(".tar") && Path.join(dir, name) !== file) {
        await Fs.rm(Path.join(dir, name), { force: true })
      }
    }
  }).pipe(
    Effect.catch((error) => Effect.logWarning(`Could not save the embedded database's template in ${Path.dirname(file)}: ${error.cause}`))
  )
