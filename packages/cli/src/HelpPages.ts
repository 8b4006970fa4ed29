/**
 * The help pages that depend on nothing but the command tree, rendered once when the CLI is built and written beside
 * the bundle (`help.json`), so that `orgplane --help`, `orgplane teams` or `orgplane teams list --help` print without
 * loading the CLI itself (Effect, the schemas, every command): see bin.ts. The same text Cli.ts prints, coloured;
 * the plain text is the coloured one without its escapes. Rendered by scripts/help-pages.ts; this module imports
 * nothing, so that bin.ts stays small.
 */
export interface Pages {
  /** The version the pages were rendered for: a stale file (of another build) is ignored. */
  readonly version: string
  readonly overview: string
  /** By the words that name a group (`"connectors accounts"`): printed for those words alone or with `--help`. */
  readonly groups: Readonly<Record<string, string>>
  /** By the words that name a command: printed for them with `--help`. */
  readonly leaves: Readonly<Record<string, string>>
}

const isHelp = (word: string) => word === "--help" || word === "-h"

/** `orgplane help [command...]` is `orgplane [command...] --help` (`orgplane help` alone, the overview). */
export const helpAsFlag = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (args[0] !== "help" || args.slice(1).some((word) => word.startsWith("-") && !isHelp(word))) return args
  const words = args.slice(1).filter((word) => !isHelp(word))
  return words.length === 0 ? [] : [...words, "--help"]
}

/**
 * The page Cli.ts would print for these words, when they are only words naming a group or a command and at most
 * one `--help` after them (or `help` before them); undefined for anything else, which the CLI itself answers.
 */
export const find = (pages: Pages, given: ReadonlyArray<string>): string | undefined => {
  const args = helpAsFlag(given)
  const help = args.length > 0 && isHelp(args[args.length - 1]!)
  const words = help ? args.slice(0, -1) : args
  if (words.some((word) => word.startsWith("-"))) return undefined
  if (words.length === 0) return pages.overview
  const key = words.join(" ")
  return Object.hasOwn(pages.groups, key) ? pages.groups[key] : help && Object.hasOwn(pages.leaves, key) ? pages.leaves[key] : undefined
}

/** A page as printed on a stream without colour. */
export const plain = (page: string) => page.replace(/\u001b\[[0-9;]*m/g, "")
