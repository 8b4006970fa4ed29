/**
 * `orgplane config export | plan | apply | drift`: the active organization as one document (organization as code),
 * printed as JSON to keep in a file and review as a pull request; what a document would change, as the server plans
 * it; that plan applied, given the hash the plan printed; and what changed since, by whom. Owners and admins.
 * docs/config-as-code.md has the document's rules.
 */
import {
  AppliedPlan,
  DocumentDrift,
  OrganizationDocument,
  OrganizationDocumentApi,
  OrganizationPlan,
  PLAN_BODY_BYTES,
  PlanHash
} from "@orgplane/schema"
import * as CliError from "effect/cli/CliError"
import * as Flags from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Yaml from "yaml"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Redacted from "effect/Redacted"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"

const encode = Schema.encodeSync(OrganizationDocument)

/** Where an editor finds the document's JSON Schema once `@orgplane/schema` is installed beside the file. */
const SCHEMA_PATH = "./node_modules/@orgplane/schema/organization-document.schema.json"


const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** A document's first problem, where it is (`members.0.role: …`), in the words of the API's schema. */
const firstProblem = (issue: SchemaIssue.Issue) => {
  const first = formatIssue(issue).issues[0]
  if (first === undefined) return "is not a document"
  const path = (first.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".")
  return path === "" ? first.message : `${path}: ${first.message}`
}

const invalidFile = (message: string) => new CliError.ValidationError({ message: `--file: ${message}` })

/** A document read and checked with the API's own schema (unknown members refused, as the API does). */
const decodeDocument = Schema.decodeUnknownEffect(OrganizationDocument, { onExcessProperty: "error" })

/** A file named `.yaml` or `.yml` holds YAML; any other (and stdin) JSON. */
const isYaml = (path: string) => /\.ya?ml$/i.test(path)

/** The file's text as a value: YAML or JSON by its name (YAML's core schema: no custom tags, no dates). */
const parseText = (path: string, text: string) =>
  Effect.try({
    try: () => (isYaml(path) ? Yaml.parse(text, { schema: "core", merge: false, maxAliasCount: 0 }) : JSON.parse(text)),
    catch: (error) => invalidFile(`is not ${isYaml(path) ? "YAML" : "JSON"}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
  })

/** `--file <path>`: the document (`-` reads stdin), read while parsing, so a bad one is a usage error naming where. */
const documentFile: Inputs.Flag<OrganizationDocument> = {
  parser: Flags.String("file").pipe(
    Flags.mapEffect((path) =>
      Effect.gen(function*() {
        const text = yield* Effect.mapError(Files.readFileOrStdin(path, PLAN_BODY_BYTES, "8 MiB, the API's body limit for a document"), invalidFile)
        const value = yield* parseText(path, text)
        return yield* Effect.mapError(decodeDocument(value), (error) => invalidFile(firstProblem(error.issue)))
      })
    )
  ),
  doc: {
    kind: "flag",
    name: "file",
    placeholder: "<path>",
    example: "acme.yaml",
    description: "The document, as YAML (a `.yaml` or `.yml` file) or JSON (`orgplane config export` writes either); `-` reads JSON from stdin. Its secrets are references (`env:NAME`, `file:PATH`), read by `apply` where it runs.",
    optional: false,
    repeated: false
  }
}

/** The largest secret file read: an API key's limit, and a trailing newline. */
const SECRET_FILE_BYTES = 8194

/**
 * A secret's value, read where its source points (`env:NAME`, `file:PATH`, the file without one trailing newline):
 * here, by the applier, never by the server.
 */
const readSecret = (source: string) =>
  source.startsWith("env:")
    ? Effect.flatMap(Effect.orDie(CliConfig.optionalSecret(source.slice(4))), (found) =>
      found._tag === "Some"
        ? Effect.succeed(Redacted.value(found.value))
        : Effect.fail(new UsageError({ message: `${source}: the environment variable is not set (the plan writes this secret)` })))
    : Files.readFile(source.slice(5), SECRET_FILE_BYTES, "8 KiB, a secret's limit").pipe(
      Effect.map((text) => text.replace(/\r?\n$/, "")),
      Effect.mapError((problem) => new UsageError({ message: `${source}: ${problem}` }))
    )

/** Whether the document names any secret (an LLM provider's API key or headers, an MCP connection's key or client secret). */
const namesSecrets = (document: OrganizationDocument) =>
  (document.llmProviders ?? []).some((provider) => provider.apiKey !== null || provider.headers.length > 0) ||
  (document.mcpConnections ?? []).some((connection) => connection.apiKey !== null || (connection.oauth?.clientSecret ?? null) !== null)

export const exportDocument = Commands.endpoint("export", {
  summary: "Print the active organization as its document (JSON, or YAML with --yaml): settings, people, teams and the resources it holds, secrets as references.",
  inputs: {
    yaml: Inputs.boolean("yaml", {
      description: "Print it as YAML, with the line that points editors at its JSON Schema; without, JSON (what --json prints too)."
    })
  },
  call: (client) => client.organizationDocument.export(),
  output: OrganizationDocument,
  // The document is what both forms print: the same JSON, indented, or the same values as YAML.
  human: (document, { yaml }) =>
    yaml
      ? `# yaml-language-server: $schema=${SCHEMA_PATH}\n${Yaml.stringify(encode(document), { lineWidth: 0 })}`.trimEnd()
      : JSON.stringify(encode(document), null, 2)
})

export const plan = Commands.endpoint("plan", {
  summary: "Show what applying a document would change (computed by the server; changes nothing).",
  inputs: { document: documentFile },
  call: (client, { document }) => client.organizationDocument.plan({ payload: { document } }),
  output: OrganizationPlan,
  // The plan, then the hash `apply` is given to make exactly it.
  human: (planned) =>
    [
      planned.markdown.trimEnd(),
      "",
      ...(planned.secrets.length === 0 ? [] : [`The apply reads these secrets where it runs: ${planned.secrets.join(", ")}.`]),
      `Plan \`${planned.planHash}\`: apply it with \`orgplane config apply --file <path> --plan ${planned.planHash}\`.`
    ].join("\n")
})

export const apply = Commands.endpoint("apply", {
  summary: "Apply a document's plan, all or nothing, if the organization's plan of it is still the one given by --plan.",
  inputs: {
    document: documentFile,
    planHash: Inputs.text("plan", {
      placeholder: "<sha256:…>",
      description: "The plan's hash, as `orgplane config plan` printed it: the apply is refused (409 plan_stale) if the organization's plan of the document is no longer that one.",
      schema: PlanHash
    })
  },
  // The secrets the plan writes (only those) are read here and go with the apply; the plan says which.
  call: (client, { document, planHash }) =>
    Effect.gen(function*() {
      const sources = namesSecrets(document) ? (yield* client.organizationDocument.plan({ payload: { document } })).secrets : []
      const values = yield* Effect.forEach(sources, (source) => Effect.map(readSecret(source), (value) => [source, value] as const))
      return yield* client.organizationDocument.apply({
        payload: { document, planHash, ...(values.length === 0 ? {} : { secrets: values.map(([from, value]) => ({ from, value })) }) }
      })
    }),
  output: AppliedPlan,
  human: (applied) =>
    [
      applied.changes.length === 0
        ? "Nothing to apply: the organization already is the document."
        : `Applied ${applied.changes.length} change${applied.changes.length === 1 ? "" : "s"} (plan ${applied.planHash}):`,
      ...applied.changes.map((change) => `  ${change.action} ${change.kind} ${change.name}`),
      ...applied.inviteTokens.map(({ email, inviteToken }) => `Invitation for ${email}: ${inviteToken} (shown once: hand it to them).`),
      ...applied.apiKeys.map(({ key, name }) => `API key ${name}: ${key} (shown once: keep it where it is used).`),
      ...applied.auditStreamSecrets.map(({ secret, url }) => `Audit stream ${url} signs with: ${secret} (shown once: give it to the receiver).`),
      `Live state now ${applied.liveHash}.`
    ].join("\n")
})

export const drift = Commands.endpoint("drift", {
  summary: "Show what changed since the last applied document, field by field, with who changed it and through which credential.",
  inputs: {},
  call: (client) => client.organizationDocument.drift(),
  output: DocumentDrift,
  human: (found) => {
    if (found.applied === null) return "No document was applied to this organization: nothing to drift from."
    const head = `Applied plan ${found.applied.planHash} at ${found.applied.appliedAt.toISOString()}.`
    if (found.changes.length + found.problems.length === 0) return `${head}\nNo drift: the organization is the document.`
    const value = (json: unknown) => (json === undefined ? "absent" : JSON.stringify(json))
    return [
      head,
      `Drift (${found.changes.length + found.problems.length}):`,
      ...found.changes.flatMap((change) => [
        ...change.fields.map((field) => `  ${change.kind} ${change.name}: ${field.field} is ${value(field.before)}, the document says ${value(field.after)}`),
        change.changedBy === null
          ? "    changed by: not named in the audit log"
          : `    changed by: ${change.changedBy.actor.label ?? change.changedBy.actor.id} (${change.changedBy.actor.type} ${change.changedBy.actor.id}) via ${change.changedBy.credentialId ?? "no credential"}, ${change.changedBy.action} at ${change.changedBy.occurredAt.toISOString()} (${change.changedBy.eventId})`
      ]),
      ...found.problems.map((problem) => `  ${problem.path.join(".")}: ${problem.message}`)
    ].join("\n")
  }
})

export const config = Commands.group(
  "config",
  "The active organization as code: its document, exported, planned, applied and watched for drift (owners and admins).",
  [exportDocument, plan, apply, drift],
  [OrganizationDocumentApi]
)
