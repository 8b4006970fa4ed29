/**
 * Storage of LLM providers (`llm_providers`), always by organization. Rows carry the encrypted credential and
 * headers (`LlmProviderRow`); decrypt them with platform/Crypto.ts and never return or log what they hold. Readers
 * pass the SQL conditions of their access (`Reader`, from access/Access.ts) so lists filter in the database.
 */
import { Conflict, LlmModel, LlmProvider, LlmProviderId, MembershipId, OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import * as Keyset from "../platform/Keyset.js"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findAll, findOne } from "../platform/Statements.js"

/** A row of `llm_providers`, as stored (secrets encrypted). */
export class LlmProviderRow extends Model.Class<LlmProviderRow>("LlmProviderRow")({
  id: Model.GeneratedByApp(LlmProviderId),
  organizationId: LlmProvider.fields.organizationId,
  name: LlmProvider.fields.name,
  source: LlmProvider.fields.source,
  catalogProviderId: LlmProvider.fields.catalogProviderId,
  apiStyle: LlmProvider.fields.apiStyle,
  baseUrl: LlmProvider.fields.baseUrl,
  headerNames: LlmProvider.fields.headerNames,
  /** The extra headers as a JSON object, encrypted; null when there are none. */
  headersCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  /** Read as text (`models::text`) and parsed here: the driver's name transform would rewrite a parsed object's keys. */
  models: Schema.fromJsonString(Schema.Array(LlmModel)),
  credentialType: Schema.NullOr(Schema.Literals(["api_key", "oauth"])),
  /** `{apiKey}` or `{accessToken, refreshToken?}` as JSON, encrypted. */
  credentialCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  credentialExpiresAt: Schema.NullOr(DateColumn),
  credentialUpdatedAt: Schema.NullOr(DateColumn),
  lastUsedAt: Schema.NullOr(DateColumn),
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** A row as one reader sees it: with their rank on it (0 none … 3 manager) and whether a grant reaches them. */
export const LlmProviderView = Schema.Struct({
  ...LlmProviderRow.fields,
  accessRank: Schema.Number,
  usable: Schema.Boolean
})
export type LlmProviderView = typeof LlmProviderView.Type

/** What the read statements take besides the organization: SQL the service builds from the principal (alias `p`). */
export interface Reader {
  /** The reader's rank on the row (`Access.rank`). */
  readonly rank: Statement.Fragment
  /** Whether a grant reaches the reader (`Access.usable`). */
  readonly usable: Statement.Fragment
  /** Which rows a list shows. */
  readonly filter: Statement.Fragment
}

const ReaderRequest = Schema.declare((value: unknown): value is Reader => typeof value === "object" && value !== null)

/** Oldest first, over `llm_providers_list_idx`. */
const byCreation = Keyset.make<LlmProviderView>("llm_providers", "asc", [
  { column: "p.created_at", value: (row) => row.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "p.id", value: (row) => row.id }
])

export const providerExists = (name: string) =>
  new Conflict({ error: "llm_provider_exists", message: `The organization already has an LLM provider named "${name.slice(0, 100)}".` })

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: LlmProviderId })

/** The columns `update` may change; the credential has its own statement. */
export interface Changes {
  readonly name?: string | undefined
  readonly baseUrl?: string | undefined
  readonly headerNames?: ReadonlyArray<string> | undefined
  readonly headersCiphertext?: string | null | undefined
  readonly models?: ReadonlyArray<LlmModel> | undefined
}

export interface NewCredential {
  readonly credentialType: "api_key" | "oauth"
  readonly credentialCiphertext: string
  readonly credentialExpiresAt: Date | null
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** A text[] parameter (the driver's arrays would be spread by the statement compiler). */
  const textArray = (values: ReadonlyArray<string>) => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`

  const columns = sql`p.id, p.organization_id, p.name, p.source, p.catalog_provider_id, p.api_style, p.base_url, p.header_names,
      p.headers_ciphertext, p.models::text AS models, p.credential_type, p.credential_ciphertext, p.credential_expires_at,
      p.credential_updated_at, p.last_used_at, p.created_by_membership_id, p.created_at, p.updated_at`

  const insertStatement = execute({
    Request: LlmProviderRow.insert,
    execute: (row) =>
      sql`INSERT INTO llm_providers (id, organization_id, name, source, catalog_provider_id, api_style, base_url, header_names,
              headers_ciphertext, models, credential_type, credential_ciphertext, credential_expires_at, credential_updated_at,
              last_used_at, created_by_membership_id, created_at, updated_at)
            VALUES (${row.id}, ${row.organizationId}, ${row.name}, ${row.source}, ${row.catalogProviderId}, ${row.apiStyle},
              ${row.baseUrl}, ${textArray(row.headerNames)}, ${row.headersCiphertext}, ${row.models}::jsonb, ${row.credentialType},
              ${row.credentialCiphertext}, ${row.credentialExpiresAt}, ${row.credentialUpdatedAt}, ${row.lastUsedAt},
              ${row.createdByMembershipId}, ${row.createdAt}, ${row.updatedAt})`
  })

  /** A new provider; 409 `llm_provider_exists` for a name the organization has (ignoring case). */
  const insert = (row: typeof LlmProviderRow.insert.Type) => catchUniqueViolation(() => providerExists(row.name))(insertStatement(row))

  const viewStatement = findOne({
    Request: Schema.Struct({ ...Scoped.fields, reader: ReaderRequest }),
    Result: LlmProviderView,
    execute: ({ id, organizationId, reader }) =>
      sql`SELECT ${columns}, ${reader.rank} AS access_rank, ${reader.usable} AS usable FROM llm_providers p
            WHERE p.organization_id = ${organizationId} AND p.id = ${id}`
  })

  /** One provider with the reader's rank on it; none when missing or another organization's. */
  const view = (organizationId: OrganizationId, id: LlmProviderId, reader: Reader) => viewStatement({ organizationId, id, reader })

  const listStatement = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, page: Keyset.PageRequest, reader: ReaderRequest }),
    Result: LlmProviderView,
    execute: ({ organizationId, page, reader }) =>
      sql`SELECT ${columns}, ${reader.rank} AS access_rank, ${reader.usable} AS usable FROM llm_providers p
            WHERE ${sql.and([sql`p.organization_id = ${organizationId}`, reader.filter, page.after])}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /** A page of the providers `reader.filter` lets through, oldest first. */
  const list = (organizationId: OrganizationId, query: Keyset.PageQuery & { readonly scope?: string | undefined }, reader: Reader) =>
    Keyset.page(byCreation, query, (page) => listStatement({ organizationId, page, reader }))

  const allStatement = findAll({
    Request: OrganizationId,
    Result: LlmProviderRow,
    execute: (organizationId) =>
      sql`SELECT ${columns} FROM llm_providers p WHERE p.organization_id = ${organizationId} ORDER BY lower(p.name), p.id`
  })

  /** Every provider of the organization, whoever reads (the organization's document; its reader checks authority). */
  const all = (organizationId: OrganizationId) => allStatement(organizationId)

  const lockStatement = findOne({
    Request: Scoped,
    Result: LlmProviderRow,
    execute: ({ id, organizationId }) =>
      sql`SELECT ${columns} FROM llm_providers p WHERE p.organization_id = ${organizationId} AND p.id = ${id} FOR UPDATE`
  })

  /** The whole row, locked for the rest of the transaction. */
  const lock = (organizationId: OrganizationId, id: LlmProviderId) => lockStatement({ organizationId, id })

  const update = (organizationId: OrganizationId, id: LlmProviderId, changes: Changes, at: Date) => {
    const sets = [
      changes.name === undefined ? undefined : sql`name = ${changes.name}`,
      changes.baseUrl === undefined ? undefined : sql`base_url = ${changes.baseUrl}`,
      changes.headerNames === undefined ? undefined : sql`header_names = ${textArray(changes.headerNames)}`,
      changes.headersCiphertext === undefined ? undefined : sql`headers_ciphertext = ${changes.headersCiphertext}`,
      changes.models === undefined ? undefined : sql`models = ${JSON.stringify(changes.models)}::jsonb`,
      sql`updated_at = ${at}`
    ].filter((set) => set !== undefined)
    return catchUniqueViolation(() => providerExists(changes.name ?? ""))(
      sql`UPDATE llm_providers SET ${sql.csv(sets)} WHERE organization_id = ${organizationId} AND id = ${id}`
    )
  }

  const setCredential = (organizationId: OrganizationId, id: LlmProviderId, credential: NewCredential, at: Date) =>
    sql`UPDATE llm_providers SET credential_type = ${credential.credentialType}, credential_ciphertext = ${credential.credentialCiphertext},
            credential_expires_at = ${credential.credentialExpiresAt}, credential_updated_at = ${at}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

  /** `lastUsedAt`, moved forward only (two connects at once keep the later time). */
  const touch = (organizationId: OrganizationId, id: LlmProviderId, at: Date) =>
    sql`UPDATE llm_providers SET last_used_at = GREATEST(COALESCE(last_used_at, ${at}), ${at})
          WHERE organization_id = ${organizationId} AND id = ${id}`

  /** Deletes the provider; its grants cascade. Whether there was one. */
  const remove = (organizationId: OrganizationId, id: LlmProviderId) =>
    Effect.map(
      sql`DELETE FROM llm_providers WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`,
      (rows) => rows.length > 0
    )

  return { insert, view, list, all, lock, update, setCredential, touch, remove } as const
})

export class LlmProvidersRepository extends Context.Service<LlmProvidersRepository>()("@orgplane/server/llm/LlmProvidersRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
