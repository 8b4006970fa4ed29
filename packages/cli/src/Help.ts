/**
 * The help, rendered from the command tree (Commands.ts): the overview (`orgplane --help`: the first commands, then
 * every command by area), a group's commands and a command's arguments and flags, each page ending with examples
 * (Examples.ts). Plain text unless `color` (which follows the terminal, NO_COLOR and FORCE_COLOR;
 * see bin.ts). `effect/cli` renders no help here: Cli.ts turns its parse errors into our one-line messages (Cli.ts
 * `parseMessage`), so the help and the messages keep the words scripts and people already read (the saved pages,
 * packages/cli/test/fixtures/usage/).
 */
import type * as Commands from "./Commands.js"
import * as Examples from "./Examples.js"
import * as GlobalOptions from "./GlobalOptions.js"
import type * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"
import type { Style } from "./Output.js"
import { quote } from "./Paging.js"

const { bold } = Output

const PROGRAM = "orgplane"

const helpFlag: Inputs.Doc = {
  kind: "flag",
  name: "help",
  placeholder: "",
  description: "Show this help.",
  optional: true,
  repeated: false
}

/** Rows of `term  text`, terms padded to the widest. */
const rows = (pairs: ReadonlyArray<readonly [string, string]>) => {
  const width = Math.max(0, ...pairs.map(([term]) => term.length))
  return pairs.map(([term, text]) => `  ${term.padEnd(width)}  ${text}`.trimEnd()).join("\n")
}

const section = (style: Style, heading: string, body: string) => `${bold(style, heading)}\n${body}`

/** `--member <id>`, `<teamId>`, `<memberId>...`. */
const term = (doc: Inputs.Doc) => {
  const base = doc.kind === "arg" ? doc.placeholder : `${doc.name === "help" ? "-h, " : ""}--${doc.name}${doc.placeholder === "" ? "" : ` ${doc.placeholder}`}`
  return doc.repeated ? `${base}...` : base
}

const describe = (doc: Inputs.Doc) => {
  const notes = [doc.repeated && doc.kind === "flag" ? "Repeatable." : "", doc.optional && doc.kind === "arg" ? "Optional." : ""]
  return [doc.description, ...notes].filter((text) => text !== "").join(" ")
}

/** The words a command is typed with: its arguments, its required flags, then `[flags]`. */
export const usage = (path: ReadonlyArray<string>, leaf: Commands.Leaf) => {
  const args = leaf.docs.filter((doc) => doc.kind === "arg").map(term)
  const required = leaf.docs.filter((doc) => doc.kind === "flag" && !doc.optional).map(term)
  const hasOptional = leaf.global || leaf.docs.some((doc) => doc.kind === "flag" && doc.optional)
  return [PROGRAM, ...path, ...args, ...required, ...(hasOptional ? ["[flags]"] : [])].join(" ")
}

/** The global flags, as a help section. */
const globalSection = (style: Style) =>
  section(style, "GLOBAL FLAGS", rows(Object.values(GlobalOptions.flags).map(({ doc }) => [term(doc), describe(doc)])))

/** An example as the help shows it: what it does, then the command line. */
const example = ([description, words]: Commands.Example) => `  # ${description}\n  $ ${[PROGRAM, ...words.map(quote)].join(" ")}`

const examplesSection = (style: Style, examples: ReadonlyArray<Commands.Example>) =>
  section(style, "EXAMPLES", examples.map(example).join("\n"))

/** `orgplane teams create --help` (and `orgplane help teams create`): it ends with its examples. */
export const leaf = (style: Style, path: ReadonlyArray<string>, command: Commands.Leaf) => {
  const args = command.docs.filter((doc) => doc.kind === "arg")
  const flags = [...command.docs.filter((doc) => doc.kind === "flag"), helpFlag]
  return [
    [command.summary, ...command.details].join("\n\n"),
    section(style, "USAGE", `  ${usage(path, command)}`),
    ...(args.length > 0 ? [section(style, "ARGUMENTS", rows(args.map((doc) => [term(doc), describe(doc)])))] : []),
    section(style, "FLAGS", rows(flags.map((doc) => [term(doc), describe(doc)]))),
    ...(command.global ? [globalSection(style)] : []),
    ...command.sections().map(([heading, pairs]) => section(style, heading, rows(pairs))),
    examplesSection(style, Examples.of(path, command))
  ].join("\n\n")
}

/** The first example of each of a group's commands (of its subgroups' too), up to `count`. */
const groupExamples = (path: ReadonlyArray<string>, node: Commands.Group, count: number): ReadonlyArray<Commands.Example> =>
  node.children.flatMap((child) =>
    child._tag === "Leaf" ? Examples.of([...path, child.name], child).slice(0, 1) : groupExamples([...path, child.name], child, 1)
  ).slice(0, count)

/** `orgplane teams --help` (and `orgplane help teams`, `orgplane teams`). */
export const group = (style: Style, path: ReadonlyArray<string>, node: Commands.Group) =>
  [
    node.summary,
    section(style, "USAGE", `  ${[PROGRAM, ...path, "<command>"].join(" ")} [flags]`),
    section(style, "COMMANDS", rows(node.children.map((child) => [child.name, child.summary]))),
    examplesSection(style, groupExamples(path, node, 3)),
    `Run '${[PROGRAM, "help", ...path].join(" ")} <command>' (or '${[PROGRAM, ...path].join(" ")} <command> --help') for a command's arguments, flags and examples.`
  ].join("\n\n")

/**
 * The overview's areas: a heading and the commands under the root it lists (Cli.ts's `areas`), and the commands
 * people start with, by their words.
 */
export interface Areas {
  readonly start: ReadonlyArray<ReadonlyArray<string>>
  readonly areas: ReadonlyArray<readonly [heading: string, names: ReadonlyArray<string>]>
}

/** The node the words name under `root`, if any. */
const find = (root: Commands.Group, words: ReadonlyArray<string>): Commands.Node | undefined => {
  let node: Commands.Node = root
  for (const word of words) {
    if (node._tag !== "Group") return undefined
    const child: Commands.Node | undefined = node.children.find((candidate) => candidate.name === word)
    if (child === undefined) return undefined
    node = child
  }
  return node
}

/**
 * `orgplane --help` (and `orgplane help`): the commands people start with, then every command under the root by
 * area (a command no area names is under "MORE COMMANDS"), the global flags, and examples of the first ones.
 */
export const overview = (style: Style, root: Commands.Group, version: string, layout: Areas) => {
  const listed = new Set(layout.areas.flatMap(([, names]) => names))
  const byArea = [
    ...layout.areas.map(([heading, names]) => [heading, names.flatMap((name) => root.children.filter((child) => child.name === name))] as const),
    ["MORE COMMANDS", root.children.filter((child) => !listed.has(child.name))] as const
  ].filter(([, children]) => children.length > 0)
  const start = layout.start.flatMap((words) => {
    const node = find(root, words)
    return node === undefined ? [] : [[words, node] as const]
  })
  return [
    `${PROGRAM} ${version}: ${root.summary}`,
    section(style, "USAGE", `  ${PROGRAM} <command> [<subcommand>] [arguments] [flags]`),
    section(style, "START HERE", rows(start.map(([words, node]) => [words.join(" "), node.summary]))),
    ...byArea.map(([heading, children]) => section(style, heading, rows(children.map((child) => [child.name, child.summary])))),
    globalSection(style),
    examplesSection(
      style,
      start.flatMap(([words, node]) => node._tag === "Leaf" ? Examples.of(words, node).slice(0, 1) : [])
    ),
    section(
      style,
      "LEARN MORE",
      [
        `  Run '${PROGRAM} help <command>' (or '${PROGRAM} <command> --help') for its subcommands, flags and examples;`,
        `  '${PROGRAM} help serve' lists the server's environment variables. Also: --version, --completions bash|zsh|fish.`,
        "  Exit codes: 0 ok, 1 error, 2 usage error, 3 not authenticated, 4 not found, 5 cannot reach the server."
      ].join("\n")
    )
  ].join("\n\n")
}
