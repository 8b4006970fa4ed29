/**
 * `orgplane config-objects create | list | get | versions | version | add-version | archive | restore | delete`:
 * the organization's versioned configuration items (skills, agents, commands, MCP servers, hooks, ...). Sources are
 * read from files (`--file`, `-` for stdin) and sent as written; the server parses them by type. Access is per
 * object (see `orgplane access`).
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import {
  type ConfigObject,
  ConfigObjectDetail,
  ConfigObjectId,
  ConfigObjectListQuery,
  ConfigObjectPage,
  ConfigObjectResponse,
  ConfigObjectsApi,
  ConfigObjectStatus,
  ConfigObjectVersionDetail,
  ConfigObjectVersionId,
  ConfigObjectVersionPage,
  CreateVersionRequest,
  MAX_PLUGIN_IDS,
  MAX_SOURCE_BYTES,
  ObjectTypes,
  ParserMode,
  PluginId,
  RelativePath,
  SourceMode,
  VersionInput
} from "@orgplane/schema"
import * as CliError from "effect/cli/CliError"
import * as Flags from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { ifOn, plural, statusOf } from "./catalog.js"

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first problem an issue reports, in the words the API's schema gives it. */
const firstMessage = (issue: SchemaIssue.Issue) => formatIssue(issue).issues[0]?.message

const configObjectId = Inputs.argument("configObjectId", { schema: ConfigObjectId, description: "The config object (cob_…)." })

/**
 * One text member of a version's content, checked by the API's own `VersionInput` (whose member schemas are not
 * exported): the source text (not empty, at most 1 MiB of UTF-8) or the schema version.
 */
const contentMember = (key: "rawSourceText" | "schemaVersion") =>
  Schema.String.check(Schema.makeFilter((value: string) => {
    const checked = Schema.decodeUnknownResult(VersionInput)({ rawSourceText: "source", [key]: value })
    return Result.isSuccess(checked) || (firstMessage(checked.failure.issue) ?? "is not valid")
  }))

const SourceText = contentMember("rawSourceText")

/** A source read from `--file`: its text and, for a file, its base name (the object's `relativePath`). */
export interface Source {
  readonly text: string
  readonly fileName: Option.Option<string>
}

const invalidFile = (message: string) => new CliError.ValidationError({ message: `--file: ${message}` })

const readStdin = Effect.mapError(Files.readStdin, invalidFile)

const readFile = (path: string) =>
  Effect.gen(function*() {
    const paths = yield* Path.Path
    const text = yield* Effect.mapError(Files.readFile(path, MAX_SOURCE_BYTES, `1 MiB (${MAX_SOURCE_BYTES} bytes), the API's limit`), invalidFile)
    return { text, fileName: Option.some(paths.basename(path)) }
  })

/** `--file <path>`: the source, read while parsing and checked with the API's rules, so a bad file is a usage error. */
const sourceFile = (description: string): Inputs.Flag<Source> => ({
  parser: Flags.String("file").pipe(
    Flags.mapEffect((path) =>
      Effect.gen(function*() {
        const source: Source = path === "-" ? { text: yield* readStdin, fileName: Option.none() } : yield* readFile(path)
        yield* Effect.mapError(Schema.decodeUnknownEffect(SourceText)(source.text), (error) =>
          invalidFile(firstMessage(error.issue) ?? "is not a valid source"))
        return source
      })
    )
  ),
  doc: { kind: "flag", name: "file", placeholder: "<path>", description, optional: false, repeated: false }
})

const parser = Inputs.optional(Inputs.choice("parser", ParserMode.literals, {
  description: "How the server reads the source (default: the type's own; see the API's ParserMode)."
}))

const schemaVersion = Inputs.optional(Inputs.text("schema-version", {
  placeholder: "<version>",
  description: "Version of the content's own format (default 1).",
  schema: contentMember("schemaVersion")
}))

/** Each plugin id once (the API takes a repeated id once, but its limit counts every entry), then the API's limit. */
const DistinctPluginIds = Schema.Array(PluginId).pipe(Schema.decodeTo(Schema.toType(Schema.Array(PluginId).check(Schema.isMaxLength(MAX_PLUGIN_IDS))), {
  decode: SchemaGetter.transform((ids: ReadonlyArray<PluginId>) => [...new Set(ids)]),
  encode: SchemaGetter.transform((ids: ReadonlyArray<PluginId>) => ids)
}))

/** What the content members of a request are, from the flags. */
const content = (input: {
  readonly file: Source
  readonly parser: Option.Option<ParserMode>
  readonly schemaVersion: Option.Option<string>
}) => ({
  rawSourceText: input.file.text,
  ...Inputs.ifSome("parserMode", input.parser),
  ...Inputs.ifSome("schemaVersion", input.schemaVersion)
})

const describeObject = (item: ConfigObject) => `${item.objectType} ${item.title === "" ? "(untitled)" : `'${item.title}'`} (${item.id})`

export const create = Commands.endpoint("create", {
  summary: "Create a config object from a source file, with its first version; you become its manager.",
  details: [
    "The source is sent as written and read by the server with the type's parser: a skill is Markdown with YAML front matter (name, description) and a body; mcp and hook sources are JSON (or YAML). The file's base name is kept as the object's path unless --path gives another."
  ],
  inputs: {
    type: Inputs.choice("type", ObjectTypes, { description: "What the object is." }),
    file: sourceFile("The source file ('-' reads standard input); at most 1 MiB."),
    sourceMode: Inputs.optional(Inputs.choice("source-mode", ["cloud", "import"] satisfies ReadonlyArray<SourceMode>, {
      description: "Where it comes from: cloud (written here, the default) or import (brought from elsewhere)."
    })),
    parser,
    schemaVersion,
    path: Inputs.optional(Inputs.text("path", {
      placeholder: "<relativePath>",
      description: "Where the source lives, for example skills/deploy/SKILL.md (default: the file's base name).",
      schema: RelativePath
    })),
    plugins: Inputs.repeatedText("plugin", {
      placeholder: "<pluginId>",
      description: `A plugin (plg_…) to add the new object to (needs editor access on it); at most ${MAX_PLUGIN_IDS}.`,
      schema: DistinctPluginIds
    })
  },
  call: (client, input) => {
    const relativePath = Option.orElse(input.path, () => input.file.fileName)
    return client.configObjects.create({
      payload: {
        input: {
          objectType: input.type,
          ...Inputs.ifSome("sourceMode", input.sourceMode),
          ...content(input),
          ...Inputs.ifSome("relativePath", relativePath)
        },
        ...(input.plugins.length > 0 ? { pluginIds: input.plugins } : {})
      }
    })
  },
  output: ConfigObjectResponse,
  human: ({ item }, { plugins }) =>
    `Created ${describeObject(item)}, version ${item.latestVersion.number}${
      plugins.length > 0 ? `, in ${plural(plugins.length, "plugin")} (${plugins.join(", ")})` : ""
    }.`
})

export const list = Commands.list("list", {
  summary: "List the config objects you can view, newest first, with their latest version.",
  noun: "config objects",
  inputs: {
    type: Inputs.optional(Inputs.choice("type", ObjectTypes, { description: "Only objects of this type." })),
    status: Inputs.optional(Inputs.choice("status", ConfigObjectStatus.literals, {
      description: "Only objects in this status (by default every status but deleted)."
    })),
    sourceMode: Inputs.optional(Inputs.choice("source-mode", SourceMode.literals, { description: "Only objects from this source." })),
    plugin: Inputs.optional(Inputs.text("plugin", {
      placeholder: "<pluginId>",
      description: "Only objects in this plugin (plg_…).",
      schema: PluginId
    })),
    query: Inputs.optional(Inputs.text("query", {
      description: "Only objects whose title, description or source has every word of this text (case-insensitive).",
      schema: ConfigObjectListQuery.fields.q.schema
    })),
    includeDeleted: Inputs.boolean("include-deleted", { description: "Also list deleted objects." })
  },
  call: (client, input, page) =>
    client.configObjects.list({
      query: {
        ...Inputs.ifSome("objectType", input.type),
        ...Inputs.ifSome("status", input.status),
        ...Inputs.ifSome("sourceMode", input.sourceMode),
        ...Inputs.ifSome("pluginId", input.plugin),
        ...Inputs.ifSome("q", input.query),
        ...ifOn("includeDeleted", input.includeDeleted),
        ...page
      }
    }),
  output: ConfigObjectPage,
  columns: [
    ["id", (item) => item.id],
    ["type", (item) => item.objectType],
    ["title", (item) => item.title],
    ["status", (item) => item.status],
    ["version", (item) => String(item.latestVersion.number)],
    ["updated", (item) => Output.date(item.updatedAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show a config object and its latest version (needs viewer access).",
  inputs: { configObjectId },
  call: (client, { configObjectId }) => client.configObjects.get({ params: { configObjectId } }),
  output: ConfigObjectDetail,
  human: ({ item }) =>
    Output.fields([
      ["id", item.id],
      ["type", item.objectType],
      ["title", item.title],
      ["description", item.description === "" ? "-" : item.description],
      ["status", statusOf(item)],
      ["source", item.sourceMode],
      ["path", item.currentRelativePath ?? "-"],
      ["version", `${item.latestVersion.number} (${item.latestVersion.id}, ${item.latestVersion.parserMode})`],
      ["created", Output.date(item.createdAt)],
      ["updated", Output.date(item.updatedAt)]
    ])
})

export const versions = Commands.list("versions", {
  summary: "List a config object's versions, newest first (needs viewer access).",
  noun: "versions",
  inputs: {
    configObjectId,
    includeDeleted: Inputs.boolean("include-deleted", { description: "Also list the versions that record a deletion." })
  },
  call: (client, { configObjectId, includeDeleted }, page) =>
    client.configObjects.listVersions({ params: { configObjectId }, query: { ...ifOn("includeDeleted", includeDeleted), ...page } }),
  output: ConfigObjectVersionPage,
  columns: [
    ["id", (version) => version.id],
    ["number", (version) => String(version.number)],
    ["parser", (version) => version.parserMode],
    ["via", (version) => version.isDeletedVersion ? "deletion" : version.createdVia],
    ["reason", (version) => version.sourceRevisionRef ?? "-"],
    ["created", (version) => Output.date(version.createdAt)]
  ]
})

export const version = Commands.endpoint("version", {
  summary: "Show one version of a config object with its source (needs viewer access).",
  inputs: {
    configObjectId,
    versionId: Inputs.argument("versionId", { schema: ConfigObjectVersionId, description: "The version (cov_…), from 'config-objects versions'." })
  },
  call: (client, { configObjectId, versionId }) => client.configObjects.getVersion({ params: { configObjectId, versionId } }),
  output: ConfigObjectVersionDetail,
  human: ({ item }) =>
    [
      Output.fields([
        ["id", item.id],
        ["number", String(item.number)],
        ["parser", item.parserMode],
        ["schema", item.schemaVersion],
        ["via", item.isDeletedVersion ? "deletion" : item.createdVia],
        ["reason", item.sourceRevisionRef ?? "-"],
        ["created", Output.date(item.createdAt)]
      ]),
      ...(item.rawSourceText === null ? [] : ["", item.rawSourceText.replace(/\n$/, "")])
    ].join("\n")
})

export const addVersion = Commands.endpoint("add-version", {
  summary: "Add a version with new content from a source file (needs editor access); earlier versions never change.",
  inputs: {
    configObjectId,
    file: sourceFile("The new source file ('-' reads standard input); at most 1 MiB."),
    parser,
    schemaVersion,
    reason: Inputs.optional(Inputs.text("reason", {
      description: "Why this version was made; kept with it.",
      schema: CreateVersionRequest.fields.reason.schema
    }))
  },
  call: (client, input) =>
    client.configObjects.createVersion({
      params: { configObjectId: input.configObjectId },
      payload: { input: content(input), ...Inputs.ifSome("reason", input.reason) }
    }),
  output: ConfigObjectResponse,
  human: ({ item }) => `Added version ${item.latestVersion.number} (${item.latestVersion.id}) to ${describeObject(item)}.`
})

const lifecycle = (
  name: "archive" | "restore" | "delete",
  summary: string,
  call: (client: OrgplaneApiClient, configObjectId: ConfigObjectId) => Effect.Effect<typeof ConfigObjectResponse.Type, unknown>,
  done: string
) =>
  Commands.endpoint(name, {
    summary,
    inputs: { configObjectId },
    call: (client, { configObjectId }) => call(client, configObjectId),
    output: ConfigObjectResponse,
    human: ({ item }) => `${done} ${describeObject(item)}; its status is now ${item.status}.`
  })

export const archive = lifecycle(
  "archive",
  "Archive a config object: kept and readable, but its plugins leave it out (needs manager access).",
  (client, configObjectId) => client.configObjects.archive({ params: { configObjectId } }),
  "Archived"
)

export const restore = lifecycle(
  "restore",
  "Make an archived or deleted config object active again (needs manager access).",
  (client, configObjectId) => client.configObjects.restore({ params: { configObjectId } }),
  "Restored"
)

export const del = lifecycle(
  "delete",
  "Delete a config object (soft: its versions, grants and plugins are kept for a restore; needs manager access).",
  (client, configObjectId) => client.configObjects.delete({ params: { configObjectId } }),
  "Deleted"
)

export const configObjects = Commands.group(
  "config-objects",
  "Manage versioned config objects: skills, agents, commands, tools, MCP servers, hooks, context (access per object).",
  [create, list, get, versions, version, addVersion, archive, restore, del],
  [ConfigObjectsApi]
)
