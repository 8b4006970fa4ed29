/**
 * The migrated templates of `--data memory` and of a new data folder (platform/EmbeddedTemplate.ts,
 * Database.layerMemory, Database.layerFolder): keyed by the migrations' code, saved whole or not at all, and what a
 * start loads is migrated and holds nothing of the instance, or the folder, that made it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { migrations, migrationsUrl } from "../src/migrations/index.js"
import * as Database from "../src/platform/Database.js"
import * as EmbeddedTemplate from "../src/platform/EmbeddedTemplate.js"
import { migrate } from "../src/platform/Migrator.js"

const temporaryDir = Effect.acquireRelease(
  Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-template-test-"))),
  (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
)

describe("the embedded database's template", () => {
  it.live("is named after the migrations' code: a changed or added migration names another file", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir
      const folder = Path.join(dir, "migrations")
      yield* Effect.promise(() => Fs.mkdir(folder))
      const write = (name: string, text: string) => Effect.promise(() => Fs.writeFile(Path.join(folder, name), text))
      yield* write("index.ts", "export const migrations = []")
      yield* write("0001_first.ts", "CREATE TABLE a ()")
      const url = pathToFileURL(Path.join(folder, "index.ts")).href
      const first = yield* EmbeddedTemplate.templateFile(dir, url)
      expect(yield* EmbeddedTemplate.templateFile(dir, url)).toBe(first)
      yield* write("0001_first.ts", "CREATE TABLE b ()")
      const edited = yield* EmbeddedTemplate.templateFile(dir, url)
      yield* write("0002_second.ts", "CREATE TABLE c ()")
      const added = yield* EmbeddedTemplate.templateFile(dir, url)
      expect(new Set([first, edited, added]).size).toBe(3)
      expect(Path.dirname(first)).toBe(dir)
    }).pipe(Effect.scoped))

  it.live("is saved by a rename (no temporary file left) and replaces the templates of other migration sets", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir
      const old = Path.join(dir, "embedded-template-old.tar")
      yield* Effect.promise(() => Fs.writeFile(old, "an older migration set"))
      yield* Effect.promise(() => Fs.writeFile(Path.join(dir, "unrelated.txt"), "kept"))
      const file = Path.join(dir, "embedded-template-new.tar")
      yield* EmbeddedTemplate.save(file, new Blob(["dump"]))
      expect((yield* Effect.promise(() => Fs.readdir(dir))).sort()).toEqual(["embedded-template-new.tar", "unrelated.txt"])
      expect(yield* Effect.promise(() => Fs.readFile(file, "utf8"))).toBe("dump")
    }).pipe(Effect.scoped))

  it.live("is made by the first memory start and loaded by the next, migrated, without what the instance wrote", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir
      const template = { migrationsUrl, migrate: migrate(migrations) }
      const start = Effect.scoped(Effect.gen(function*() {
        const sql = Context.get(yield* Layer.build(Database.layerMemory(template)), SqlClient.SqlClient)
        const applied = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM orgplane_migrations`
        const before = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM instance_settings`
        // What a server writes once it runs: it must not reach the next start.
        yield* sql`INSERT INTO instance_settings (key, value) VALUES ('template-test', 'secret')`
        return { applied: applied[0]!.count, settings: before[0]!.count }
      })).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ ORGPLANE_CACHE_DIR: dir })))
      const first = yield* start
      const files = yield* Effect.promise(() => Fs.readdir(dir))
      expect(files).toHaveLength(1)
      expect(files[0]).toMatch(/^embedded-template-[0-9a-f]{20}\.tar$/)
      const second = yield* start
      expect(first).toEqual({ applied: migrations.length, settings: 0 })
      expect(second).toEqual(first)
      // Damaged: the next start makes it again.
      yield* Effect.promise(() => Fs.writeFile(Path.join(dir, files[0]!), "not a tar"))
      expect(yield* start).toEqual(first)
      expect((yield* Effect.promise(() => Fs.stat(Path.join(dir, files[0]!)))).size).toBeGreaterThan(1_000_000)
    }).pipe(Effect.scoped), { timeout: 180_000 })

  it.live("is made by the first new data folder's start and loaded by the next new folder's, migrated, without what the first folder holds; a damaged one is forgotten", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir
      const template = { migrationsUrl, migrate: migrate(migrations) }
      const folder = (name: string) => Path.join(dir, name)
      const start = (name: string) => Effect.scoped(Effect.gen(function*() {
        const sql = Context.get(yield* Layer.build(Database.layerFolder(template, folder(name))), SqlClient.SqlClient)
        const [migrated] = yield* sql<{ migrated: boolean }>`SELECT to_regclass('orgplane_migrations') IS NOT NULL AS migrated`
        if (migrated?.migrated !== true) return { applied: 0, settings: 0 }
        const applied = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM orgplane_migrations`
        const settings = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM instance_settings`
        yield* sql`INSERT INTO instance_settings (key, value) VALUES (${`written-in-${name}`}, 'secret') ON CONFLICT DO NOTHING`
        return { applied: applied[0]!.count, settings: settings[0]!.count }
      })).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ ORGPLANE_CACHE_DIR: dir })))
      const templates = Effect.map(Effect.promise(() => Fs.readdir(dir)), (names) => names.filter((name) => name.endsWith(".tar")))
      // A file of the folder's own, there before its database: never in the template.
      yield* Effect.promise(() => Fs.mkdir(folder("a")))
      yield* Effect.promise(() => Fs.writeFile(Path.join(folder("a"), "notes.txt"), "a's notes"))
      expect(yield* start("a")).toEqual({ applied: migrations.length, settings: 0 })
      const [file, ...others] = yield* templates
      expect(others).toEqual([])
      expect(file).toMatch(/^embedded-folder-template-[0-9a-f]{20}\.tar$/)
      expect(yield* start("b")).toEqual({ applied: migrations.length, settings: 0 })
      expect(yield* Effect.promise(() => Fs.readdir(folder("b")))).not.toContain("notes.txt")
      // Reopened, a folder keeps what was written in it.
      expect(yield* start("a")).toEqual({ applied: migrations.length, settings: 1 })
      // Damaged: the new folder is made by initdb (the server's migrations then run), and the template is forgotten,
      // so the next new folder makes it again (as the first did above).
      yield* Effect.promise(() => Fs.writeFile(Path.join(dir, file!), "not a tar"))
      yield* Effect.promise(() => Fs.mkdir(folder("c")))
      yield* Effect.promise(() => Fs.writeFile(Path.join(folder("c"), "notes.txt"), "c's notes"))
      expect(yield* start("c")).toEqual({ applied: 0, settings: 0 })
      expect(yield* Effect.promise(() => Fs.readFile(Path.join(folder("c"), "notes.txt"), "utf8"))).toBe("c's notes")
      expect(yield* templates).toEqual([])
    }).pipe(Effect.scoped), { timeout: 300_000 })
})
