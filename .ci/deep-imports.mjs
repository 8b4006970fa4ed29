#!/usr/bin/env node
/**
 * The client and the schema import Effect one module at a time (`import * as Schema from "effect/Schema"`), never
 * from the barrels (`import { Schema } from "effect"`, `from "@effect/platform"`): through a barrel, esbuild keeps
 * whole namespaces (all of Schema.js, and fast-check with it), about 180 kB more in a browser bundle of one call.
 *
 *   node .ci/deep-imports.mjs          lists the barrel imports left (exit 1 if any)
 *   node .ci/deep-imports.mjs --fix    rewrites them as deep imports
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")
const FOLDERS = ["packages/schema/src", "packages/client/src"]
const BARREL = /^import (type )?\{([^}]*)\} from "(effect|@effect\/platform)"\n/gm

const require = createRequire(Path.join(ROOT, "packages/schema/package.json"))

/**
 * `import { type A, B as C } from "effect"` → `import type * as A from "effect/A"` and `import * as C from "effect/B"`;
 * the line as it was when a name is not a module of its own (a function of the barrel, say).
 */
const deep = (line, typeOnly, names, barrel) => {
  const imports = names.split(",").map((name) => name.trim()).filter(Boolean).map((name) => {
    const type = typeOnly !== undefined || name.startsWith("type ")
    const [module, alias] = name.replace(/^type\s+/, "").split(/\s+as\s+/)
    return { type, module, alias: alias ?? module }
  })
  const modules = (module) => {
    try {
      return require.resolve(`${barrel}/${module}`) !== undefined
    } catch {
      return false
    }
  }
  if (!imports.every(({ module }) => /^[A-Z]/.test(module) && modules(module))) return line
  return imports.map(({ alias, module, type }) => `import ${type ? "type " : ""}* as ${alias} from "${barrel}/${module}"\n`).join("")
}

const fix = process.argv.includes("--fix")
const left = []
for (const folder of FOLDERS) {
  for (const name of Fs.readdirSync(Path.join(ROOT, folder)).filter((name) => name.endsWith(".ts"))) {
    const file = Path.join(ROOT, folder, name)
    const text = Fs.readFileSync(file, "utf8")
    const fixed = text.replace(BARREL, deep)
    if (fix && fixed !== text) Fs.writeFileSync(file, fixed)
    const remaining = (fix ? fixed : text).match(BARREL) ?? []
    left.push(...remaining.map((line) => `${folder}/${name}: ${line.replace(/\s+/g, " ").trim()}`))
  }
}
if (left.length > 0) {
  process.stderr.write(
    `Barrel imports of Effect${fix ? " that --fix cannot rewrite" : " (run `node .ci/deep-imports.mjs --fix`)"}:\n${left.join("\n")}\n`
  )
  process.exit(1)
}
