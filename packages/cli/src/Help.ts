/**
 * The help, rendered from the command tree (Commands.ts): the overview (`orgplane --help`), a group's commands and
 * a command's arguments and flags. Plain text unless `color` (which follows the terminal, NO_COLOR and FORCE_COLOR;
 * see bin.ts). `effect/cli` renders no help here: Cli.ts turns its parse errors into our one-line messages (Cli.ts
 * `parseMessage`), so the help and the messages keep the words scripts and people already read (the saved pages,
 * packages/cli/test/fixtures/usage/).
 */
import type * as Commands from "./Commands.js"
import * as GlobalOptions from "./GlobalOptions.js"
import type * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"
import type { Style } from "./Output.js"

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

/** `orgplane teams create --help`. */
export const leaf = (style: Style, path: ReadonlyArray<string>, command: Commands.Leaf) => {
  const args = command.docs.filter((doc) => doc.kind === "arg")
  const flags = [...command.docs.filter((doc) => doc.kind === "flag"), helpFlag]
  return [
    [command.summary, ...command.details].join("\n\n"),
    section(style, "USAGE", `  ${usage(path, command)}`),
    ...(args.length > 0 ? [section(style, "ARGUMENTS", rows(args.map((doc) => [term(doc), describe(doc)])))] : []),
    section(style, "FLAGS", rows(flags.map((doc) => [term(doc), describe(doc)]))),
    ...(command.global ? [globalSection(style)] : []),
    ...command.sections().map(([heading, pairs]) => section(style, heading, rows(pairs)))
  ].join("\n\n")
}

/** `orgplane teams --help`. */
export const group = (style: Style, path: ReadonlyArray<string>, node: Commands.Group) =>
  [
    node.summary,
    section(style, "USAGE", `  ${[PROGRAM, ...path, "<command>"].join(" ")} [flags]`),
    section(style, "COMMANDS", rows(node.children.map((child) => [child.name, child.summary]))),
    `Run '${[PROGRAM, ...path].join(" ")} <command> --help' for a command's arguments and flags.`
  ].join("\n\n")

/** `orgplane --help`: every command of the tree with its arguments, then the global flags. */
export const overview = (style: Style, root: Commands.Group, leaves: Commands.Leaves, version: string) =>
  [
    `${PROGRAM} ${version}: ${root.summary}`,
    section(style, "USAGE", `  ${PROGRAM} <command> [<subcommand>] [arguments] [flags]`),
    section(
      style,
      "COMMANDS",
      rows(leaves.map(([path, command]) => [
        [...path.slice(1), ...command.docs.filter((doc) => doc.kind === "arg").map(term)].join(" "),
        command.summary
      ]))
    ),
    globalSection(style),
    [
      `Run '${PROGRAM} <command> --help' for a command's flags ('serve --help' lists the server's environment variables).`,
      "Also: --version, --completions bash|zsh|fish.",
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 not authenticated, 4 not found, 5 cannot reach the server."
    ].join("\n")
  ].join("\n\n")
