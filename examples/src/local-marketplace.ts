/**
 * Import a marketplace you have locally or privately: a git repository on your disk is served on loopback by the
 * test kit's GitHub-compatible server (the same REST API orgplane's connector reads from GitHub or GitHub Enterprise),
 * then, with the Promise client, connected, discovered, applied and synced; last, every plugin's components and the
 * files they carry are downloaded into a folder, as a desktop does, and compared with the repository.
 *
 *   pnpm --filter @orgplane/examples local-marketplace [<git repository folder>] [--port 9870] [--out <folder>]
 *
 * Without a folder it serves `examples/marketplace/` committed into a throwaway repository. Without ORGPLANE_URL it
 * starts a throwaway orgplane server whose ORGPLANE_CODEHOST_API_URL is the loopback server. Against your own
 * server, start it with ORGPLANE_CODEHOST_API_URL=http://127.0.0.1:<port> and pass the same `--port`.
 */
import { createClient, paginate } from "@orgplane/client"
import { FakeGitHub, GitRepo } from "@orgplane/testkit"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { startLocalServer } from "./local-server.js"
import { demoOrganization } from "./publish-skill.js"

export interface ImportOptions {
  readonly baseUrl: string
  readonly apiKey: string
  /** The code-host API the server reads (the loopback server's URL). */
  readonly github: FakeGitHub.FakeGitHub
  readonly repository: GitRepo.GitRepo
  /** Where the plugins are downloaded. */
  readonly out: string
  readonly log?: (line: string) => void
}

export interface ImportReport {
  readonly repository: string
  readonly revision: string
  readonly sync: { readonly created: number; readonly skipped: number; readonly warnings: ReadonlyArray<string> }
  readonly plugins: ReadonlyArray<{ readonly name: string; readonly components: number; readonly files: number }>
  /** Files written under `out`, each identical to the repository's file at the same place in its plugin. */
  readonly downloaded: number
  readonly identical: boolean
}

/** Git's id of a blob with these bytes. */
const gitBlobId = (bytes: Uint8Array) =>
  NodeCrypto.createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The files of a folder, recursively, by relative path (the demo marketplace becomes a commit). */
const readFolder = async (root: string): Promise<Record<string, Uint8Array | GitRepo.Executable>> => {
  const files: Record<string, Uint8Array | GitRepo.Executable> = {}
  for (const entry of await Fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = Path.relative(root, Path.join(entry.parentPath, entry.name)).split(Path.sep).join("/")
    const bytes = await Fs.readFile(Path.join(root, path))
    // Committed with its mode: the hook and skill scripts are executable.
    files[path] = ((await Fs.stat(Path.join(root, path))).mode & 0o111) !== 0 ? { executable: bytes } : bytes
  }
  return files
}

/** `examples/marketplace/` committed into a throwaway repository (remove it when done). */
export const demoRepository = async () =>
  GitRepo.withFiles(await readFolder(Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..", "marketplace")), "the demo marketplace")

export const importLocalMarketplace = async (options: ImportOptions): Promise<ImportReport> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const fullName = `local/${Path.basename(options.repository.dir).replace(/[^A-Za-z0-9._-]/g, "-") || "marketplace"}`
  options.github.addRepository(fullName, options.repository)
  const githubToken = `ghp_local${NodeCrypto.randomBytes(12).toString("hex")}`
  options.github.addToken(githubToken, [fullName])
  log(`Serving ${options.repository.dir} as ${fullName} at ${options.github.url}`)

  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  try {
    const { item: account } = await client.connectorAccounts.create({ payload: { kind: "token", token: githubToken, accountLogin: "local" } })
    const { item: instance } = await client.connectorInstances.create({
      payload: { connectorAccountId: account.id, name: fullName, remoteId: fullName }
    })
    const { item: target } = await client.connectorInstances.createTarget({
      path: { connectorInstanceId: instance.id },
      payload: { externalTargetRef: "main" }
    })
    const { item: discovery } = await client.connectorInstances.discover({ path: { connectorInstanceId: instance.id } })
    const keys = discovery.discoveredPlugins.filter((plugin) => plugin.supported).map((plugin) => plugin.key)
    log(`Discovered ${discovery.discoveredPlugins.length} plugins (${discovery.classification}); importing ${keys.length}`)
    const { item: applied } = await client.connectorInstances.applyDiscovery({
      path: { connectorInstanceId: instance.id },
      payload: { keys, connectorTargetId: target.id }
    })
    let event = applied.syncEvent
    for (let i = 0; i < 600 && (event.status === "queued" || event.status === "running"); i++) {
      await sleep(100)
      event = (await client.connectorSyncEvents.get({ path: { connectorSyncEventId: event.id } })).item
    }
    if (event.status !== "completed") throw new Error(`the sync ended ${event.status}: ${event.lastError ?? ""}`)
    const summary = event.summary!
    log(`Synced ${applied.sourceRevisionRef.slice(0, 12)}: ${summary.created} created, ${summary.skipped} skipped`)

    // What a desktop does: every component's entry and files, at their paths in the plugin's folder.
    const plugins: Array<ImportReport["plugins"][number]> = []
    let downloaded = 0
    let identical = true
    for (const { pluginId } of applied.plugins) {
      const { item: plugin } = await client.plugins.get({ path: { pluginId } })
      const folder = Path.join(options.out, plugin.name.replace(/[^A-Za-z0-9._ -]/g, "-"))
      const root = discovery.discoveredPlugins.find((candidate) => applied.plugins.some((p) => p.pluginId === pluginId && p.key === candidate.key))?.rootPath ?? ""
      let components = 0
      let files = 0
      // A file several components carry (hooks carry their whole plugin folder) is written once.
      const written = new Set<string>()
      for await (const object of paginate(client.configObjects.list, { urlParams: { pluginId } })) {
        components++
        const version = object.latestVersion
        const { items } = await client.configObjects.listVersionFiles({ path: { configObjectId: object.id, versionId: version.id } })
        for (const file of items) {
          if (written.has(file.path)) continue
          const bytes = file.kind === "entry"
            ? new TextEncoder().encode(version.rawSourceText ?? "")
            : file.sha256 === null
            ? undefined
            : await client.configObjects.getVersionFile({ path: { configObjectId: object.id, versionId: version.id }, urlParams: { path: file.path } })
          if (bytes === undefined) {
            log(`  not stored: ${file.path} (${file.omitted})`)
            continue
          }
          const target = Path.join(folder, ...file.path.split("/"))
          await Fs.mkdir(Path.dirname(target), { recursive: true })
          await Fs.writeFile(target, bytes)
          // Executable where the repository has it so (a hook's script), as a checkout writes it.
          await Fs.chmod(target, file.executable ? 0o755 : 0o644)
          written.add(file.path)
          files++
          downloaded++
          // The repository's blob at the same place in the plugin, compared by git's own object id (binary-safe), and
          // its mode.
          const repositoryPath = root === "" ? file.path : `${root}/${file.path}`
          const blob = (await options.repository.git("rev-parse", `${applied.sourceRevisionRef}:${repositoryPath}`)).trim()
          const mode = (await options.repository.git("ls-tree", applied.sourceRevisionRef, "--", repositoryPath)).split(" ")[0]
          if (blob !== gitBlobId(bytes) || mode !== (file.executable ? "100755" : "100644")) identical = false
        }
      }
      plugins.push({ name: plugin.name, components, files })
      log(`Downloaded plugin ${plugin.name}: ${components} components, ${files} files into ${folder}`)
    }
    return {
      repository: fullName,
      revision: applied.sourceRevisionRef,
      sync: { created: summary.created, skipped: summary.skipped, warnings: summary.warnings },
      plugins,
      downloaded,
      identical
    }
  } finally {
    await client.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const flag = (name: string) => {
    const at = args.indexOf(`--${name}`)
    if (at < 0) return undefined
    const [value] = args.splice(at, 2).slice(1)
    return value
  }
  const port = flag("port")
  const outFlag = flag("out")
  const [folder] = args
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "" && ((process.env.ORGPLANE_API_KEY ?? "") === "" || port === undefined)) {
    console.error("with ORGPLANE_URL: ORGPLANE_API_KEY and --port (the port of the server's ORGPLANE_CODEHOST_API_URL) are needed")
    process.exit(2)
  }
  const cwd = process.env.INIT_CWD ?? process.cwd()
  const repository = folder === undefined
    ? await demoRepository()
    : await GitRepo.open(Path.resolve(cwd, folder))
  const github = await FakeGitHub.start(port === undefined ? {} : { port: Number(port) })
  const local = given === "" ? await startLocalServer({ codehostApiUrl: github.url }) : undefined
  const out = outFlag === undefined ? await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-plugins-")) : Path.resolve(cwd, outFlag)
  try {
    const baseUrl = local?.url ?? given
    const apiKey = local === undefined ? process.env.ORGPLANE_API_KEY! : (await demoOrganization(local.url)).apiKey
    if (local !== undefined) console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} reading GitHub at ${github.url}.`)
    const report = await importLocalMarketplace({ baseUrl, apiKey, github, repository, out })
    console.log(JSON.stringify(report, null, 2))
    if (!report.identical || report.sync.skipped > 0) process.exitCode = 1
  } finally {
    await local?.close()
    await github.close()
    if (folder === undefined) await repository.remove()
  }
}
