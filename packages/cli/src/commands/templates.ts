/**
 * `orgplane templates list | get | create | update | delete | versions | instantiate | grant | revoke`: the
 * organization's shared templates. A document is JSON read from `--file` (`-` for standard input), checked as JSON
 * and against the API's 256 KiB limit before it is sent; the server validates it against its `schemaVersion`'s schema.
 */
import { AccessRole, CreateTemplateRequest, exampleId, MAX_TEMPLATE_DOCUMENT_BYTES, SearchText, type Template, TemplateAccessGrantId, TemplateAccessGrantPage, TemplateAccessGrantResponse, TemplateDocument, TemplateId, TemplateInstance, TemplateKindName, TemplatePage, TemplateResponse, TemplatesApi, TemplateSchemaVersion, TemplateVersionId, TemplateVersionPage, UpdateTemplateRequest } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { grantColumns, grantee, granteeInputs, granteePayload } from "./access.js"

const templateId = Inputs.argument("templateId", { schema: TemplateId, description: "The template (tpl_…)." })

/**
 * A file as read can hold at most this much: the document's compact JSON is what the API limits to 256 KiB, and an
 * indented file of such a document is larger; the API's own check decides after parsing.
 */
const MAX_FILE_BYTES = 4 * MAX_TEMPLATE_DOCUMENT_BYTES

/** The first problems of a refused document, in the words of the API's schema. */
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The document in `path` (`-`: standard input): JSON, at most 256 KiB compact; a usage error naming --file otherwise. */
const readDocument = (path: string) => {
  const what = path === "-" ? "standard input" : `'${path}'`
  const invalid = (message: string) => new UsageError({ message: `--file: ${message}` })
  return Files.readFileOrStdin(path, MAX_FILE_BYTES, "1 MiB").pipe(
    Effect.mapError(invalid),
    Effect.flatMap((text) => Effect.mapError(Schema.decodeEffect(Schema.fromJsonString(Schema.Unknown))(text), () => invalid(`${what} does not hold JSON`))),
    Effect.flatMap((value) =>
      Effect.mapError(Schema.decodeUnknownEffect(TemplateDocument)(value), (error) =>
        invalid(`the document in ${what} ${formatIssue(error.issue).issues.map((issue) => issue.message).join("; ")}`)))
  )
}

const file = (required: boolean) =>
  Inputs.text("file", {
    placeholder: "<path>",
    description: `A file holding the template's document, JSON (\`-\`: standard input)${required ? "" : "; makes a new version"}.`
  })

const version = (template: Template) =>
  `version ${template.latestVersion.number}${
    template.latestVersion.schemaVersion === null
      ? ""
      : ` (${template.latestVersion.schemaVersion}${template.latestVersion.validated ? ", validated" : ", not validated: no schema registered"})`
  }`

const shown = ({ document, template }: typeof TemplateResponse.Type) =>
  [
    Output.fields([
      ["id", template.id],
      ["name", template.name],
      ["kind", template.kind],
      ["description", template.description === "" ? "-" : template.description],
      ["version", `${template.latestVersion.number} (${template.latestVersion.id})`],
      ["schema", template.latestVersion.schemaVersion ?? "-"],
      ["size", `${template.latestVersion.sizeBytes} bytes`],
      ["updated", Output.date(template.updatedAt)]
    ]),
    JSON.stringify(document, null, 2)
  ].join("\n")

export const list = Commands.list("list", {
  summary: "List the templates you can see, newest first; search names and filter by kind.",
  noun: "templates",
  inputs: {
    query: Inputs.optional(Inputs.text("query", {
      description: "Only templates whose name has every word of this text (each as a word or the start of one).",
      schema: SearchText
    })),
    kind: Inputs.optional(Inputs.text("kind", { description: "Only templates of this kind (workspace, …).", schema: TemplateKindName }))
  },
  call: (client, { kind, query }, page) =>
    client.templates.list({ query: { ...Inputs.ifSome("q", query), ...Inputs.ifSome("kind", kind), ...page } }),
  output: TemplatePage,
  columns: [
    ["id", (template) => template.id],
    ["name", (template) => template.name],
    ["kind", (template) => template.kind],
    ["version", (template) => String(template.latestVersion.number)],
    ["schema", (template) => template.latestVersion.schemaVersion ?? "-"],
    ["updated", (template) => Output.date(template.updatedAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show a template and its latest document.",
  inputs: { templateId },
  call: (client, { templateId }) => client.templates.get({ params: { templateId } }),
  output: TemplateResponse,
  human: shown
})

export const create = Commands.endpoint("create", {
  examples: [
    ["A workspace template from a JSON file.", ["templates", "create", "Onboarding", "--kind", "workspace", "--file", "onboarding.json"]],
  ],
  summary: "Create a template from a JSON document (any member); you keep manager access to it.",
  details: [
    "The document comes from --file (`-`: standard input) and may be any JSON value of at most 256 KiB as compact JSON. With --schema-version it is validated against the JSON Schema the server has registered under that name, if any."
  ],
  inputs: {
    name: Inputs.argument("name", { schema: CreateTemplateRequest.fields.name }),
    kind: Inputs.text("kind", { description: "What the template is for: workspace, …", schema: TemplateKindName }),
    file: file(true),
    description: Inputs.optional(Inputs.text("description", { description: "What the template is for, in words." })),
    schemaVersion: Inputs.optional(Inputs.text("schema-version", { description: "The document's format version.", schema: TemplateSchemaVersion }))
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const document = yield* readDocument(input.file)
      return yield* client.templates.create({
        payload: {
          name: input.name,
          kind: input.kind,
          document,
          ...Inputs.ifSome("description", input.description),
          ...Inputs.ifSome("schemaVersion", input.schemaVersion)
        }
      })
    }),
  output: TemplateResponse,
  human: ({ template }) => `Created template ${template.name} (${template.id}), ${version(template)}.`
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Describe a template.", ["templates", "update", exampleId("tpl"), "--description", "New hires' workspace"]],
  ],
  summary: "Change a template: its name, description or kind in place; a new document or schema version makes a new version.",
  details: ["Needs editor access: the creator, owners and admins have it, others through a grant. Earlier versions never change."],
  inputs: {
    templateId,
    name: Inputs.optional(Inputs.text("name", { description: "A new name.", schema: CreateTemplateRequest.fields.name })),
    description: Inputs.optional(Inputs.text("description", { description: "A new description." })),
    kind: Inputs.optional(Inputs.text("kind", { description: "A new kind.", schema: TemplateKindName })),
    file: Inputs.optional(file(false)),
    schemaVersion: Inputs.optional(Inputs.text("schema-version", {
      description: "The format version of the new version (its document: --file, else the latest one).",
      schema: TemplateSchemaVersion
    }))
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const document = Option.isSome(input.file) ? yield* readDocument(input.file.value) : undefined
      const payload = {
        ...Inputs.ifSome("name", input.name),
        ...Inputs.ifSome("description", input.description),
        ...Inputs.ifSome("kind", input.kind),
        ...Inputs.ifSome("schemaVersion", input.schemaVersion),
        ...(document === undefined ? {} : { document })
      }
      if (!Schema.is(UpdateTemplateRequest)(payload)) {
        return yield* new UsageError({ message: "give at least one of --name, --description, --kind, --file or --schema-version" })
      }
      return yield* client.templates.update({ params: { templateId: input.templateId }, payload })
    }),
  output: TemplateResponse,
  human: ({ template }) => `Updated template ${template.name} (${template.id}), now at ${version(template)}.`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: TemplateId })

export const del = Commands.endpoint("delete", {
  summary: "Delete a template (the creator, owners and admins; others with manager access).",
  inputs: { templateId },
  call: (client, { templateId }) => client.templates.delete({ params: { templateId } }).pipe(Effect.as({ ok: true as const, deleted: templateId })),
  output: Deleted,
  human: ({ deleted }) => `Deleted template ${deleted}; it answers 404 from now on.`
})

export const versions = Commands.list("versions", {
  summary: "List a template's versions, newest first.",
  noun: "versions",
  inputs: { templateId },
  call: (client, { templateId }, page) => client.templates.listVersions({ params: { templateId }, query: page }),
  output: TemplateVersionPage,
  columns: [
    ["id", (version) => version.id],
    ["number", (version) => String(version.number)],
    ["schema", (version) => version.schemaVersion ?? "-"],
    ["validated", (version) => (version.validated ? "yes" : "no")],
    ["bytes", (version) => String(version.sizeBytes)],
    ["created", (version) => Output.date(version.createdAt)]
  ]
})

export const instantiate = Commands.endpoint("instantiate", {
  summary: "Print a version's document (default: the latest) with its schema's defaults filled in.",
  details: ["Prints the resolved document alone, as JSON, so it can be piped or saved; --json prints it with the version it came from."],
  inputs: {
    templateId,
    version: Inputs.optional(Inputs.text("version-id", { placeholder: "<versionId>", description: "The version (tpv_…).", schema: TemplateVersionId }))
  },
  call: (client, { templateId, version }) =>
    client.templates.instantiate({ params: { templateId }, query: { ...Inputs.ifSome("versionId", version) } }),
  output: TemplateInstance,
  human: ({ document }) => JSON.stringify(document, null, 2)
})

export const grant = Commands.endpoint("grant", {
  examples: [
    ["Let a team use a template.", ["templates", "grant", exampleId("tpl"), "--role", "viewer", "--team", "tem_01m6dsg7e0f6xbks25eta8m5bm"]],
  ],
  summary: "Give a member, a team or the whole organization a role on a template (needs manager access).",
  details: ["viewer reads and instantiates it; editor also changes it; manager also deletes it and manages its grants. --org-wide needs an owner or admin."],
  inputs: {
    templateId,
    role: Inputs.choice("role", AccessRole.literals, { description: "viewer, editor or manager." }),
    ...granteeInputs
  },
  call: (client, { role, templateId, ...who }) =>
    Effect.flatMap(granteePayload(role, who), (payload) => client.templates.templateGrant({ params: { templateId }, payload })),
  output: TemplateAccessGrantResponse,
  human: ({ item }, { templateId }) => `Granted ${item.role} on template ${templateId} to ${grantee(item)} (grant ${item.id}).`
})

export const grants = Commands.list("grants", {
  summary: "List a template's grants, newest first (needs manager access).",
  noun: "grants",
  inputs: {
    templateId,
    includeRevoked: Inputs.boolean("include-revoked", { description: "Also list revoked grants." })
  },
  call: (client, { includeRevoked, templateId }, page) =>
    client.templates.templateListAccess({ params: { templateId }, query: { ...(includeRevoked ? { includeRevoked: true } : {}), ...page } }),
  output: TemplateAccessGrantPage,
  columns: grantColumns
})

const Revoked = Schema.Struct({ ok: Schema.Literal(true), template: TemplateId, revoked: TemplateAccessGrantId })

export const revoke = Commands.endpoint("revoke", {
  summary: "Revoke a grant of a template; it stops applying at once (needs manager access).",
  inputs: {
    templateId,
    grantId: Inputs.argument("grantId", { schema: TemplateAccessGrantId, description: "The grant (tpa_…), from 'templates grants'." })
  },
  call: (client, { grantId, templateId }) =>
    client.templates.templateRevoke({ params: { templateId, grantId } }).pipe(Effect.as({ ok: true as const, template: templateId, revoked: grantId })),
  output: Revoked,
  human: ({ revoked, template }) => `Revoked grant ${revoked} of template ${template}; it stops applying at once.`
})

export const templates = Commands.group(
  "templates",
  "The organization's shared templates: list, read, create, change, delete, their versions, instantiate, and share them with grants.",
  [list, get, create, update, del, versions, instantiate, grant, grants, revoke],
  [TemplatesApi]
)
