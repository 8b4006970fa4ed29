/**
 * Every flag the CLI's own words name exists: each `--flag` in a string of the CLI's sources (messages, hints, help
 * text) is a flag of the command the string names (`'orgplane auth login --new-password'`: of `auth login`), else of
 * one of its commands, a global flag, or one the root answers (`--help`, `--version`, `--completions`). A message
 * that sends people to a flag nobody defined fails here, whichever command prints it.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { make } from "../src/Cli.js"
import * as Commands from "../src/Commands.js"
import * as GlobalOptions from "../src/GlobalOptions.js"

const sources = fileURLToPath(new URL("../src", import.meta.url))

const files = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(Path.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [Path.join(dir, entry.name)] : []
  )

/** The string literals of a source file, its comments left out: "…", '…' and `…` (a template's `${…}` parts included). */
const literals = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g)]
    .map(([token]) => token)
    .filter((token) => !token.startsWith("/"))

/** `--name` mentions, not `--${name}` (built from a real flag's name) nor the `--` that ends the flags. */
const mentions = (literal: string) => [...literal.matchAll(/(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)/g)].map(([, name]) => name!)

/** Flags of other programs the CLI's words quote: Node's (`node --conditions …`), pnpm's, gh's (`gh auth login --web`). */
const foreign = new Set(["conditions", "import", "filter", "max-semi-space-size", "web"])

/** The command a string names before a flag (`orgplane auth login --new-password`): its words, longest first. */
const namedCommand = (literal: string, flag: string, commands: ReadonlyMap<string, ReadonlySet<string>>) => {
  const at = literal.indexOf(`--${flag}`)
  const before = /orgplane((?: [a-z][a-z0-9-]*)+)(?: [^'`"]*?)? $/.exec(literal.slice(0, at))
  if (before === null) return undefined
  const words = before[1]!.trim().split(" ")
  for (let length = words.length; length > 0; length--) {
    const flags = commands.get(words.slice(0, length).join(" "))
    if (flags !== undefined) return flags
  }
  return undefined
}

describe("flags named in the CLI's words", () => {
  it("are flags of a command, global flags or the root's", async () => {
    const root = await Effect.runPromise(make())
    const global = ["help", ...Object.values(GlobalOptions.flags).map((flag) => flag.doc.name)]
    const commands = new Map(
      Commands.leaves(root).map(([path, leaf]) => [
        path.slice(1).join(" "),
        new Set([...(leaf.global ? global : ["help"]), ...leaf.docs.filter((doc) => doc.kind === "flag").map((doc) => doc.name)])
      ])
    )
    const known = new Set(["version", "completions", ...global, ...[...commands.values()].flatMap((flags) => [...flags])])
    const isKnown = (literal: string, name: string) => {
      const named = namedCommand(literal, name, commands)
      return named === undefined ? known.has(name) || foreign.has(name) : named.has(name)
    }
    const unknown = files(sources).flatMap((file) =>
      literals(Fs.readFileSync(file, "utf8")).flatMap((literal) =>
        mentions(literal).filter((name) => !isKnown(literal, name)).map((name) => `${Path.relative(sources, file)}: --${name} in ${literal.slice(0, 160)}`)
      )
    )
    expect(unknown).toEqual([])
    expect(known.size).toBeGreaterThan(50)
  })
})
