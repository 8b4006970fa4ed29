#!/usr/bin/env node
/**
 * The five packages as tarballs, for installing them where no registry has them yet: builds @orgplane/schema, mcp,
 * server, client and cli, each only when its build is older than what it is built from (`upToDate`), `pnpm pack`s
 * each into one folder, and prints the `npm install` lines that install them together (a package alone would ask the
 * registry for its siblings, `@orgplane/schema` and, for the server, `@orgplane/mcp`). All five built take about a
 * minute and a half on 2 cores; nothing changed since the last build, a few seconds.
 *
 *   pnpm pack:local                       (into .orgplane/packages, git-ignored)
 *   pnpm pack:local --out <folder>        (another folder, made if missing)
 *   pnpm pack:local --no-build            (pack what `pnpm build` left in packages/*\/dist, as it is)
 *
 * `.ci/pack-check.mjs` packs through this script and installs the tarballs as these lines say.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const ROOT = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")
export const PACKAGES = ["schema", "mcp", "server", "client", "cli"]

/** The file `pnpm pack` names for `@orgplane/<name>` at `version`. */
export const tarballName = (name, version) => `orgplane-${name}-${version}.tgz`

/** Runs `command`, showing its errors (and its output when `shown`); exits on failure saying which step failed. */
const run = (what, command, args, cwd, shown = false) => {
  const result = spawnSync(command, args, { cwd, stdio: ["ignore", shown ? "inherit" : "pipe", "inherit"], encoding: "utf8" })
  if (result.status !== 0) {
    console.error(`pack: ${what} failed (\`${[command, ...args].join(" ")}\` ${result.error ? result.error.message : `exited with ${result.status}`})`)
    process.exit(1)
  }
}

/** Every file under `path` (none when it is missing), skipping `node_modules`. */
const filesUnder = (path) => {
  if (!Fs.existsSync(path)) return []
  if (!Fs.statSync(path).isDirectory()) return [path]
  return Fs.readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules" ? [] : filesUnder(Path.join(path, entry.name))
  )
}

const manifestOf = (name) => JSON.parse(Fs.readFileSync(Path.join(ROOT, "packages", name, "package.json"), "utf8"))

/** The file each build writes last to its `dist` (the one it starts from): its mtime is the build's. */
const builtFile = (name) => {
  const manifest = manifestOf(name)
  const entry = typeof manifest.bin === "object" ? Object.values(manifest.bin)[0] : manifest.module ?? manifest.main
  return Path.join(ROOT, "packages", name, entry)
}

/** The other packages of the five that `name` builds from (its dependencies and, bundled, its dev dependencies). */
const workspaceDependencies = (name) => {
  const manifest = manifestOf(name)
  const named = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })
  return PACKAGES.filter((other) => named.includes(`@orgplane/${other}`))
}

/**
 * Whether `name`'s build is newer than everything it is built from: its sources, scripts, manifest and build
 * settings, the lockfile, and the builds of the packages it builds from.
 */
const upToDate = (name) => {
  const built = builtFile(name)
  if (!Fs.existsSync(built)) return false
  const folder = Path.join(ROOT, "packages", name)
  const inputs = [
    ...["src", "scripts", "package.json", "tsup.config.ts", "tsconfig.json", "tsconfig.build.json"].flatMap((part) => filesUnder(Path.join(folder, part))),
    Path.join(ROOT, "pnpm-lock.yaml"),
    Path.join(ROOT, "tsconfig.base.json"),
    ...workspaceDependencies(name).map(builtFile)
  ].filter((file) => Fs.existsSync(file))
  const builtAt = Fs.statSync(built).mtimeMs
  return inputs.every((file) => Fs.statSync(file).mtimeMs < builtAt)
}

/** Builds each of the five packages whose build is not up to date, in dependency order. */
const buildStale = () => {
  for (const name of PACKAGES) {
    if (upToDate(name)) {
      console.log(`@orgplane/${name}: up to date`)
      continue
    }
    const started = performance.now()
    run(`building @orgplane/${name}`, "pnpm", ["--filter", `@orgplane/${name}`, "build"], ROOT)
    console.log(`@orgplane/${name}: built in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
}

/** Packs the five built packages into `out` and answers their version (one for all: a fixed changesets group). */
export const packAll = (out) => {
  Fs.mkdirSync(out, { recursive: true })
  // One version in the folder, so `orgplane-cli-*.tgz` names one file (README, "Installing the packages").
  for (const file of Fs.readdirSync(out)) if (/^orgplane-(schema|mcp|server|client|cli)-.*\.tgz$/.test(file)) Fs.rmSync(Path.join(out, file))
  const versions = new Set()
  for (const name of PACKAGES) {
    const folder = Path.join(ROOT, "packages", name)
    if (!Fs.existsSync(Path.join(folder, "dist"))) {
      console.error(`pack: packages/${name}/dist is missing: run \`pnpm build\` first (or leave out --no-build)`)
      process.exit(1)
    }
    versions.add(JSON.parse(Fs.readFileSync(Path.join(folder, "package.json"), "utf8")).version)
    run(`packing @orgplane/${name}`, "pnpm", ["pack", "--pack-destination", out], folder)
  }
  if (versions.size !== 1) {
    console.error(`pack: the five packages carry ${[...versions].join(", ")}: they are published with one version`)
    process.exit(1)
  }
  return [...versions][0]
}

/** The install lines for tarballs in `out`, by what the reader wants. */
export const installLines = (out, version) => {
  const file = (name) => Path.join(out, tarballName(name, version))
  return [
    "# the CLI (it bundles the server, the client and the schema):",
    `npm install -g ${file("cli")}`,
    "# the server, to embed in an app (from the app's folder):",
    `npm install ${file("schema")} ${file("mcp")} ${file("server")}`,
    "# the client SDK (from the app's folder):",
    `npm install ${file("schema")} ${file("client")} effect`
  ]
}

if (process.argv[1] && Fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: "string" }, "no-build": { type: "boolean" } } })
  const out = Path.resolve(values.out ?? Path.join(ROOT, ".orgplane", "packages"))
  if (!values["no-build"]) buildStale()
  const version = packAll(out)
  console.log(`packed @orgplane/schema, mcp, server, client and cli ${version} into ${out}\n`)
  console.log(installLines(out, version).join("\n"))
}
