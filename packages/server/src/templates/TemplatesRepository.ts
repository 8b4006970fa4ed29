/**
 * Storage of templates and their versions, always by organization; deleted templates are read as missing.
 */
import {
  MembershipId,
  OrganizationId,
  Template,
  TemplateId,
  type TemplateListQuery,
  TemplateVersion,
  TemplateVersionId,
  type TemplateVersionListQuery
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute } from "../platform/Statements.js"

export class TemplateRow extends Model.Class<TemplateRow>("TemplateRow")({
  id: Model.GeneratedByApp(TemplateId),
  organizationId: OrganizationId,
  name: Template.fields.name,
  description: Template.fields.description,
  kind: Template.fields.kind,
  latestVersion: Schema.Int,
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

export class TemplateVersionRow extends Model.Class<TemplateVersionRow>("TemplateVersionRow")({
  id: Model.GeneratedByApp(TemplateVersionId),
  organizationId: OrganizationId,
  templateId: TemplateId,
  number: TemplateVersion.fields.number,
  schemaVersion: TemplateVersion.fields.schemaVersion,
  validated: TemplateVersion.fields.validated,
  /** The document as compact JSON text: stored as given (a `json` column keeps its member order). */
  document: Schema.String,
  sizeBytes: TemplateVersion.fields.sizeBytes,
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn
}) {}

/** A statement's row: columns camel-cased by the client. */
interface Row {
  readonly [column: string]: unknown
}

/** A template as read, with the caller's rank on it (`Access.rank`: 0 none, 1 viewer, 2 editor, 3 manager). */
export interface RankedTemplate {
  readonly template: Template
  readonly rank: number
}

/** Newest first; ids break ties between templates made in the same millisecond. */
const newestFirst = Keyset.make<Template>("templates", "desc", [
  { column: "t.created_at", value: (template) => template.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "t.id", value: (template) => template.id }
])

const versionsNewestFirst = Keyset.make<TemplateVersion>("template_versions", "desc", [
  { column: "v.number", value: (version) => String(version.number), compare: (value, sql) => sql`${value}::integer` }
])

/** A version from its columns; with a `prefix`, from `<prefix>_<column>` (camel-cased by the client). */
const toVersion = (row: Row, prefix?: string): TemplateVersion => {
  const get = (name: string) => row[prefix === undefined ? name : prefix + name.charAt(0).toUpperCase() + name.slice(1)]
  return new TemplateVersion(
    {
      id: get("id") as TemplateVersion["id"],
      templateId: get("templateId") as TemplateId,
      number: get("number") as number,
      schemaVersion: get("schemaVersion") as string | null,
      validated: get("validated") as boolean,
      sizeBytes: get("sizeBytes") as number,
      createdByOrgMembershipId: get("createdByOrgMembershipId") as TemplateVersion["createdByOrgMembershipId"],
      createdAt: get("createdAt") as Date
    },
    { disableChecks: true }
  )
}

/** The row of `select` as the API's resource (trusted: our own tables; the response schema checks it on the way out). */
const toTemplate = (row: Row): Template =>
  new Template(
    {
      id: row.id as TemplateId,
      organizationId: row.organizationId as OrganizationId,
      name: row.name as string,
      description: row.description as string,
      kind: row.kind as string,
      latestVersion: toVersion(row, "v"),
      createdByOrgMembershipId: row.createdByOrgMembershipId as Template["createdByOrgMembershipId"],
      createdAt: row.createdAt as Date,
      updatedAt: row.updatedAt as Date
    },
    { disableChecks: true }
  )

/** A JSON column read as text (`document::text`) and parsed here: the client's name transform would camel-case its members. */
const parseDocument = (text: unknown): Schema.Json => JSON.parse(String(text))

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const versionColumns = (alias: string, prefix?: string) => {
    const as = (column: string) => sql.literal(prefix === undefined ? column : `${prefix}_${column}`)
    const a = sql.literal(alias)
    return sql`${a}.id AS ${as("id")}, ${a}.template_id AS ${as("template_id")}, ${a}.number AS ${as("number")},
        ${a}.schema_version AS ${as("schema_version")}, ${a}.validated AS ${as("validated")}, ${a}.size_bytes AS ${as("size_bytes")},
        ${a}.created_by_membership_id AS ${as("created_by_org_membership_id")}, ${a}.created_at AS ${as("created_at")}`
  }

  /** Templates (alias `t`) with their latest version (alias `v`, without its document), and `extra` columns. */
  const select = (extra: Statement.Fragment = sql``) => sql`
      SELECT t.id, t.organization_id, t.name, t.description, t.kind,
             t.created_by_membership_id AS created_by_org_membership_id, t.created_at, t.updated_at, ${versionColumns("v", "v")}${extra}
      FROM templates t
      JOIN template_versions v ON v.organization_id = t.organization_id AND v.template_id = t.id AND v.number = t.latest_version`

  const insert = execute({
    Request: TemplateRow.insert,
    execute: (row) => sql`INSERT INTO templates ${sql.insert({ ...row, deletedAt: null })}`
  })

  const insertVersion = execute({
    Request: TemplateVersionRow.insert,
    execute: (row) =>
      sql`INSERT INTO template_versions (organization_id, id, template_id, number, schema_version, validated, document, size_bytes,
                                           created_by_membership_id, created_at)
            VALUES (${row.organizationId}, ${row.id}, ${row.templateId}, ${row.number}, ${row.schemaVersion}, ${row.validated},
                    ${row.document}::json, ${row.sizeBytes}, ${row.createdByMembershipId}, ${row.createdAt})`
  })

  /**
   * A live template of the organization with the caller's rank on it (`rank`, an `Access.rank` fragment over alias
   * `t`); none when missing or deleted. With `lock` its row stays locked for the transaction.
   */
  const find = (organizationId: OrganizationId, id: TemplateId, rank: Statement.Fragment, lock = false) =>
    sql<Row>`${select(sql`, ${rank} AS access_rank`)}
               WHERE t.organization_id = ${organizationId} AND t.id = ${id} AND t.deleted_at IS NULL
               ${lock ? sql`FOR UPDATE OF t` : sql``}`.pipe(
      Effect.map((rows): Option.Option<RankedTemplate> =>
        Option.map(Option.fromNullishOr(rows[0]), (row) => ({ template: toTemplate(row), rank: Number(row.accessRank) })))
    )

  /**
   * Every live template of the organization with its latest version's format and document, whoever reads (the
   * organization's document checks authority).
   */
  const latest = (organizationId: OrganizationId) =>
    sql<{ id: TemplateId; name: string; description: string; kind: string; schemaVersion: string | null; document: string }>`
        SELECT t.id, t.name, t.description, t.kind, v.schema_version, v.document::text AS document
        FROM templates t
        JOIN template_versions v ON v.organization_id = t.organization_id AND v.template_id = t.id AND v.number = t.latest_version
        WHERE t.organization_id = ${organizationId} AND t.deleted_at IS NULL ORDER BY lower(t.name), t.id`.pipe(
      Effect.map((rows) => rows.map((row) => ({ ...row, document: parseDocument(row.document) })))
    )

  /** The document of one version, by number. */
  const document = (organizationId: OrganizationId, templateId: TemplateId, number: number) =>
    sql<{ document: string }>`SELECT document::text AS document FROM template_versions
                                WHERE organization_id = ${organizationId} AND template_id = ${templateId} AND number = ${number}`.pipe(
      Effect.map((rows) => parseDocument(rows[0]?.document))
    )

  /** One version of a template with its document; none when the template has no such version. */
  const findVersion = (organizationId: OrganizationId, templateId: TemplateId, versionId: TemplateVersionId) =>
    sql<Row>`SELECT ${versionColumns("v")}, v.document::text AS document FROM template_versions v
               WHERE v.organization_id = ${organizationId} AND v.template_id = ${templateId} AND v.id = ${versionId}`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullishOr(rows[0]), (row) => ({ version: toVersion(row), document: parseDocument(row.document) }))
      )
    )

  /** Changes what is given, and points the template at its newest version. */
  const update = (
    organizationId: OrganizationId,
    id: TemplateId,
    changes: { readonly name: string; readonly description: string; readonly kind: string; readonly latestVersion: number },
    at: Date
  ) =>
    sql`UPDATE templates SET name = ${changes.name}, description = ${changes.description}, kind = ${changes.kind},
            latest_version = ${changes.latestVersion}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

  const softDelete = (organizationId: OrganizationId, id: TemplateId, at: Date) =>
    sql`UPDATE templates SET deleted_at = ${at}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL`

  /**
   * Every word of `q` as a word of the name or the start of one, over the name's GIN index. Each word is quoted as a
   * tsquery operand, so no tsquery syntax gets through (as config objects' search).
   */
  const matches = (q: string) => {
    const words = q.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).slice(0, 32)
    if (words.length === 0) return sql`false`
    const query = words.map((word) => `'${word.replace(/\\/g, "\\\\").replace(/'/g, "''")}':*`).join(" & ")
    return sql`to_tsvector('simple', t.name) @@ to_tsquery('simple', ${query})`
  }

  /** A page of the organization's live templates that `visible` (an `Access.visible` fragment over alias `t`) lets through. */
  const list = (organizationId: OrganizationId, visible: Statement.Fragment, query: TemplateListQuery) =>
    Keyset.page(newestFirst, query, (page) =>
      sql<Row>`${select()} WHERE ${
          sql.and([
            sql`t.organization_id = ${organizationId}`,
            sql`t.deleted_at IS NULL`,
            query.kind !== undefined ? sql`t.kind = ${query.kind}` : sql`true`,
            query.q !== undefined ? matches(query.q) : sql`true`,
            visible,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toTemplate))))

  const listVersions = (organizationId: OrganizationId, id: TemplateId, query: TemplateVersionListQuery) => {
    // The cursor is bound to the template too: one template's cursor cannot page another's versions.
    const bound = { ...query, templateId: id }
    return Keyset.page(versionsNewestFirst, bound, (page) =>
      sql<Row>`SELECT ${versionColumns("v")} FROM template_versions v WHERE ${
          sql.and([sql`v.organization_id = ${organizationId}`, sql`v.template_id = ${id}`, page.after])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map((row) => toVersion(row)))))
  }

  return { insert, insertVersion, find, latest, document, findVersion, update, softDelete, list, listVersions } as const
})

export class TemplatesRepository extends Context.Service<TemplatesRepository>()("@orgplane/server/templates/TemplatesRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
