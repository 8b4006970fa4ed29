/**
 * The `orgplane` command tree, and `run`: find the command the words name, parse its flags and arguments, run it,
 * and answer with an exit code. Groups and help are ours (Commands.ts, Help.ts); `effect/cli` parses each
 * command's flags and arguments (`Command.runWith` on the words after the command's name, built-ins off), and its
 * parse errors are told in the words the 0.1.0 CLI used (`parseMessage`), which scripts may match. Everything is
 * printed through `Console`, so tests run the CLI in-process. The shell completions' scripts are the ones
 * `effect/cli`'s `Completions.generate` writes (they differ from 0.1.0's).
 */
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Completions from "effect/cli/Completions"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type * as Serve from "./commands/serve.js"
import * as Commands from "./Commands.js"
import { ExitCodes, Reported, UsageError, usageReport } from "./Errors.js"
import * as GlobalOptions from "./GlobalOptions.js"
import * as Help from "./Help.js"
import * as HelpPages from "./HelpPages.js"
import type * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"
import { type ApiGroup, ApiGroups } from "./Target.js"
import { VERSION } from "./Version.js"

/**
 * The commands under the root, each loaded when its name is typed: a command loads its own module, not every other
 * command's. `serveEnvironment` is the server's list of environment variables, shown by `serve --help`.
 */
const commands: ReadonlyArray<readonly [name: string, load: (serveEnvironment: Serve.Environment | undefined) => Promise<Commands.Node>]> = [
  ["serve", (environment) => import("./commands/serve.js").then((module) => module.make(environment))],
  ["keys", () => import("./commands/keys.js").then((module) => module.keys)],
  ["db", () => import("./commands/db.js").then((module) => module.db)],
  ["auth", () => import("./commands/auth.js").then((module) => module.auth)],
  ["whoami", () => import("./commands/whoami.js").then((module) => module.whoami)],
  ["account", () => import("./commands/account.js").then((module) => module.account)],
  ["orgs", () => import("./commands/orgs.js").then((module) => module.orgs)],
  ["members", () => import("./commands/members.js").then((module) => module.members)],
  ["teams", () => import("./commands/teams.js").then((module) => module.teams)],
  ["invitations", () => import("./commands/invitations.js").then((module) => module.invitations)],
  ["api-keys", () => import("./commands/apiKeys.js").then((module) => module.apiKeys)],
  ["config", () => import("./commands/config.js").then((module) => module.config)],
  ["config-objects", () => import("./commands/configObjects.js").then((module) => module.configObjects)],
  ["plugins", () => import("./commands/plugins.js").then((module) => module.plugins)],
  ["marketplaces", () => import("./commands/marketplaces.js").then((module) => module.marketplaces)],
  ["access", () => import("./commands/access.js").then((module) => module.access)],
  ["connectors", () => import("./commands/connectors.js").then((module) => module.connectors)],
  ["policies", () => import("./commands/policies.js").then((module) => module.policies)],
  ["sso", () => import("./commands/sso.js").then((module) => module.sso)],
  ["scim", () => import("./commands/scim.js").then((module) => module.scim)],
  ["bootstrap", () => import("./commands/bootstrap.js").then((module) => module.bootstrap)],
  ["workers", () => import("./commands/workers.js").then((module) => module.workers)],
  ["audit", () => import("./commands/audit.js").then((module) => module.audit)],
  ["memory", () => import("./commands/memory.js").then((module) => module.memory)],
  ["templates", () => import("./commands/templates.js").then((module) => module.templates)],
  ["admin", () => import("./commands/admin.js").then((module) => module.admin)],
  ["telemetry", () => import("./commands/telemetry.js").then((module) => module.telemetry)],
  ["mcp", () => import("./commands/mcp.js").then((module) => module.mcp)],
  ["llm-providers", () => import("./commands/llmProviders.js").then((module) => module.llmProviders)],
  ["connections", () => import("./commands/connections.js").then((module) => module.connections)],
  ["mail", () => import("./commands/mail.js").then((module) => module.mail)],
  ["calendar", () => import("./commands/calendar.js").then((module) => module.calendar)]
]

/**
 * How `orgplane --help` lists the commands above: the few people start with, then every command under the root by
 * area, in this order. A new command is listed by adding its name to an area (one that no area names is listed under
 * "MORE COMMANDS").
 */
export const layout: Help.Areas = {
  start: [["serve"], ["auth", "signup"], ["auth", "login"], ["orgs", "create"], ["api-keys", "create"], ["whoami"]],
  areas: [
    ["YOUR ACCOUNT", ["auth", "whoami", "account", "memory"]],
    ["ORGANIZATION", ["orgs", "members", "teams", "invitations", "api-keys", "audit", "config"]],
    ["CATALOG", ["config-objects", "plugins", "marketplaces", "access", "templates", "connectors"]],
    ["IDENTITY AND POLICY", ["sso", "scim", "policies"]],
    ["AGENTS AND INTEGRATIONS", ["workers", "mcp", "llm-providers", "connections", "mail", "calendar", "telemetry"]],
    ["RUNNING THE SERVER", ["serve", "keys", "db", "admin", "bootstrap"]]
  ]
}

const SUMMARY =
  "administer an orgplane control plane: run its server, sign in, and manage organizations, their members, catalog, connectors, identity providers, policies, agents and integrations."

/** The root of the tree, every command loaded (the overview, completions). */
export const make = (options: { readonly serveEnvironment?: Serve.Environment | undefined } = {}): Effect.Effect<Commands.Group> =>
  Effect.map(
    Effect.promise(() => Promise.all(commands.map(([, load]) => load(options.serveEnvironment)))),
    (children) => Commands.group("orgplane", SUMMARY, children)
  )

export interface RunOptions {
  /** Colour in help (stdout) and error lines (stderr). Off unless given: bin.ts decides from the terminal. */
  readonly color?: { readonly stdout: boolean; readonly stderr: boolean }
  /** Whether stderr is a terminal, so progress may be drawn on it. Off unless given: bin.ts decides. */
  readonly interactive?: boolean
}

const isHelp = (word: string) => word === "--help" || word === "-h"

/** The words before `--`, where flags are flags. */
const flagsOf = (args: ReadonlyArray<string>) => {
  const end = args.indexOf("--")
  return end === -1 ? args : args.slice(0, end)
}

/** Edit distance counting a swap of neighbours as one edit (`memebrs` is one from `members`). */
const distance = (a: string, b: string) => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i === 0 ? j : j === 0 ? i : 0))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  }
  return d[a.length]![b.length]!
}

/** The closest names to a mistyped word: the only name it starts, else those within a third of its length. */
export const suggest = (word: string, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const lower = word.toLowerCase()
  const prefixed = names.filter((name) => lower.length >= 2 && name.startsWith(lower))
  if (prefixed.length === 1) return prefixed
  const scored = names.map((name) => [name, distance(lower, name)] as const)
  const best = Math.min(...scored.map(([, score]) => score))
  return best <= Math.max(1, Math.floor(Math.max(lower.length, 3) / 3)) ? scored.filter(([, score]) => score === best).map(([name]) => name) : []
}

const unknownCommand = (word: string, path: ReadonlyArray<string>, node: Commands.Group) => {
  const where = ["orgplane", ...path].join(" ")
  const close = suggest(word, node.children.map((child) => child.name))
  const hint = close.length > 0 ? ` — did you mean ${close.map((name) => `'${name}'`).join(" or ")}?` : "."
  return new UsageError({ message: `unknown command '${word}' for '${where}'${hint} Run '${where} --help' for its commands.` })
}

/** The flags a command takes: its own, and the global ones unless it takes none. */
const flagDocs = (leaf: Commands.Leaf) =>
  [...leaf.docs, ...(leaf.global ? Object.values(GlobalOptions.flags).map((flag) => flag.doc) : [])]
    .filter((doc) => doc.kind === "flag")

/**
 * The first word that looks like a flag but is none of the command's, with the closest ones. Values of flags that
 * take one are skipped, so `--query -x` is fine.
 */
const unknownFlag = (args: ReadonlyArray<string>, path: ReadonlyArray<string>, leaf: Commands.Leaf) => {
  const docs = flagDocs(leaf)
  const takesValue = new Map(docs.map((doc) => [`--${doc.name}`, doc.placeholder !== ""]))
  const words = flagsOf(args)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (!word.startsWith("-") || word === "-") continue
    const name = word.split("=")[0]!
    const known = takesValue.get(name)
    if (known === undefined) {
      const close = suggest(name.replace(/^-+/, ""), docs.map((doc) => doc.name))
      const where = ["orgplane", ...path].join(" ")
      const hint = close.length > 0 ? ` — did you mean ${close.map((flag) => `'--${flag}'`).join(" or ")}?` : "."
      return new UsageError({ message: `unknown flag '${name}' for '${where}'${hint} Run '${where} --help' for its flags.` })
    }
    if (known && !word.includes("=")) i++
  }
  return undefined
}

/** The library's view of the tree, for `--completions`. */
const completionTree = (node: Commands.Node): Command.Command.Any =>
  node._tag === "Leaf"
    ? node.command
    : Command.make(node.name).pipe(Command.withSubcommands(node.children.map(completionTree)))

const completions = (shell: string | undefined, root: Commands.Group) => {
  switch (shell) {
    case "bash":
    case "zsh":
    case "fish":
      return Effect.succeed(Completions.generate("orgplane", shell, Completions.fromCommand(completionTree(root))).split("\n"))
    default:
      return Effect.fail(new UsageError({ message: "--completions: must be one of bash, zsh, fish" }))
  }
}

/** The choices a placeholder lists (`<owner|admin|member>`), none for any other. */
const choicesOf = (doc: Inputs.Doc): ReadonlyArray<string> => /^<([^>]*\|[^>]*)>$/.exec(doc.placeholder)?.[1]?.split("|") ?? []

/**
 * A parse error of `effect/cli`, in the words the 0.1.0 CLI used for it, which scripts and people may have come to
 * read: a missing flag, argument or flag value, a word too many; our own schema checks (Inputs.ts) carry their
 * message, a value that is none of a choice's names the flag (or argument) and lists the choices. A flag given twice,
 * and an optional flag without its value, are told as a word too many (`unexpected argument '--limit'`).
 */
export const parseMessage = (error: CliError.CliError, leaf: Commands.Leaf): string => {
  switch (error._tag) {
    case "MissingOption":
      return `Expected to find option: '--${error.option}'`
    case "MissingArgument":
      return `Missing argument <${error.argument}>`
    case "UnexpectedArgument":
      return `unexpected argument '${error.arguments[0] ?? ""}'`
    case "DuplicateOption":
      return `unexpected argument '--${error.option}'`
    case "InvalidValue": {
      const doc = [...flagDocs(leaf), ...leaf.docs.filter((doc) => doc.kind === "arg")]
        .find((doc) => doc.name === error.option && doc.kind === (error.kind === "flag" ? "flag" : "arg"))
      const choices = doc === undefined ? [] : choicesOf(doc)
      if (error.kind === "flag" && /^\d+ occurrences$/.test(error.value)) return `unexpected argument '--${error.option}'`
      if (error.value !== "" || error.kind !== "flag") {
        const label = error.kind === "flag" ? `--${error.option}` : `<${error.option}>`
        return choices.length === 0 ? error.message : `${label}: must be one of ${choices.join(", ")} (not '${error.value}')`
      }
      const optional = flagDocs(leaf).some((doc) => doc.name === error.option && doc.optional)
      return optional ? `unexpected argument '--${error.option}'` : `Expected a value following option: '--${error.option}'`
    }
    case "ShowHelp":
      return error.errors.length > 0 ? parseMessage(error.errors[0]!, leaf) : "invalid arguments"
    case "ValidationError": {
      // A schema's "Expected Role" names a type, not its values: where the flag lists its choices, they are said.
      const named = /^--([\w-]+): Expected \w+$/.exec(error.message)
      const doc = named === null ? undefined : flagDocs(leaf).find((candidate) => candidate.name === named[1])
      const choices = doc === undefined ? [] : choicesOf(doc)
      return doc === undefined || choices.length < 2 || !choices.every((choice) => /^[\w-]+$/.test(choice))
        ? error.message
        : `--${doc.name}: must be one of ${choices.join(", ")}`
    }
    default:
      return error.message
  }
}

/**
 * Runs the CLI on `argv` (as in `process.argv`: runtime and script first) and succeeds with the exit code:
 * 0 ok, 1 error, 2 usage, 3 not authenticated, 4 not found, 5 connection failure.
 */
export const run = (argv: ReadonlyArray<string>, options: RunOptions = {}) => {
  const args = HelpPages.helpAsFlag(argv.slice(2))
  const json = flagsOf(args).includes("--json")
  const out: Output.Style = { color: options.color?.stdout ?? false }
  const err: Output.Style = { color: options.color?.stderr ?? false }
  const usage = (error: UsageError) =>
    Effect.as(
      json ? Console.error(JSON.stringify(usageReport(error).body)) : Console.error(`${Output.red(err, "error:")} ${error.message}`),
      ExitCodes.usage
    )

  return Effect.gen(function*() {
    if (args.length === 0 || (args.length === 1 && isHelp(args[0]!))) {
      yield* Console.log(Help.overview(out, yield* make(), VERSION, layout))
      return ExitCodes.ok
    }
    if (args[0] === "--version" || args[0] === "-V") {
      yield* Console.log(VERSION)
      return ExitCodes.ok
    }
    if (args[0] === "--completions") {
      const lines = yield* completions(args[1], yield* make())
      yield* Console.log(lines.join("\n"))
      return ExitCodes.ok
    }

    // Only `serve` pays for loading the server, which owns the list of its environment variables.
    const serveEnvironment = args[0] === "serve" && flagsOf(args).some(isHelp)
      ? (yield* Effect.promise(() => import("@orgplane/server"))).environment
      : undefined
    // The words name a group, then a command in it, and so on down to a command. Only the first word's command is
    // loaded, unless the words stop at the root.
    const first = commands.find(([name]) => name === args[0])
    let node: Commands.Node = first === undefined || args[0]!.startsWith("-")
      ? yield* make()
      : Commands.group("orgplane", SUMMARY, [yield* Effect.promise(() => first[1](serveEnvironment))])
    const path: Array<string> = []
    const api: Array<ApiGroup> = []
    while (node._tag === "Group") {
      api.push(...node.api)
      const word: string | undefined = args[path.length]
      if (word === undefined || isHelp(word)) {
        yield* Console.log(Help.group(out, path, node))
        return ExitCodes.ok
      }
      if (word.startsWith("-")) {
        const where = ["orgplane", ...path].join(" ")
        return yield* new UsageError({
          message: `'${word}' before a command: flags go after it ('${where} <command> ${word}'). Run '${where} --help' for its commands.`
        })
      }
      const child: Commands.Node | undefined = node.children.find((candidate) => candidate.name === word)
      if (child === undefined) return yield* unknownCommand(word, path, node)
      path.push(word)
      node = child
    }
    const leaf: Commands.Leaf = node
    const rest = args.slice(path.length)
    if (flagsOf(rest).some(isHelp)) {
      yield* Console.log(Help.leaf(out, path, leaf))
      return ExitCodes.ok
    }

    const unknown = unknownFlag(rest, path, leaf)
    if (unknown !== undefined) return yield* unknown

    const where = ["orgplane", ...path].join(" ")
    yield* leaf.execute(rest).pipe(
      Effect.catchIf(
        (error) => CliError.isCliError(error),
        (error) => Effect.fail(new UsageError({ message: `${parseMessage(error, leaf)} (see '${where} --help')` }))
      ),
      Effect.provideService(Commands.Invocation, { path, json, color: err.color, interactive: options.interactive ?? false }),
      Effect.provideService(ApiGroups, api)
    )
    return ExitCodes.ok
  }).pipe(
    Effect.catch((error: unknown) => {
      if (error instanceof UsageError) return usage(error)
      if (error instanceof Reported) return Effect.succeed(error.code)
      return Effect.as(Console.error(`error: ${String(error)}`), ExitCodes.error)
    }),
    Effect.catchDefect((defect) => Effect.as(Console.error(`error: unexpected failure: ${String(defect)}`), ExitCodes.error))
  )
}
