/**
 * Templates: the organization's shared templates (the desktop app's workspace templates). A template is a name, a
 * description, a kind and a JSON document; every change of the document makes a new immutable version.
 */
import * as Schema from "effect/Schema"
import { searchText, Timestamp, TrimmedText } from "./Common.js"
import { exampleId, MembershipId, OrganizationId, TemplateId, TemplateVersionId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, exampleOf, exampleTime, grace } from "./Examples.js"

/** At most 256 KiB: a template document's compact JSON (`JSON.stringify`), in bytes of UTF-8. */
export const MAX_TEMPLATE_DOCUMENT_BYTES = 256 * 1024

const encoder = new TextEncoder()

/** The size a document is measured by: its compact JSON in UTF-8 (what the server stores). */
export const documentBytes = (document: unknown): number => {
  const text = JSON.stringify(document)
  return text === undefined ? 0 : encoder.encode(text).length
}

/** A UTF-16 surrogate without its pair: JSON can carry it, Postgres refuses it. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** The path of the first string or member name holding a lone surrogate, if any; an explicit stack, so depth costs no stack. */
const loneSurrogatePath = (document: unknown): ReadonlyArray<string | number> | undefined => {
  const stack: Array<[unknown, ReadonlyArray<string | number>]> = [[document, []]]
  while (stack.length > 0) {
    const [value, path] = stack.pop()!
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) return path
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push([item, [...path, index]]))
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) return [...path, key]
        stack.push([item, [...path, key]])
      }
    }
  }
  return undefined
}

/**
 * A template's document: any JSON value (object, array, string, number, boolean or null), at most 256 KiB as compact
 * JSON. Nesting is bounded by the request guard (64 levels for the whole body, so 63 inside `document`).
 *
 * `Schema.Json` rather than `Schema.Unknown`: both take every parsed JSON value, and only those, but Effect 4 writes
 * no JSON Schema, description or check of an `Unknown` (it re-encodes it as JSON).
 */
export const TemplateDocument = Schema.Json.annotate({
  description:
    "Any JSON value: object, array, string, number, boolean or null; at most 256 KiB (262144 bytes of UTF-8) as compact JSON, at most 63 levels deep, no NUL or lone surrogate in its strings. Member order is kept."
}).check(
  // Documented with the JSON types it takes, which Effect 4 does not write for `Schema.Json`.
  Schema.makeFilter((document: Schema.Json) =>
    documentBytes(document) <= MAX_TEMPLATE_DOCUMENT_BYTES ||
    `must be at most 256 KiB (${MAX_TEMPLATE_DOCUMENT_BYTES} bytes) as compact JSON; this one is ${documentBytes(document)} bytes`, {
    toJsonSchema: () => ({ type: ["object", "array", "string", "number", "boolean", "null"] })
  }),
  Schema.makeFilter((document: Schema.Json) => {
    const path = loneSurrogatePath(document)
    return path === undefined || { path, issue: "must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)" }
  })
).annotate({ identifier: "TemplateDocument" })

const KIND = /^[a-z][a-z0-9_-]{0,63}$/u

/** A short identifier: `workspace`, `agent-profile`. */
export const TemplateKindName = Schema.String.check(
  Schema.isPattern(KIND, {
    message: "must be 1 to 64 lowercase letters, digits, `-` or `_`, starting with a letter (for example `workspace`)",
    toJsonSchema: () => ({ minLength: 1, maxLength: 64, pattern: KIND.source })
  })
).annotate({
  identifier: "TemplateKind",
  description: "What the template is for: 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter (the desktop app's workspace templates use `workspace`)."
})

const SCHEMA_VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/u

/** The format version a document declares; it names the JSON Schema file the server validates against (`<schemaVersion>.json`). */
export const TemplateSchemaVersion = Schema.String.check(
  Schema.isPattern(SCHEMA_VERSION, {
    message: "must be 1 to 64 letters, digits, `.`, `-` or `_`, starting with a letter or digit (for example `workspace-1`)",
    toJsonSchema: () => ({ minLength: 1, maxLength: 64, pattern: SCHEMA_VERSION.source })
  })
).annotate({
  identifier: "TemplateSchemaVersion",
  description:
    "The version of the document's format: 1 to 64 letters, digits, `.`, `-` and `_`, starting with a letter or digit. When the server has a JSON Schema registered under this name the document is validated against it; otherwise it is stored unvalidated."
})

export const TemplateName = TrimmedText(1, 255, "The template's name")
export const TemplateDescription = TrimmedText(0, 2000, "What the template is for")

/** The example: Grace's workspace template for new services. */
const example = {
  name: "Service starter",
  description: "A workspace with the service skills and the staging MCP server.",
  kind: "workspace",
  schemaVersion: "workspace-1",
  document: {
    name: "service-starter",
    folders: ["src", "test"],
    skills: ["deploy-to-staging"],
    mcpServers: { staging: { url: "https://mcp.staging.acme.example/mcp" } }
  }
}

export class TemplateVersion extends Schema.Class<TemplateVersion>("TemplateVersion")(Schema.Struct({
  id: TemplateVersionId,
  templateId: TemplateId,
  number: Schema.Int.annotate({ description: "1 for the first version, then one more for each version after it." }),
  schemaVersion: Schema.NullOr(Schema.String).annotate({ description: "The format version the document declared; null when none." }),
  validated: Schema.Boolean.annotate({
    description: "Whether the document was validated against a JSON Schema registered for its `schemaVersion` when this version was made."
  }),
  sizeBytes: Schema.Int.annotate({ description: "The document's size as compact JSON, in bytes of UTF-8." }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("tpv"),
    templateId: exampleId("tpl"),
    number: 1,
    schemaVersion: example.schemaVersion,
    validated: true,
    sizeBytes: JSON.stringify(example.document).length,
    createdByOrgMembershipId: grace.membershipId,
    createdAt: exampleTime(200)
  }]
})) {}

export class Template extends Schema.Class<Template>("Template")(Schema.Struct({
  id: TemplateId,
  organizationId: OrganizationId,
  name: Schema.String,
  description: Schema.String,
  kind: Schema.String,
  latestVersion: TemplateVersion.annotateKey({ description: "The newest version (its document: `GET /v1/templates/{templateId}`)." }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId).annotate({
    description: "The member who created the template; they keep manager access to it."
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("tpl"),
    organizationId: acme.id,
    name: example.name,
    description: example.description,
    kind: example.kind,
    latestVersion: exampleOf(TemplateVersion),
    createdByOrgMembershipId: grace.membershipId,
    createdAt: exampleTime(200),
    updatedAt: exampleTime(200)
  }]
})) {}

export const TemplatePage = Page(Template).annotate({ identifier: "TemplatePage" })
export const TemplateVersionPage = Page(TemplateVersion).annotate({ identifier: "TemplateVersionPage" })

export const TemplateResponse = Schema.Struct({
  template: Template,
  document: Schema.Json.annotate({ description: "The latest version's document, as stored." })
}).annotate({
  identifier: "TemplateResponse",
  examples: [{ template: exampleOf(Template), document: example.document }]
})

export const TemplateVersionResponse = Schema.Struct({
  version: TemplateVersion,
  document: Schema.Json.annotate({ description: "This version's document, as stored." })
}).annotate({
  identifier: "TemplateVersionResponse",
  examples: [{ version: exampleOf(TemplateVersion), document: example.document }]
})

export const TemplateInstance = Schema.Struct({
  templateId: TemplateId,
  name: Schema.String,
  kind: Schema.String,
  version: TemplateVersion,
  document: Schema.Json.annotate({
    description:
      "The version's document resolved: a copy with the `default` values of the JSON Schema registered for its `schemaVersion` filled in where the document leaves a member out; the document as stored when no schema is registered."
  }),
  defaultsApplied: Schema.Boolean.annotate({
    description: "Whether a registered schema's defaults were applied (false when the version has no `schemaVersion` or none is registered for it)."
  })
}).annotate({
  identifier: "TemplateInstance",
  examples: [{
    templateId: exampleId("tpl"),
    name: example.name,
    kind: example.kind,
    version: exampleOf(TemplateVersion),
    document: { ...example.document, shell: "bash" },
    defaultsApplied: true
  }]
})

export const CreateTemplateRequest = Schema.Struct({
  name: TemplateName,
  // Described on the wire side: Effect 4 writes no member description of a transformation (trimmed text) into the
  // JSON Schema, and this one replaces the text's own, as the document has it.
  description: Schema.optionalKey(TemplateDescription.pipe(Schema.annotateEncoded({
    description: "What the template is for, 0 to 2000 characters (default empty)."
  }))),
  kind: TemplateKindName,
  schemaVersion: Schema.optionalKey(TemplateSchemaVersion),
  document: TemplateDocument
}).annotate({
  examples: [{ name: example.name, description: example.description, kind: example.kind, schemaVersion: example.schemaVersion, document: example.document }]
})
export type CreateTemplateRequest = typeof CreateTemplateRequest.Type

export const UpdateTemplateRequest = Schema.Struct({
  name: Schema.optionalKey(TemplateName),
  description: Schema.optionalKey(TemplateDescription),
  kind: Schema.optionalKey(TemplateKindName),
  schemaVersion: Schema.optionalKey(Schema.NullOr(TemplateSchemaVersion)).annotateKey({
    description: "The document's format version for the new version; null for none. Left out: the latest version's."
  }),
  document: Schema.optionalKey(TemplateDocument).annotateKey({
    description: "The new version's document. Left out (with `schemaVersion` given): the latest version's document."
  })
}).check(
  Schema.makeFilter(
    (body) => Object.keys(body).length > 0 || "give at least one of name, description, kind, schemaVersion or document",
    { toJsonSchema: () => ({ minProperties: 1 }) }
  )
).annotate({
  examples: [{ description: "A workspace with the service skills, the staging MCP server and a CI workflow.", document: { ...example.document, folders: ["src", "test", ".github/workflows"] } }]
})
export type UpdateTemplateRequest = typeof UpdateTemplateRequest.Type

export const TemplateListQuery = Schema.Struct({
  ...PageQueryFields,
  q: Schema.optionalKey(
    searchText("Only templates whose name contains every word of this text, each as a word or the start of one (case-insensitive).")),
  kind: Schema.optionalKey(TemplateKindName).annotateKey({ description: "Only templates of this kind." })
}).annotate({ examples: [{ q: "service", kind: "workspace" }] })
export type TemplateListQuery = typeof TemplateListQuery.Type

export const TemplateVersionListQuery = Schema.Struct({ ...PageQueryFields }).annotate({ examples: [{}] })
export type TemplateVersionListQuery = typeof TemplateVersionListQuery.Type

export const InstantiateTemplateQuery = Schema.Struct({
  versionId: Schema.optionalKey(TemplateVersionId).annotateKey({
    description: "The version to resolve (default: the latest)."
  })
}).annotate({ examples: [{ versionId: exampleId("tpv") }] })
export type InstantiateTemplateQuery = typeof InstantiateTemplateQuery.Type

export const TemplatePath = Schema.Struct({ templateId: TemplateId })
export const TemplateVersionPath = Schema.Struct({ templateId: TemplateId, versionId: TemplateVersionId })
