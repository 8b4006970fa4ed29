#!/usr/bin/env node
/**
 * The packages import Effect one module at a time (`import * as Schema from "effect/Schema"`,
 * `import * as HttpRouter from "effect/http/HttpRouter"`), never from a barrel (`import { Schema } from "effect"`,
 * `import { HttpRouter } from "effect/http"`, `import { Model } from "effect/schema"`,
 * `import { NodeHttpServer } from "@effect/platform-node"`): a name taken from a barrel is a namespace object to
 * esbuild, which then keeps every export of its module. In a browser bundle of the client that was about 180 kB
 * more for one call; in the CLI's bundle (the server, the MCP server and the client with it) the server's barrel
 * imports kept all of Schema.js, Effect.js, Option.js, the crypto modules and more: 185 kB minified, 66 kB of the
 * tarball.
 *
 *   node .ci/deep-imports.mjs          lists the barrel imports left (exit 1 if any)
 *   node .ci/deep-imports.mjs --fix    rewrites them as deep imports
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")
const PACKAGES = ["schema", "client", "mcp", "server", "cli"]
/** `effect`, its folders' indexes (`effect/http`, `effect/schema`, ...: lower case, where modules are capitalised), `@effect/*`. */
const BARREL = /^import (type )?\{([^}]*)\} from "(effect(?:\/[a-z][a-z-]*)?|@effect\/[a-z][a-z-]*)"\n/gm

/** Every `.ts` file under `folder`. */
const sources = (folder) =>
  Fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(Path.join(folder, entry.name))
      : entry.name.endsWith(".ts") ? [Path.join(folder, entry.name)] : []
  )

/**
 * `import { type A, B as C } from "effect"` → `import type * as A from "effect/A"` and `import * as C from "effect/B"`;
 * the line as it was when a name is not a module of its own (a function of the barrel, say). Modules are looked up
 * from the importing package (`require`), whose dependencies they are.
 */
const deep = (require) => (line, typeOnly, names, barrel) => {
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
for (const name of PACKAGES) {
  const folder = Path.join(ROOT, "packages", name)
  const rewrite = deep(createRequire(Path.join(folder, "package.json")))
  for (const file of sources(Path.join(folder, "src"))) {
    const text = Fs.readFileSync(file, "utf8")
    const fixed = text.replace(BARREL, rewrite)
    if (fix && fixed !== text) Fs.writeFileSync(file, fixed)
    const remaining = (fix ? fixed : text).match(BARREL) ?? []
    left.push(...remaining.map((line) => `${Path.relative(ROOT, file)}: ${line.replace(/\s+/g, " ").trim()}`))
  }
}
if (left.length > 0) {
  process.stderr.write(
    `Barrel imports of Effect${fix ? " that --fix cannot rewrite" : " (run `node .ci/deep-imports.mjs --fix`)"}:\n${left.join("\n")}\n`
  )
  process.exit(1)
}
