/**
 * `orgplane plugins download <pluginId> --dir <folder>`: what a desktop does to install a plugin synced from a
 * repository: every active component's entry and the files it carries, written at their paths from the plugin's
 * folder, each file checked against its SHA-256.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { type ComponentFile, type ConfigObject, PluginId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const Downloaded = Schema.Struct({
  ok: Schema.Literal(true),
  dir: Schema.String,
  written: Schema.Array(Schema.Struct({ path: Schema.String, configObjectId: Schema.String, size: Schema.Number })),
  omitted: Schema.Array(Schema.Struct({ path: Schema.String, configObjectId: Schema.String, reason: Schema.String })),
  skipped: Schema.Array(Schema.Struct({ configObjectId: Schema.String, title: Schema.String, reason: Schema.String }))
})
type Downloaded = typeof Downloaded.Type

const failed = (message: string) => new CommandFailed({ error: "download_failed", message })

/** A listed path under `dir`, or a failure for one that would leave it (absolute, `..`, a drive). */
export const placeIn = (dir: string, path: string): string | undefined => {
  if (path === "" || path.includes("\\") || NodePath.isAbsolute(path) || path.split("/").some((segment) => segment === ".." || segment === "")) {
    return undefined
  }
  const root = NodePath.resolve(dir)
  const target = NodePath.resolve(root, path)
  return target.startsWith(root + NodePath.sep) ? target : undefined
}

/** The plugin's active config objects, every page. */
const objectsOf = (client: OrgplaneApiClient, pluginId: PluginId) =>
  Effect.gen(function*() {
    const all: Array<ConfigObject> = []
    let cursor: string | undefined
    do {
      const page = yield* client.configObjects.list({
        query: { pluginId, status: "active", limit: 100, ...(cursor === undefined ? {} : { cursor }) }
      })
      all.push(...page.items)
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    return all
  })

const sha256 = (bytes: Uint8Array | string) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")

export const download = Commands.leaf("download", {
  summary: "Write a plugin's components and the files they carry into a folder, as the repository has them.",
  details: [
    "For each active config object of the plugin made by a connector sync: its entry file (the latest version's source) and its stored files, at their paths from the plugin's folder; each file is checked against its SHA-256.",
    "A file several components carry (a hook carries its whole plugin folder) is written once. Files the server lists as omitted (over a size limit, missing from the repository) are reported, not written; objects made by hand have no paths and are skipped. Existing files are overwritten."
  ],
  inputs: {
    pluginId: Inputs.argument("pluginId", { schema: PluginId, description: "The plugin (plg_…)." }),
    dir: Inputs.text("dir", { placeholder: "<folder>", description: "The folder to write the plugin into (created when missing)." })
  },
  run: ({ dir, global, pluginId }) =>
    Commands.withClient({ global }, (client) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const result: { written: Array<Downloaded["written"][number]>; omitted: Array<Downloaded["omitted"][number]>; skipped: Array<Downloaded["skipped"][number]> } = {
          written: [],
          omitted: [],
          skipped: []
        }
        // A file the repository has executable (a hook's script) is written 0755, the others 0644 (less the umask), as
        // `git clone` writes them.
        const write = (path: string, configObjectId: string, bytes: Uint8Array, executable: boolean) =>
          Effect.gen(function*() {
            const target = placeIn(dir, path)
            if (target === undefined) return yield* failed(`the server listed '${path}', which would be written outside '${dir}'`)
            yield* fs.makeDirectory(NodePath.dirname(target), { recursive: true }).pipe(Effect.mapError((error) => failed(error.message)))
            yield* fs.writeFile(target, bytes).pipe(Effect.mapError((error) => failed(error.message)))
            yield* fs.chmod(target, executable ? 0o755 : 0o644).pipe(Effect.mapError((error) => failed(error.message)))
            result.written.push({ path, configObjectId, size: bytes.byteLength })
          })
        // Entries first: a component's own text is what its path holds. A file several components carry (a hook
        // carries its whole plugin folder, a skill's files among it) is written once.
        const listed: Array<{ readonly object: ConfigObject; readonly files: ReadonlyArray<ComponentFile> }> = []
        const seen = new Set<string>()
        // The plugin first: one the caller cannot read (or that is not there) is refused as `plugins get` refuses
        // it, not written as a plugin of no files.
        yield* client.plugins.get({ params: { pluginId } })
        for (const object of yield* objectsOf(client, pluginId)) {
          const version = object.latestVersion
          const list = yield* client.configObjects.listVersionFiles({ params: { configObjectId: object.id, versionId: version.id } })
          const entry = list.items.find((item) => item.kind === "entry")
          if (entry === undefined || version.rawSourceText === null) {
            result.skipped.push({ configObjectId: object.id, title: object.title, reason: "not synced from a repository: it has no path" })
            continue
          }
          if (!seen.has(entry.path)) yield* write(entry.path, object.id, new TextEncoder().encode(version.rawSourceText), entry.executable)
          seen.add(entry.path)
          listed.push({ object, files: list.items })
        }
        const omitted = new Map<string, Downloaded["omitted"][number]>()
        for (const { files, object } of listed) {
          const version = object.latestVersion
          for (const file of files) {
            if (file.kind !== "file" || seen.has(file.path)) continue
            if (file.sha256 === null) {
              if (!omitted.has(file.path)) omitted.set(file.path, { path: file.path, configObjectId: object.id, reason: file.omitted ?? "not stored" })
              continue
            }
            const bytes = yield* client.configObjects.getVersionFile({
              params: { configObjectId: object.id, versionId: version.id },
              query: { path: file.path }
            })
            if (sha256(bytes) !== file.sha256) return yield* failed(`'${file.path}' does not match its SHA-256 ${file.sha256}`)
            yield* write(file.path, object.id, bytes, file.executable)
            seen.add(file.path)
            omitted.delete(file.path)
          }
        }
        result.omitted.push(...omitted.values())
        const done: Downloaded = { ok: true, dir, ...result }
        yield* Output.emit(global, Downloaded, done, (value) =>
          [
            `Wrote ${value.written.length} files of plugin ${pluginId} into ${dir}.`,
            ...value.omitted.map((file) => `Not written: ${file.path} (${file.reason}).`),
            ...value.skipped.map((object) => `Skipped ${object.title} (${object.configObjectId}): ${object.reason}.`)
          ].join("\n"))
      }))
})
