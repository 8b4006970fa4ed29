/**
 * The size of a browser/edge bundle of one client call: each case below bundled with esbuild (`--bundle --minify
 * --platform=browser --format=esm`), minified and gzipped bytes, and with `--why` the packages and modules that weigh
 * most. Prints figures; asserts nothing. `pnpm bundle:client [--source] [--why]`.
 */
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const usage = `Usage: pnpm bundle:client [--source] [--why]

Bundles one call of the client (createClient or createClientFor, make or makeFor, each with members.list()) for a
browser with esbuild and prints the minified and gzipped sizes.

  (default)  the built packages, as published: run \`pnpm build\` first.
  --source   the workspace's sources (the @orgplane/source condition): no build needed; close to the built figures
             when the schema's ESM build keeps one file per module, as it does.
  --why      also the heaviest packages and modules of each bundle (from esbuild's metafile).
`

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  process.stdout.write(usage)
  process.exit(0)
}

const source = process.argv.includes("--source")
const why = process.argv.includes("--why")
const root = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")

/** The part of esbuild's API used here (its options are the CLI's flags). */
interface Esbuild {
  readonly version: string
  readonly build: (options: Record<string, unknown>) => Promise<{
    readonly outputFiles: ReadonlyArray<{ readonly contents: Uint8Array }>
    readonly metafile: { readonly outputs: Record<string, { readonly inputs: Record<string, { readonly bytesInOutput: number }> }> }
  }>
}

// esbuild comes with tsup, a dev dependency of the workspace.
const esbuild: Esbuild = createRequire(createRequire(import.meta.url).resolve("tsup"))("esbuild")

const cases: ReadonlyArray<readonly [name: string, code: string]> = [
  [
    "Promise: createClient + members.list()",
    `import { createClient } from "@orgplane/client"
const client = createClient({ baseUrl: "https://orgplane.example.com", apiKey: "opk_example" })
console.log(await client.members.list())`
  ],
  [
    "Promise: createClientFor([MembersApi]) + members.list()",
    `import { createClientFor } from "@orgplane/client"
import { MembersApi } from "@orgplane/schema"
const client = createClientFor([MembersApi], { baseUrl: "https://orgplane.example.com", apiKey: "opk_example" })
console.log(await client.members.list())`
  ],
  [
    "Effect: make + members.list()",
    `import { make } from "@orgplane/client"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
Effect.runPromise(Effect.flatMap(make({ baseUrl: "https://orgplane.example.com" }), (client) => client.members.list()).pipe(
  Effect.provide(FetchHttpClient.layer)
)).then(console.log)`
  ],
  [
    "Effect: makeFor([MembersApi]) + members.list()",
    `import { makeFor } from "@orgplane/client"
import { MembersApi } from "@orgplane/schema"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
Effect.runPromise(Effect.flatMap(makeFor([MembersApi], { baseUrl: "https://orgplane.example.com" }), (client) => client.members.list()).pipe(
  Effect.provide(FetchHttpClient.layer)
)).then(console.log)`
  ]
]

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`

/** `node_modules/.pnpm/effect@3.22.4/node_modules/effect/dist/esm/Schema.js` → `effect/Schema.js`; workspace files as they are. */
const moduleName = (input: string) =>
  input.replace(/^.*node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?/, "").replace(/\/(?:dist|src)\/(?:esm\/)?/, "/")

const packageName = (module: string) =>
  module.startsWith("packages/") ? `@orgplane/${module.split("/")[1]}`
  : module.startsWith("@") ? module.split("/").slice(0, 2).join("/")
  : module.split("/")[0]!

const top = (sizes: Map<string, number>, count: number) =>
  [...sizes].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, bytes]) => `${kb(bytes).padStart(9)}  ${name}`)

process.stdout.write(`Client bundles (esbuild ${esbuild.version}, browser, ESM, minified; ${source ? "workspace sources" : "built packages"})\n\n`)
for (const [name, contents] of cases) {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: Path.join(root, "packages/client"), sourcefile: "entry.ts", loader: "ts" },
    bundle: true,
    minify: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "error",
    conditions: source ? ["@orgplane/source"] : []
  })
  const output = result.outputFiles[0]!.contents
  process.stdout.write(`${name.padEnd(58)} ${kb(output.byteLength).padStart(9)}  (gzip ${kb(gzipSync(output).byteLength)})\n`)
  if (!why) continue
  const modules = new Map<string, number>()
  const packages = new Map<string, number>()
  for (const out of Object.values(result.metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
      const module = moduleName(Path.relative(root, Path.resolve(input)))
      modules.set(module, (modules.get(module) ?? 0) + bytesInOutput)
      packages.set(packageName(module), (packages.get(packageName(module)) ?? 0) + bytesInOutput)
    }
  }
  process.stdout.write(`  packages:\n${top(packages, 8).map((line) => `  ${line}\n`).join("")}`)
  process.stdout.write(`  modules:\n${top(modules, 12).map((line) => `  ${line}\n`).join("")}\n`)
}
