/**
 * Config objects: versioned configuration items (skills, agents, commands, MCP server definitions, hooks, ...).
 * Each keeps an immutable version history; the object itself carries what is derived from its latest version
 * (title, description, search text).
 */
import * as Schema from "effect/Schema"
import { BooleanFromString, searchText, Timestamp, TrimmedText } from "./Common.js"
import {
  ConfigObjectId,
  ConfigObjectVersionId,
  exampleId,
  ConnectorInstanceId,
  MembershipId,
  OrganizationId,
  PluginId
} from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, exampleOf, exampleTime, grace } from "./Examples.js"
import { publishedAs } from "./internal/published.js"

export const ObjectType = Schema.Literals(["skill", "agent", "command", "tool", "mcp", "hook", "context", "custom"]).annotate({
  identifier: "ObjectType",
  description:
    "What a config object is. `skill`, `agent` and `command` are Markdown with YAML front matter; `mcp` (MCP server definitions) and `hook` are JSON; `tool`, `context` and `custom` are text."
})
export type ObjectType = typeof ObjectType.Type
export const ObjectTypes = ObjectType.literals

export const SourceMode = Schema.Literals(["cloud", "import", "connector"]).annotate({
  identifier: "SourceMode",
  description:
    "Where a config object comes from: `cloud` (written here), `import` (brought from elsewhere, for example a file), or `connector` (kept in sync from a code-hosting repository by a connector; only connector sync creates these)."
})
export type SourceMode = typeof SourceMode.Type

export const ParserMode = Schema.Literals(["markdown", "json", "yaml", "text"]).annotate({
  identifier: "ParserMode",
  description:
    "How `rawSourceText` is read. `markdown`: Markdown with optional YAML front matter between `---` lines (required for skills); `json`; `yaml`; `text`: kept as is. Which fit each object type: skill `markdown`; agent and command `markdown` (default) or `text`; mcp and hook `json` (default) or `yaml`; tool, context and custom `text` (default), `markdown`, `json` or `yaml`."
})
export type ParserMode = typeof ParserMode.Type

export const ConfigObjectStatus = Schema.Literals(["active", "archived", "deleted"]).annotate({
  identifier: "ConfigObjectStatus",
  description: "`active`; `archived` (kept and listed, but out of use); `deleted` (soft-deleted: `deletedAt` is set; restorable)."
})
export type ConfigObjectStatus = typeof ConfigObjectStatus.Type

/**
 * A JSON object. Its JSON Schema says it takes any member (`additionalProperties: true`): Effect 4 writes a record of
 * any values as any object, `{ type: object }`, which the document writes as it does other such records
 * (OpenApiComponents' `objectsAsPublished`), so the check (which refuses nothing) keeps this one's own form.
 */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter(() => true, { toJsonSchema: () => ({ additionalProperties: true }) })
).annotate({
  identifier: "JsonObject",
  description: "Any JSON object; bounded only by the request's size and nesting limits.",
  // Published as this JSON Schema wherever a member describes it again (the member's description not written in it).
  ...publishedAs({ type: "object", additionalProperties: true, description: "Any JSON object; bounded only by the request's size and nesting limits." })
})
export type JsonObject = typeof JsonObject.Type

/** At most 1 MiB of source text (bytes of UTF-8). */
export const MAX_SOURCE_BYTES = 1024 * 1024

const encoder = new TextEncoder()
/** A UTF-16 code unit takes at most 3 bytes of UTF-8, so short text needs no encoding to be known small enough. */
const withinSourceLimit = (text: string) => text.length * 3 <= MAX_SOURCE_BYTES || encoder.encode(text).length <= MAX_SOURCE_BYTES

// The source as written (Markdown, JSON, YAML or text); at most 1 MiB of UTF-8. Stored as given. The document states
// the byte bound as a character bound (1 MiB of UTF-8 is at most 1048576 characters) and the rest as a pattern.
export const SourceText = Schema.String.annotate({
  description: "The source as written; at most 1 MiB of UTF-8 (so at most 1048576 characters, fewer beyond ASCII). Stored as given."
}).check(
  Schema.makeFilter((text: string) => text.trim().length > 0 || "must not be empty or only white space", {
    // Something besides white space, and no NUL.
    toJsonSchema: () => ({ minLength: 1, pattern: "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$" })
  }),
  Schema.makeFilter((text: string) => withinSourceLimit(text) || "must be at most 1 MiB (1048576 bytes of UTF-8)", {
    toJsonSchema: () => ({ maxLength: MAX_SOURCE_BYTES })
  })
)

/** The example skill's source, as its author wrote it. */
const deploySkill = {
  frontmatter: { name: "deploy-to-staging", description: "Deploys the current branch to the staging environment." },
  body: "# Deploy to staging\n\nRun `make deploy ENV=staging` and post the preview URL in the pull request.\n"
}
const deploySkillSource = `---
name: ${deploySkill.frontmatter.name}
description: ${deploySkill.frontmatter.description}
---
${deploySkill.body}`

export class ConfigObjectVersion extends Schema.Class<ConfigObjectVersion>("ConfigObjectVersion")(Schema.Struct({
  id: ConfigObjectVersionId,
  configObjectId: ConfigObjectId,
  number: Schema.Int.annotate({ description: "1 for the first version, then one more for each version after it." }),
  schemaVersion: Schema.String,
  parserMode: ParserMode.annotateKey({ description: "The parser that read this version's source." }),
  normalizedPayloadJson: Schema.NullOr(JsonObject).annotate({
    description:
      "What the parser made of the source: for Markdown `{frontmatter, body}`, for JSON and YAML the object itself, for text `{text}`; null in a deleted version."
  }),
  rawSourceText: Schema.NullOr(Schema.String),
  metadata: Schema.NullOr(JsonObject),
  createdVia: Schema.Literals(["cloud", "import", "connector", "system"]),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  connectorSyncEventId: Schema.NullOr(Schema.String),
  sourceRevisionRef: Schema.NullOr(Schema.String).annotate({
    description: "What this version was made from: the `reason` given with it, or the source revision a connector synced."
  }),
  isDeletedVersion: Schema.Boolean.annotate({
    description: "Whether this version records the object's deletion (it then carries no content)."
  }),
  createdAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("cov"),
    configObjectId: exampleId("cob"),
    number: 1,
    schemaVersion: "1",
    parserMode: "markdown",
    normalizedPayloadJson: deploySkill,
    rawSourceText: deploySkillSource,
    metadata: null,
    createdVia: "cloud",
    createdByOrgMembershipId: grace.membershipId,
    connectorSyncEventId: null,
    sourceRevisionRef: "first version",
    isDeletedVersion: false,
    createdAt: exampleTime(120)
  }]
})) {}

export class ConfigObject extends Schema.Class<ConfigObject>("ConfigObject")(Schema.Struct({
  id: ConfigObjectId,
  organizationId: OrganizationId,
  objectType: ObjectType,
  sourceMode: SourceMode,
  status: ConfigObjectStatus,
  title: Schema.String,
  description: Schema.String,
  searchText: Schema.String,
  currentFileName: Schema.NullOr(Schema.String),
  currentFileExtension: Schema.NullOr(Schema.String),
  currentRelativePath: Schema.NullOr(Schema.String),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  connectorInstanceId: Schema.NullOr(ConnectorInstanceId),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Schema.NullOr(Timestamp),
  latestVersion: ConfigObjectVersion
}).annotate({
  examples: [{
    id: exampleId("cob"),
    organizationId: acme.id,
    objectType: "skill",
    sourceMode: "cloud",
    status: "active",
    title: deploySkill.frontmatter.name,
    description: deploySkill.frontmatter.description,
    searchText: `${deploySkill.frontmatter.name} ${deploySkill.frontmatter.description} ${deploySkill.body}`,
    currentFileName: "SKILL.md",
    currentFileExtension: "md",
    currentRelativePath: "skills/deploy-to-staging/SKILL.md",
    createdByOrgMembershipId: grace.membershipId,
    connectorInstanceId: null,
    createdAt: exampleTime(120),
    updatedAt: exampleTime(120),
    deletedAt: null,
    // An instance: Effect 4 encodes no plain object as a class (exampleOf composes one).
    latestVersion: exampleOf(ConfigObjectVersion)
  }]
})) {}

export const ConfigObjectPage = Page(ConfigObject).annotate({ identifier: "ConfigObjectPage" })
export const ConfigObjectVersionPage = Page(ConfigObjectVersion).annotate({ identifier: "ConfigObjectVersionPage" })

export const ConfigObjectResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConfigObject }).annotate({
  identifier: "ConfigObjectResponse"
})
export const ConfigObjectDetail = Schema.Struct({ item: ConfigObject }).annotate({ identifier: "ConfigObjectDetail" })
export const ConfigObjectVersionDetail = Schema.Struct({ item: ConfigObjectVersion }).annotate({
  identifier: "ConfigObjectVersionDetail"
})

/** The version of a content's own format. A trimmed text's JSON Schema is its wire side's: the description goes there. */
export const ContentSchemaVersion = TrimmedText(1, 100, "Version of the content's own format").pipe(
  Schema.annotateEncoded({ description: "Version of the content's own format (default `1`)." })
)

/** What every version's source is given as: the content members of `input`. */
const contentFields = {
  rawSourceText: Schema.optionalKey(SourceText),
  normalizedPayloadJson: Schema.optionalKey(JsonObject).annotateKey({
    description:
      "The content as an object, instead of `rawSourceText` (not with it): for JSON object types the definition itself; stored as the version's source too, as JSON."
  }),
  parserMode: Schema.optionalKey(ParserMode),
  schemaVersion: Schema.optionalKey(ContentSchemaVersion),
  metadata: Schema.optionalKey(JsonObject).annotateKey({
    description:
      "Free-form data kept with the version; its `title`, `name` and `description` are used for the object's title and description when the source does not give them."
  })
}

/** Exactly one of the two ways to give content; the OpenAPI document says so with `oneOf` (inside `allOf`, which keeps the members' schemas: a bare `oneOf` would replace them). */
const oneSource = Schema.makeFilter(
  (input: { readonly rawSourceText?: string; readonly normalizedPayloadJson?: unknown }) =>
    (input.rawSourceText === undefined) !== (input.normalizedPayloadJson === undefined) ||
    "give rawSourceText or normalizedPayloadJson (one of them)",
  { toJsonSchema: () => ({ allOf: [{ oneOf: [{ required: ["rawSourceText"] }, { required: ["normalizedPayloadJson"] }] }] }) }
)

// The last character that trimming keeps is not a slash.
export const RelativePath = TrimmedText(1, 1024, "Path of the source file, relative to where it came from", "^[^\\u0000]*[^/\\s\\u0000]\\s*$").check(
  Schema.makeFilter((path: string) => !path.endsWith("/") || "must name a file, not a directory")
)

export const ConfigObjectInput = Schema.Struct({
  objectType: ObjectType,
  sourceMode: Schema.optionalKey(SourceMode).annotateKey({
    description:
      "`cloud` (default) or `import`. `connector` is a value of the spec's enumeration that a direct create refuses (400 on `input.sourceMode`): connector-sourced objects come from a connector sync (`POST /v1/connector-instances/{id}/sync`)."
  }),
  ...contentFields,
  relativePath: Schema.optionalKey(RelativePath.pipe(Schema.annotateEncoded({
    description:
      "Where the source file lives (`skills/deploy/SKILL.md`); sets `currentRelativePath`, `currentFileName` and `currentFileExtension`."
  })))
}).check(oneSource).annotate({
  examples: [{
    objectType: "skill",
    rawSourceText: deploySkillSource,
    parserMode: "markdown",
    relativePath: "skills/deploy-to-staging/SKILL.md"
  }]
})

export const MAX_PLUGIN_IDS = 100

export const CreateConfigObjectRequest = Schema.Struct({
  input: ConfigObjectInput,
  pluginIds: Schema.optionalKey(Schema.Array(PluginId).check(Schema.isMaxLength(MAX_PLUGIN_IDS))).annotateKey({
    description: "Plugins (`plg_`) to add the new object to, at most 100; the caller needs editor access on each. A repeated id is taken once."
  })
}).annotate({ examples: [{ input: exampleOf(ConfigObjectInput) }] })
export type CreateConfigObjectRequest = typeof CreateConfigObjectRequest.Type

export const VersionInput = Schema.Struct(contentFields).check(oneSource).annotate({
  examples: [{ rawSourceText: deploySkillSource.replace("ENV=staging`", "ENV=staging` (needs VPN access)"), parserMode: "markdown" }]
})

export const CreateVersionRequest = Schema.Struct({
  input: VersionInput,
  reason: Schema.optionalKey(TrimmedText(1, 255, "Why this version was made").pipe(Schema.annotateEncoded({
    description: "Why this version was made; kept as the version's `sourceRevisionRef`."
  })))
}).annotate({ examples: [{ input: exampleOf(VersionInput), reason: "Mention the VPN" }] })
export type CreateVersionRequest = typeof CreateVersionRequest.Type

export const ConfigObjectListQuery = Schema.Struct({
  ...PageQueryFields,
  objectType: Schema.optionalKey(ObjectType),
  status: Schema.optionalKey(ConfigObjectStatus).annotateKey({
    description: "Only objects in this status (by default every status but `deleted`)."
  }),
  sourceMode: Schema.optionalKey(SourceMode),
  pluginId: Schema.optionalKey(PluginId).annotateKey({ description: "Only objects in this plugin." }),
  connectorInstanceId: Schema.optionalKey(ConnectorInstanceId).annotateKey({
    description: "Only objects kept in sync by this connector instance."
  }),
  includeDeleted: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "Also list deleted objects (default false)."
  }),
  q: Schema.optionalKey(
    searchText(
      "Only objects whose title, description or source contains every word of this text, each as a word or the start of one (case-insensitive)."
    )
  )
}).annotate({ examples: [{ objectType: "skill", status: "active", includeDeleted: false, q: "deploy staging" }] })
export type ConfigObjectListQuery = typeof ConfigObjectListQuery.Type

export const VersionListQuery = Schema.Struct({
  ...PageQueryFields,
  includeDeleted: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "Also list versions that record a deletion (default false)."
  })
}).annotate({ examples: [{ includeDeleted: false }] })
export type VersionListQuery = typeof VersionListQuery.Type

export const ConfigObjectPath = Schema.Struct({ configObjectId: ConfigObjectId })
export const ConfigObjectVersionPath = Schema.Struct({ configObjectId: ConfigObjectId, versionId: ConfigObjectVersionId })
