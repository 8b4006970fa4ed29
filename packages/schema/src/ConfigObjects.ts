/**
 * Config objects: versioned configuration items (skills, agents, commands, MCP server definitions, hooks, ...).
 * Each keeps an immutable version history; the object itself carries what is derived from its latest version
 * (title, description, search text).
 */
import * as Schema from "effect/Schema"
import { allErrors, requestBody, searchText, Timestamp, TrimmedText } from "./Common.js"
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

export const ObjectType = Schema.Literal("skill", "agent", "command", "tool", "mcp", "hook", "context", "custom").annotations({
  identifier: "ObjectType",
  description:
    "What a config object is. `skill`, `agent` and `command` are Markdown with YAML front matter; `mcp` (MCP server definitions) and `hook` are JSON; `tool`, `context` and `custom` are text."
})
export type ObjectType = typeof ObjectType.Type
export const ObjectTypes = ObjectType.literals

export const SourceMode = Schema.Literal("cloud", "import", "connector").annotations({
  identifier: "SourceMode",
  description:
    "Where a config object comes from: `cloud` (written here), `import` (brought from elsewhere, for example a file), or `connector` (kept in sync from a code-hosting repository by a connector; only connector sync creates these)."
})
export type SourceMode = typeof SourceMode.Type

export const ParserMode = Schema.Literal("markdown", "json", "yaml", "text").annotations({
  identifier: "ParserMode",
  description:
    "How `rawSourceText` is read. `markdown`: Markdown with optional YAML front matter between `---` lines (required for skills); `json`; `yaml`; `text`: kept as is. Which fit each object type: skill `markdown`; agent and command `markdown` (default) or `text`; mcp and hook `json` (default) or `yaml`; tool, context and custom `text` (default), `markdown`, `json` or `yaml`."
})
export type ParserMode = typeof ParserMode.Type

export const ConfigObjectStatus = Schema.Literal("active", "archived", "deleted").annotations({
  identifier: "ConfigObjectStatus",
  description: "`active`; `archived` (kept and listed, but out of use); `deleted` (soft-deleted: `deletedAt` is set; restorable)."
})
export type ConfigObjectStatus = typeof ConfigObjectStatus.Type

/** A JSON object. */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  identifier: "JsonObject",
  jsonSchema: {
    type: "object",
    additionalProperties: true,
    description: "Any JSON object; bounded only by the request's size and nesting limits."
  }
})
export type JsonObject = typeof JsonObject.Type

/** At most 1 MiB of source text, as the original service allowed. */
export const MAX_SOURCE_BYTES = 1024 * 1024

const encoder = new TextEncoder()
/** A UTF-16 code unit takes at most 3 bytes of UTF-8, so short text needs no encoding to be known small enough. */
const withinSourceLimit = (text: string) => text.length * 3 <= MAX_SOURCE_BYTES || encoder.encode(text).length <= MAX_SOURCE_BYTES

const SourceText = Schema.String.pipe(
  Schema.filter((text) => text.trim().length > 0 || "must not be empty or only white space"),
  Schema.filter((text) => withinSourceLimit(text) || "must be at most 1 MiB (1048576 bytes of UTF-8)")
).annotations({
  description: "The source as written (Markdown, JSON, YAML or text); at most 1 MiB of UTF-8. Stored as given.",
  jsonSchema: {
    type: "string",
    minLength: 1,
    maxLength: MAX_SOURCE_BYTES,
    // Something besides white space, and no NUL.
    pattern: "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$",
    description: "The source as written; at most 1 MiB of UTF-8 (so at most 1048576 characters, fewer beyond ASCII). Stored as given."
  }
})

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
  number: Schema.Int.annotations({ description: "1 for the first version, then one more for each version after it." }),
  schemaVersion: Schema.String,
  parserMode: ParserMode.annotations({ description: "The parser that read this version's source." }),
  normalizedPayloadJson: Schema.NullOr(JsonObject).annotations({
    description:
      "What the parser made of the source: for Markdown `{frontmatter, body}`, for JSON and YAML the object itself, for text `{text}`; null in a deleted version."
  }),
  rawSourceText: Schema.NullOr(Schema.String),
  metadata: Schema.NullOr(JsonObject),
  createdVia: Schema.Literal("cloud", "import", "connector", "system"),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  connectorSyncEventId: Schema.NullOr(Schema.String),
  sourceRevisionRef: Schema.NullOr(Schema.String).annotations({
    description: "What this version was made from: the `reason` given with it, or the source revision a connector synced."
  }),
  isDeletedVersion: Schema.Boolean.annotations({
    description: "Whether this version records the object's deletion (it then carries no content)."
  }),
  createdAt: Timestamp
}).annotations({
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
}).annotations({
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
    latestVersion: exampleOf(ConfigObjectVersion)
  }]
})) {}

export const ConfigObjectPage = Page(ConfigObject).annotations({ identifier: "ConfigObjectPage" })
export const ConfigObjectVersionPage = Page(ConfigObjectVersion).annotations({ identifier: "ConfigObjectVersionPage" })

export const ConfigObjectResponse = Schema.Struct({ ok: Schema.Literal(true), item: ConfigObject }).annotations({
  identifier: "ConfigObjectResponse"
})
export const ConfigObjectDetail = Schema.Struct({ item: ConfigObject }).annotations({ identifier: "ConfigObjectDetail" })
export const ConfigObjectVersionDetail = Schema.Struct({ item: ConfigObjectVersion }).annotations({
  identifier: "ConfigObjectVersionDetail"
})

/** What every version's source is given as: the content members of `input`. */
const contentFields = {
  rawSourceText: Schema.optionalWith(SourceText, { exact: true }),
  normalizedPayloadJson: Schema.optionalWith(JsonObject, { exact: true }).annotations({
    description:
      "The content as an object, instead of `rawSourceText` (not with it): for JSON object types the definition itself; stored as the version's source too, as JSON."
  }),
  parserMode: Schema.optionalWith(ParserMode, { exact: true }),
  schemaVersion: Schema.optionalWith(TrimmedText(1, 100, "Version of the content's own format"), { exact: true })
    .annotations({ description: "Version of the content's own format (default `1`)." }),
  metadata: Schema.optionalWith(JsonObject, { exact: true }).annotations({
    description:
      "Free-form data kept with the version; its `title`, `name` and `description` are used for the object's title and description when the source does not give them."
  })
}

/** Exactly one of the two ways to give content; the OpenAPI document says so with `oneOf` (inside `allOf`, which keeps the members' schemas: a bare `oneOf` would replace them). */
const oneSource = <A extends { readonly rawSourceText?: string; readonly normalizedPayloadJson?: unknown }>(
  self: Schema.Schema<A, any>
) =>
  self.pipe(Schema.filter(
    (input) =>
      (input.rawSourceText === undefined) !== (input.normalizedPayloadJson === undefined) ||
      "give rawSourceText or normalizedPayloadJson (one of them)",
    { jsonSchema: { allOf: [{ oneOf: [{ required: ["rawSourceText"] }, { required: ["normalizedPayloadJson"] }] }] } }
  ))

// The last character that trimming keeps is not a slash.
export const RelativePath = TrimmedText(1, 1024, "Path of the source file, relative to where it came from", "^[^\\u0000]*[^/\\s\\u0000]\\s*$").pipe(
  Schema.filter((path) => !path.endsWith("/") || "must name a file, not a directory")
)

export const ConfigObjectInput = Schema.Struct({
  objectType: ObjectType,
  sourceMode: Schema.optionalWith(SourceMode, { exact: true }).annotations({
    description:
      "`cloud` (default) or `import`. `connector` is a value of the spec's enumeration that a direct create refuses (400 on `input.sourceMode`): connector-sourced objects come from a connector sync (`POST /v1/connector-instances/{id}/sync`)."
  }),
  ...contentFields,
  relativePath: Schema.optionalWith(RelativePath, { exact: true }).annotations({
    description:
      "Where the source file lives (`skills/deploy/SKILL.md`); sets `currentRelativePath`, `currentFileName` and `currentFileExtension`."
  })
}).pipe(oneSource).annotations({
  ...requestBody,
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
  pluginIds: Schema.optionalWith(Schema.Array(PluginId).pipe(Schema.maxItems(MAX_PLUGIN_IDS)), { exact: true }).annotations({
    description: "Plugins (`plg_`) to add the new object to, at most 100; the caller needs editor access on each. A repeated id is taken once."
  })
}).annotations({ ...requestBody, examples: [{ input: exampleOf(ConfigObjectInput) }] })
export type CreateConfigObjectRequest = typeof CreateConfigObjectRequest.Type

export const VersionInput = Schema.Struct(contentFields).pipe(oneSource).annotations({
  ...requestBody,
  examples: [{ rawSourceText: deploySkillSource.replace("ENV=staging`", "ENV=staging` (needs VPN access)"), parserMode: "markdown" }]
})

export const CreateVersionRequest = Schema.Struct({
  input: VersionInput,
  reason: Schema.optionalWith(TrimmedText(1, 255, "Why this version was made"), { exact: true }).annotations({
    description: "Why this version was made; kept as the version's `sourceRevisionRef`."
  })
}).annotations({ ...requestBody, examples: [{ input: exampleOf(VersionInput), reason: "Mention the VPN" }] })
export type CreateVersionRequest = typeof CreateVersionRequest.Type

export const ConfigObjectListQuery = Schema.Struct({
  ...PageQueryFields,
  objectType: Schema.optionalWith(ObjectType, { exact: true }),
  status: Schema.optionalWith(ConfigObjectStatus, { exact: true }).annotations({
    description: "Only objects in this status (by default every status but `deleted`)."
  }),
  sourceMode: Schema.optionalWith(SourceMode, { exact: true }),
  pluginId: Schema.optionalWith(PluginId, { exact: true }).annotations({ description: "Only objects in this plugin." }),
  connectorInstanceId: Schema.optionalWith(ConnectorInstanceId, { exact: true }).annotations({
    description: "Only objects kept in sync by this connector instance."
  }),
  includeDeleted: Schema.optionalWith(Schema.BooleanFromString, { exact: true }).annotations({
    description: "Also list deleted objects (default false)."
  }),
  q: Schema.optionalWith(
    searchText(
      "Only objects whose title, description or source contains every word of this text, each as a word or the start of one (case-insensitive)."
    ),
    { exact: true }
  )
}).annotations({ ...allErrors, examples: [{ objectType: "skill", status: "active", includeDeleted: false, q: "deploy staging" }] })
export type ConfigObjectListQuery = typeof ConfigObjectListQuery.Type

export const VersionListQuery = Schema.Struct({
  ...PageQueryFields,
  includeDeleted: Schema.optionalWith(Schema.BooleanFromString, { exact: true }).annotations({
    description: "Also list versions that record a deletion (default false)."
  })
}).annotations({ ...allErrors, examples: [{ includeDeleted: false }] })
export type VersionListQuery = typeof VersionListQuery.Type

export const ConfigObjectPath = Schema.Struct({ configObjectId: ConfigObjectId })
export const ConfigObjectVersionPath = Schema.Struct({ configObjectId: ConfigObjectId, versionId: ConfigObjectVersionId })
