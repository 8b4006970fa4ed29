/**
 * The `orgplane` executable. It first checks the Node it runs on; then help that the build rendered beforehand
 * (HelpPages.ts) and `--version` are printed from here, in the time Node takes to start; everything else loads the
 * CLI (Main.ts).
 * Run from its sources (`node --conditions=@orgplane/source --import tsx packages/cli/src/bin.ts`) there are no rendered
 * pages beside it, and every page comes from the CLI itself; `pnpm --filter @orgplane/cli build` bundles it.
 */
import * as Fs from "node:fs"
import * as Module from "node:module"
import * as HelpPages from "./HelpPages.js"
import { VERSION } from "./Version.js"

// Before anything else: the Node this CLI needs (package.json's engines, >= 22.19). An older one would answer
// `--version` and then fail at the first command with an error of the bundle's inner names.
{
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
  if (major < 22 || (major === 22 && minor < 19)) {
    process.stderr.write(
      `orgplane needs Node 22.19 or later and this is Node ${process.versions.node}: install Node 24 from https://nodejs.org (or \`nvm install 24\`), then run orgplane again.\n`
    )
    process.exit(1)
  }
}

// A reader that went away (`orgplane members list --json | head -1`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

/** Colour on a terminal, unless NO_COLOR is set; FORCE_COLOR (other than 0) turns it on anywhere. */
const colour = (stream: NodeJS.WriteStream) => {
  const force = process.env.FORCE_COLOR
  if (force !== undefined && force !== "") return force !== "0" && force !== "false"
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false
  return stream.isTTY === true
}

const isPages = (value: unknown): value is HelpPages.Pages =>
  typeof value === "object" && value !== null && "version" in value && typeof value.version === "string" &&
  "overview" in value && typeof value.overview === "string" && "groups" in value && typeof value.groups === "object" &&
  "leaves" in value && typeof value.leaves === "object"

/** The pages beside the bundle, when they were rendered for this version (run from the sources there are none). */
const pages = (): HelpPages.Pages | undefined => {
  try {
    const pages: unknown = JSON.parse(Fs.readFileSync(new URL("./help.json", import.meta.url), "utf8"))
    return isPages(pages) && pages.version === VERSION ? pages : undefined
  } catch {
    return undefined
  }
}

const args = process.argv.slice(2)
// Only words, and `--help` last, may name a page: a command with flags does not read the file.
const wordsOnly = args.every((word, index) => !word.startsWith("-") || (index === args.length - 1 && (word === "--help" || word === "-h")))
const rendered = wordsOnly ? pages() : undefined
const page = rendered === undefined ? undefined : HelpPages.find(rendered, args)

if (args[0] === "--version" || args[0] === "-V") {
  process.stdout.write(`${VERSION}\n`)
} else if (page !== undefined) {
  process.stdout.write(`${colour(process.stdout) ? page : HelpPages.plain(page)}\n`)
} else {
  // The CLI's code, compiled once and kept by V8 between runs (Node's compile cache, in the system's temporary folder
  // unless NODE_COMPILE_CACHE says where): loading it is then mostly reading the cache.
  Module.enableCompileCache()
  const { main } = await import("./Main.js")
  main({ color: { stdout: colour(process.stdout), stderr: colour(process.stderr) }, interactive: process.stderr.isTTY === true })
}
