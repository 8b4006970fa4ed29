#!/usr/bin/env node
/**
 * Typechecks every TypeScript snippet (```ts blocks) of the READMEs, as a reader would paste it: each block is a
 * module of its own, written into the folder of the package the README describes (so its imports resolve the
 * way they do for someone who installed that package: the package itself and its dependencies), and checked with
 * the repository's compiler options. Unused imports are allowed: a snippet may just show what there is to import.
 *
 *   node .ci/readme-snippets.mjs     (pnpm typecheck:readmes)
 *
 * Errors are reported at the README's own line. Exits 1 when a snippet does not compile.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")
const OUT = ".tmp/readme-snippets"

/** Each README with the package folder its snippets are checked in (the root's and examples' use examples/). */
const readmes = [
  ["README.md", "examples"],
  ["examples/README.md", "examples"],
  ...Fs.readdirSync(Path.join(ROOT, "packages"))
    .filter((name) => Fs.existsSync(Path.join(ROOT, "packages", name, "README.md")))
    .map((name) => [`packages/${name}/README.md`, `packages/${name}`])
]

/** The ```ts blocks of a markdown text, with the README line of their first line. */
const snippets = (markdown) => {
  const lines = markdown.split("\n")
  const found = []
  for (let index = 0; index < lines.length; index++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[index].trim())) continue
    const end = lines.findIndex((line, at) => at > index && line.trim() === "```")
    if (end === -1) throw new Error(`unterminated code block at line ${index + 1}`)
    found.push({ firstLine: index + 2, code: lines.slice(index + 1, end).join("\n") + "\n" })
    index = end
  }
  return found
}

for (const [, folder] of readmes) Fs.rmSync(Path.join(ROOT, folder, OUT), { recursive: true, force: true })
const files = new Map() // snippet file (absolute) → { readme, firstLine }
for (const [readme, folder] of readmes) {
  for (const { firstLine, code } of snippets(Fs.readFileSync(Path.join(ROOT, readme), "utf8"))) {
    // packages/client/README.md, line 40 → packages/client/.tmp/readme-snippets/packages_client_README_md-40.ts
    const file = Path.join(ROOT, folder, OUT, `${readme.replace(/[/.]/g, "_")}-${firstLine}.ts`)
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, code)
    files.set(file, { readme, firstLine })
  }
}

const tsconfig = Path.join(ROOT, OUT, "tsconfig.json")
Fs.mkdirSync(Path.dirname(tsconfig), { recursive: true })
Fs.writeFileSync(
  tsconfig,
  JSON.stringify(
    {
      extends: "../../tsconfig.base.json",
      compilerOptions: {
        noEmit: true,
        declaration: false,
        declarationMap: false,
        noUnusedLocals: false,
        noUnusedParameters: false,
        moduleDetection: "force"
      },
      files: [...files.keys()].map((file) => Path.relative(Path.dirname(tsconfig), file))
    },
    null,
    2
  )
)

const tsc = createRequire(Path.join(ROOT, "package.json")).resolve("typescript/bin/tsc")
const result = spawnSync(process.execPath, [tsc, "-p", tsconfig, "--pretty", "false"], { cwd: ROOT, encoding: "utf8" })

// `packages/client/.tmp/readme-snippets/client-line-40.ts(3,7): error TS2304: ...` → `packages/client/README.md:42:7: error TS2304: ...`
const report = (result.stdout + result.stderr).split("\n").filter((line) => line.trim() !== "").map((line) => {
  const match = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line)
  const snippet = match && files.get(Path.resolve(ROOT, match[1]))
  return snippet ? `${snippet.readme}:${snippet.firstLine + Number(match[2]) - 1}:${match[3]}: ${match[4]}` : line
})

const count = files.size
if (result.status !== 0) {
  console.error(report.join("\n"))
  console.error(`\nREADME snippets: ${report.filter((line) => / error TS/.test(line)).length} error(s) in ${count} TypeScript snippet(s) of ${readmes.map(([readme]) => readme).join(", ")}`)
  process.exit(1)
}
console.log(`README snippets: ${count} TypeScript snippet(s) compile (${readmes.map(([readme]) => readme).join(", ")})`)
