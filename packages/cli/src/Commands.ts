/**
 * How a command is declared. A command is a `leaf` (inputs and a body) inside `group`s; most are an `endpoint`
 * (connect, call the API, print the result as text or JSON) or a paged `list`, a few lines each. The tree is the
 * one source of the dispatcher, the help and the overview (see Cli.ts, Help.ts).
 *
 * Each leaf is an `effect/cli` command of its own inputs (and the global flags), run by `Command.runWith` on the
 * words after its name with none of the library's built-in flags and nothing presented by it: groups, help and the
 * error lines are ours (Cli.ts, Help.ts).
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import type { Page } from "@orgplane/schema"
import * as CliConfig from "effect/cli/CliConfig"
import type * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import { type Reported, reported } from "./Errors.js"
import * as GlobalOptions from "./GlobalOptions.js"
import type * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"
import * as Paging from "./Paging.js"
import * as Target from "./Target.js"
import { VERSION } from "./Version.js"

/** The command being run: its words (`["teams", "list"]`) and whether errors are JSON. */
export class Invocation extends Context.Service<Invocation, {
  readonly path: ReadonlyArray<string>
  readonly json: boolean
  /** Whether error lines (stderr) are coloured. */
  readonly color: boolean
  /** Whether stderr is a terminal, where progress (a spinner) may be drawn and redrawn. */
  readonly interactive: boolean
}>()("@orgplane/cli/Invocation") {}

/** Every leaf with its words: `[["teams", "list"], leaf]`. */
export type Leaves = ReadonlyArray<readonly [ReadonlyArray<string>, Leaf]>

/** An example of a command's help: what it does, and the words after `orgplane` (`["teams", "create", "Platform"]`). */
export type Example = readonly [description: string, words: ReadonlyArray<string>]

/** More help after the flags, for example `serve`'s environment variables: `[heading, [term, text][]]`. */
export type Section = readonly [heading: string, rows: ReadonlyArray<readonly [string, string]>]

/** What a command's body may use: the invocation, and the platform (files, paths, the terminal for prompts). */
export type Requirements = Invocation | Command.Environment

export interface Leaf {
  readonly _tag: "Leaf"
  readonly name: string
  /** One line, for lists of commands. */
  readonly summary: string
  /** Paragraphs of the command's own help, after the summary. */
  readonly details: ReadonlyArray<string>
  /** Its own arguments and flags, in order. */
  readonly docs: ReadonlyArray<Inputs.Doc>
  /** Whether the global flags (`--url`, `--json`, ...) apply. */
  readonly global: boolean
  readonly sections: () => ReadonlyArray<Section>
  /** Its own examples, shown before the one made from its usage (Examples.ts). */
  readonly examples: ReadonlyArray<Example>
  /** The library's command, for completions. */
  readonly command: Command.Command.Any
  /**
   * Parses the words after the command's name and runs its body: a parse error fails with the library's
   * `ShowHelp` (its `errors` say what was wrong), a failure of the body is reported and fails with `Reported`.
   */
  readonly execute: (args: ReadonlyArray<string>) => Effect.Effect<void, CliError.CliError | Reported, Requirements>
}

export interface Group {
  readonly _tag: "Group"
  readonly name: string
  readonly summary: string
  readonly children: ReadonlyArray<Node>
  /** The API groups its commands call: their clients are built from these alone (see Target.ApiGroups). */
  readonly api: ReadonlyArray<Target.ApiGroup>
}

export type Node = Leaf | Group

export type Body<Ins extends Record<string, Inputs.Input<unknown>>> = Inputs.Values<Ins> & { readonly global: GlobalOptions.GlobalOptions }

interface Described<Ins extends Record<string, Inputs.Input<unknown>>> {
  readonly summary: string
  readonly details?: ReadonlyArray<string>
  readonly inputs: Ins
  /** Examples beyond the one its usage gives (Examples.ts), for a command whose common use needs flags. */
  readonly examples?: ReadonlyArray<Example>
}

/**
 * The values the library parsed, as the body's input: the command's config is built from `inputs` (and the global
 * flags) key by key, so its values are `Body<Ins>`, which TypeScript cannot follow through the library's inference.
 */
const bodyOf = <Ins extends Record<string, Inputs.Input<unknown>>>(values: unknown): Body<Ins> => values as Body<Ins>

/** None of the library's built-in flags (`--help`, `--version`, `--completions`, ...): Cli.ts answers those. */
const noBuiltIns = CliConfig.make({ builtIns: [] })

/** The library presents nothing (no help page, no error lines): Cli.ts prints its own. */
const silent: CliOutput.Presenter = { present: () => Effect.void }

/**
 * A command: its inputs (plus the global flags unless `global: false`) and its body. A failure of the body is
 * reported here (a message, or JSON with `--json`) with its exit code.
 */
export const leaf = <const Ins extends Record<string, Inputs.Input<unknown>>, E, R extends Requirements>(
  name: string,
  spec: Described<Ins> & {
    readonly global?: boolean
    readonly sections?: () => ReadonlyArray<Section>
    readonly run: (input: Body<Ins>) => Effect.Effect<void, E, R>
  }
): Leaf => {
  const global = spec.global ?? true
  const inputs = Object.entries(spec.inputs)
  // A flag of the command's own named as a global one (`audit streams update --url`) is both: the library takes one
  // flag of a name, so the global one reads the command's value.
  const own = new Set(inputs.flatMap(([, input]) => input.doc.kind === "flag" ? [input.doc.name] : []))
  const shared = Object.entries(GlobalOptions.flags).flatMap(([globalKey, flag]) =>
    inputs.flatMap(([key, input]) => input.doc.kind === "flag" && input.doc.name === flag.doc.name ? [[globalKey, key] as const] : [])
  )
  // Flags are parsed before arguments, so a missing flag is told before a missing argument (the saved usage errors,
  // packages/cli/test/fixtures/usage/, hold the first problem told).
  const config: Command.Command.Config = {
    ...Object.fromEntries(inputs.filter(([, input]) => input.doc.kind === "flag").map(([key, input]) => [key, input.parser])),
    ...(global
      ? {
        global: Object.fromEntries(
          Object.entries(GlobalOptions.flags).filter(([, flag]) => !own.has(flag.doc.name)).map(([key, flag]) => [key, flag.parser])
        )
      }
      : {}),
    ...Object.fromEntries(inputs.filter(([, input]) => input.doc.kind === "arg").map(([key, input]) => [key, input.parser]))
  }
  const withShared = (values: object): object => {
    if (!global || shared.length === 0) return values
    const all = Object.fromEntries(Object.entries(values))
    const globals: unknown = all.global
    return {
      ...all,
      global: {
        ...(typeof globals === "object" && globals !== null ? globals : {}),
        ...Object.fromEntries(shared.map(([globalKey, key]) => [globalKey, all[key]]))
      }
    }
  }
  const command = Command.make(name, config, (values) =>
    Effect.gen(function*() {
      const invocation = yield* Invocation
      return yield* spec.run(bodyOf<Ins>(withShared(values))).pipe(reported(invocation))
    }))
  const run = Command.runWith(command, { version: VERSION, renderErrors: false })
  return {
    _tag: "Leaf",
    name,
    summary: spec.summary,
    details: spec.details ?? [],
    docs: Object.values(spec.inputs).map((input) => input.doc),
    global,
    sections: spec.sections ?? (() => []),
    examples: spec.examples ?? [],
    command,
    execute: (args) =>
      run(args).pipe(
        Effect.provideService(CliConfig.CliConfig, noBuiltIns),
        Effect.provideService(CliOutput.Presenter, silent)
      )
  }
}

export const group = (
  name: string,
  summary: string,
  children: ReadonlyArray<Node>,
  api: ReadonlyArray<Target.ApiGroup> = []
): Group => ({
  _tag: "Group",
  name,
  summary,
  children,
  api
})

/**
 * The body of a command that makes several calls or prints more than one result: the authenticated client for the
 * resolved target (`endpoint` and `list` cover the common cases).
 */
export const withClient = <A, E, R>(
  input: { readonly global: GlobalOptions.GlobalOptions },
  body: (client: OrgplaneApiClient) => Effect.Effect<A, E, R>
) => Target.run(input.global, (target) => Effect.flatMap(Target.connect(target, { authenticated: true }), body))

/**
 * A command that makes one API call: connect (with the resolved credential, required unless `anonymous`), `call`,
 * then print the result: `output`'s JSON with `--json`, else `human`.
 */
export const endpoint = <const Ins extends Record<string, Inputs.Input<unknown>>, A, I, E, R extends Requirements>(
  name: string,
  spec: Described<Ins> & {
    readonly anonymous?: boolean
    readonly call: (client: OrgplaneApiClient, input: Body<Ins>, target: Target.Target) => Effect.Effect<A, E, R>
    readonly output: Schema.Codec<A, I>
    readonly human: (result: A, input: Body<Ins>, target: Target.Target) => string
  }
) =>
  leaf(name, {
    ...spec,
    run: (input) =>
      Target.run(input.global, (target) =>
        Effect.gen(function*() {
          const client = yield* Target.connect(target, { authenticated: spec.anonymous !== true })
          const result = yield* spec.call(client, input, target)
          yield* Output.emit(input.global, spec.output, result, (value) => spec.human(value, input, target))
        }))
  })

/**
 * A paged list: the inputs are its filters, to which `--limit`, `--cursor` and `--all` are added. Prints a table of
 * `columns` (or the page's JSON), then on stderr the command that fetches the next page.
 */
export const list = <const Ins extends Record<string, Inputs.Input<unknown>>, A, I, E, R extends Requirements>(
  name: string,
  spec: Described<Ins> & {
    /** Plural, for "No teams." and "More teams: ...". */
    readonly noun: string
    /** The paging flags, when the list's page size or cursor differ from the API's shared ones. */
    readonly paging?: typeof Paging.inputs
    readonly call: (client: OrgplaneApiClient, input: Body<Ins>, page: Paging.PageParams) => Effect.Effect<Page<A>, E, R>
    readonly output: Schema.Codec<Page<A>, I>
    readonly columns: ReadonlyArray<readonly [header: string, cell: (item: A) => string]>
  }
) =>
  leaf(name, {
    ...spec,
    inputs: { ...spec.inputs, ...(spec.paging ?? Paging.inputs) },
    run: (input) =>
      Target.run(input.global, (target) =>
        Effect.gen(function*() {
          const client = yield* Target.connect(target, { authenticated: true })
          const result = yield* Paging.fetch(input, (page) => spec.call(client, input, page))
          yield* Output.emit(input.global, spec.output, result, ({ items }) =>
            items.length === 0
              ? `No ${spec.noun}.`
              : Output.table(spec.columns.map(([header]) => header), items.map((item) => spec.columns.map(([, cell]) => cell(item)))))
          const invocation = yield* Invocation
          yield* Paging.hint(input.global, spec.noun, [...invocation.path, ...repeat(spec.inputs, input)].join(" "), result)
        }))
  })

/** The filters as they were given, to repeat them in the next page's command (secrets are never filters). */
const repeat = (inputs: Record<string, Inputs.Input<unknown>>, values: Record<string, unknown>) =>
  Object.entries(inputs).flatMap(([key, { doc }]) => {
    const value = values[key]
    const shown = Option.isOption(value) ? Option.getOrUndefined(value) : value
    const words = (Array.isArray(shown) ? shown : [shown]).filter((item) => item !== undefined && item !== false)
    if (doc.kind === "arg") return words.map((word) => Paging.quote(String(word)))
    return words.flatMap((word) => word === true ? [`--${doc.name}`] : [`--${doc.name}`, Paging.quote(String(word))])
  })

/** Every leaf with its words, depth first: `[["teams", "list"], leaf]`. */
export const leaves = (node: Node, path: ReadonlyArray<string> = []): Leaves =>
  node._tag === "Leaf" ? [[[...path, node.name], node]] : node.children.flatMap((child) => leaves(child, [...path, node.name]))
