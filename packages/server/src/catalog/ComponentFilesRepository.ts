/**
 * Storage of the files a config object version carries (migration 0016): each version's list
 * (`config_object_version_files`) and the bytes, once per organization and SHA-256 (`component_file_contents`).
 */
import {
  ComponentFile,
  type ConfigObjectId,
  ConfigObjectVersionId,
  ComponentFileKind,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { findAll, findOne } from "../platform/Statements.js"

/** One row of a version's list, as written. */
export interface VersionFileRow {
  readonly path: string
  readonly kind: ComponentFileKind
  readonly size: number
  readonly sha256: string | null
  readonly mediaType: string
  readonly omitted: string | null
  readonly executable: boolean
}

const FileRow = Schema.Struct({
  path: Schema.String,
  kind: ComponentFileKind,
  size: Schema.Number,
  sha256: Schema.NullOr(Schema.String),
  mediaType: Schema.String,
  omitted: Schema.NullOr(Schema.String),
  executable: Schema.Boolean
})

const ContentRow = Schema.Struct({
  mediaType: Schema.String,
  sha256: Schema.String,
  content: Schema.Uint8Array
})

const make = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Stores bytes under their SHA-256, once (a second store of the same content changes nothing). */
    const storeContent = (input: {
      readonly organizationId: OrganizationId
      readonly sha256: string
      readonly content: Uint8Array
      readonly at: Date
    }) =>
      sql`INSERT INTO component_file_contents (organization_id, sha256, size, content, created_at)
            VALUES (${input.organizationId}, ${input.sha256}, ${input.content.byteLength}, ${input.content}, ${input.at})
            ON CONFLICT (organization_id, sha256) DO NOTHING`.pipe(Effect.asVoid)

    /** Writes a new version's list (its contents stored first). */
    const insertList = (organizationId: OrganizationId, versionId: ConfigObjectVersionId, files: ReadonlyArray<VersionFileRow>) => {
      const row = (file: VersionFileRow) => ({
        organizationId,
        configObjectVersionId: versionId,
        path: file.path,
        kind: file.kind,
        size: file.size,
        sha256: file.sha256,
        mediaType: file.mediaType,
        omitted: file.omitted,
        executable: file.executable
      })
      const [first, ...others] = files
      return first === undefined
        ? Effect.void
        : sql`INSERT INTO config_object_version_files ${sql.insert([row(first), ...others.map(row)])}`.pipe(Effect.asVoid)
    }

    const listRows = findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, versionId: ConfigObjectVersionId }),
      Result: FileRow,
      execute: ({ organizationId, versionId }) =>
        sql`SELECT path, kind, size, sha256, media_type, omitted, executable FROM config_object_version_files
              WHERE organization_id = ${organizationId} AND config_object_version_id = ${versionId}
              ORDER BY kind = 'file', path COLLATE "C"`
    })
    /** A version's list: its entry, then its files in path order. */
    const listOf = (organizationId: OrganizationId, versionId: ConfigObjectVersionId) =>
      Effect.map(listRows({ organizationId, versionId }), (rows) => rows.map((row) => new ComponentFile(row)))

    const latestRows = findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, configObjectId: Schema.String }),
      Result: FileRow,
      execute: ({ configObjectId, organizationId }) =>
        sql`SELECT f.path, f.kind, f.size, f.sha256, f.media_type, f.omitted, f.executable FROM config_object_version_files f
              WHERE f.organization_id = ${organizationId} AND f.config_object_version_id = (
                SELECT v.id FROM config_object_versions v
                WHERE v.organization_id = ${organizationId} AND v.config_object_id = ${configObjectId}
                ORDER BY v.number DESC LIMIT 1)
              ORDER BY f.kind = 'file', f.path COLLATE "C"`
    })
    /** The list of an object's latest version (what a sync compares a component's files with). */
    const latestListOf = (organizationId: OrganizationId, configObjectId: ConfigObjectId) =>
      latestRows({ organizationId, configObjectId })

    const contentRow = findOne({
      Request: Schema.Struct({ organizationId: OrganizationId, versionId: ConfigObjectVersionId, path: Schema.String }),
      Result: ContentRow,
      execute: ({ organizationId, path, versionId }) =>
        sql`SELECT f.media_type, c.sha256, c.content FROM config_object_version_files f
              JOIN component_file_contents c ON c.organization_id = f.organization_id AND c.sha256 = f.sha256
              WHERE f.organization_id = ${organizationId} AND f.config_object_version_id = ${versionId}
                AND f.path = ${path} AND f.kind = 'file'`
    })
    /** A stored file's bytes; none for a path the version does not list, its entry or an omitted file. */
    const contentOf = (organizationId: OrganizationId, versionId: ConfigObjectVersionId, path: string) =>
      contentRow({ organizationId, versionId, path })

    return { storeContent, insertList, listOf, latestListOf, contentOf } as const
  })

export class ComponentFilesRepository extends Context.Service<ComponentFilesRepository>()("@orgplane/server/catalog/ComponentFilesRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
