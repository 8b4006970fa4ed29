/**
 * How a command is declared. A command is a `leaf` (inputs and a body) inside `group`s; most are an `endpoint`
 * (connect, call the API, print the result as text or JSON) or a paged `list`, a few lines each. The tree is the
 * one source of the dispatcher, the help and the overview (see Cli.ts, Help.ts).
 */
import { type CliApp, Command } from "@effect/cli"
import type { HttpApiGroup } from "@effect/platform"
import type { OrgplaneApiClient } from "@orgplane/client"
import type { Page } from "@orgplane/schema"
import { Context, Effect, Option, Record as Records, type Schema } from "effect"
import { reported } from "./Errors.js"
import * as GlobalOptions from "./GlobalOptions.js"
import type * as Inputs from "./Inputs.js"
import * as Output from "./Output.js"
import * as Paging from "./Paging.js"
import * as Target from "./Target.js"

/** The command being run: its words (`["teams", "list"]`) and whether errors are JSON. */
export class Invocation extends Context.Tag("@orgplane/cli/Invocation")<Invocation, {
  readonly path: ReadonlyArray<string>
  readonly json: boolean
  /** Whether error lines (stderr) are coloured. */
  readonly color: boolean
  /** Whether stderr is a terminal, where progress (a spinner) may be drawn and redrawn. */
  readonly interactive: boolean
}>() {}

/** Every leaf with its words: `[["teams", "list"], leaf]`. */
export type Leaves = ReadonlyArray<readonly [ReadonlyArray<string>, Leaf]>

/** More help after the flags, for example `serve`'s environment variables: `[heading, [term, text][]]`. */
export type Section = readonly [heading: string, rows: ReadonlyArray<readonly [string, string]>]

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
  readonly command: Command.Command<string, Requirements, never, any>
}

export interface Group {
  readonly _tag: "Group"
  readonly name: string
  readonly summary: string
  readonly children: ReadonlyArray<Node>
  /** The API groups its commands call: their clients are built from these alone (see Target.ApiGroups). */
  readonly api: ReadonlyArray<HttpApiGroup.HttpApiGroup.Any>
}

export type Node = Leaf | Group

/** What a command's body may use: the invocation, and the platform (files, paths, the terminal for prompts). */
export type Requirements = Invocation | CliApp.CliApp.Environment

type Body<Ins extends Record<string, Inputs.Input<any>>> = Inputs.Values<Ins> & { readonly global: GlobalOptions.GlobalOptions }

interface Described<Ins extends Record<string, Inputs.Input<any>>> {
  readonly summary: string
  readonly details?: ReadonlyArray<string>
  readonly inputs: Ins
}

/**
 * A command: its inputs (plus the global flags unless `global: false`) and its body. A failure of the body is
 * reported here (a message, or JSON with `--json`) with its exit code.
 */
export const leaf = <const Ins extends Record<string, Inputs.Input<any>>, E, R extends Requirements>(
  name: string,
  spec: Described<Ins> & {
    readonly global?: boolean
    readonly sections?: () => ReadonlyArray<Section>
    readonly run: (input: Body<Ins>) => Effect.Effect<void, E, R>
  }
): Leaf => {
  const global = spec.global ?? true
  const parsers: Record<string, unknown> = {
    ...Records.map(spec.inputs, (input) => input.parser),
    ...(global ? { global: Records.map(GlobalOptions.flags, (flag) => flag.parser) } : {})
  }
  const command = Command.make(name, parsers as any, (values: any) =>
    Effect.flatMap(Invocation, (invocation) => spec.run(values as Body<Ins>).pipe(reported(invocation))))
  return {
    _tag: "Leaf",
    name,
    summary: spec.summary,
    details: spec.details ?? [],
    docs: Object.values(spec.inputs).map((input) => input.doc),
    global,
    sections: spec.sections ?? (() => []),
    command: command as Leaf["command"]
  }
}

export const group = (
  name: string,
  summary: string,
  children: ReadonlyArray<Node>,
  api: ReadonlyArray<HttpApiGroup.HttpApiGroup.Any> = []
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
export const endpoint = <const Ins extends Record<string, Inputs.Input<any>>, A, I, E, R extends Requirements>(
  name: string,
  spec: Described<Ins> & {
    readonly anonymous?: boolean
    readonly call: (client: OrgplaneApiClient, input: Body<Ins>, target: Target.Target) => Effect.Effect<A, E, R>
    readonly output: Schema.Schema<A, I>
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
export const list = <const Ins extends Record<string, Inputs.Input<any>>, A, I, E, R extends Requirements>(
  name: string,
  spec: Described<Ins> & {
    /** Plural, for "No teams." and "More teams: ...". */
    readonly noun: string
    /** The paging flags, when the list's page size or cursor differ from the API's shared ones. */
    readonly paging?: typeof Paging.inputs
    readonly call: (client: OrgplaneApiClient, input: Body<Ins>, page: Paging.PageParams) => Effect.Effect<Page<A>, E, R>
    readonly output: Schema.Schema<Page<A>, I>
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
const repeat = (inputs: Record<string, Inputs.Input<any>>, values: Record<string, unknown>) =>
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
