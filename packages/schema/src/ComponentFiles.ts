/**
 * The files a component carries beside its entry file (a skill's `references/`, `scripts/` and assets, the whole
 * plugin folder of a hooks or MCP file, the files an agent or command names under `${CLAUDE_PLUGIN_ROOT}`), stored
 * with each version.
 */
import * as Schema from "effect/Schema"
import { exampleId } from "./Ids.js"
import { ConfigObjectId, ConfigObjectVersionId } from "./Ids.js"

/** A file the sync stores: larger ones are listed with `omitted` and not stored. */
export const MAX_COMPONENT_FILE_BYTES = 5 * 1024 * 1024
/** What the stored files of one component version may add up to; files past it are listed with `omitted`. */
export const MAX_COMPONENT_FILES_BYTES = 20 * 1024 * 1024
/** Files one component version lists; files past it (in path order) are left out and reported in the sync's warnings. */
export const MAX_COMPONENT_FILES = 500

export const ComponentFileKind = Schema.Literals(["entry", "file"]).annotate({
  description:
    "`entry`: the component's own file (its content is the version's `rawSourceText`); `file`: a file it carries, served by the file content operation."
})
export type ComponentFileKind = typeof ComponentFileKind.Type

export class ComponentFile extends Schema.Class<ComponentFile>("ComponentFile")(Schema.Struct({
  path: Schema.String.annotate({
    description:
      "Where the file goes, relative to the plugin's folder (what `${CLAUDE_PLUGIN_ROOT}` names): a desktop writes every file of a plugin's components at its path to lay the plugin out as the repository has it."
  }),
  kind: ComponentFileKind,
  size: Schema.Int.annotate({ description: "Bytes, as the repository has them." }),
  sha256: Schema.NullOr(Schema.String).annotate({
    description: "Hex SHA-256 of the stored bytes; null for an entry (see `rawSourceText`) or an omitted file."
  }),
  mediaType: Schema.String.annotate({
    description:
      "The media type the content is served with: by extension, else `text/plain; charset=utf-8` for UTF-8 text and `application/octet-stream` for other bytes."
  }),
  omitted: Schema.NullOr(Schema.String).annotate({
    description:
      "Why the file is listed but not stored (over a size limit, missing from the repository); null for a stored file."
  }),
  executable: Schema.Boolean.annotate({
    description:
      "Whether the repository has the file executable (git mode 100755, as hook scripts are): a desktop writes it with its execute bits set (0755), as `git clone` would."
  })
}).annotate({
  examples: [{
    path: "skills/deploy-to-staging/scripts/deploy.sh",
    kind: "file",
    size: 812,
    sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    mediaType: "text/x-shellscript",
    omitted: null,
    executable: true
  }]
})) {}

export const ComponentFileList = Schema.Struct({
  configObjectId: ConfigObjectId,
  versionId: ConfigObjectVersionId,
  items: Schema.Array(ComponentFile).annotate({
    description: `The version's entry first, then its files in path order; at most ${MAX_COMPONENT_FILES} files, so not paginated. Empty for a version not made by a connector sync.`
  })
}).annotate({
  identifier: "ComponentFileList",
  examples: [{
    configObjectId: exampleId("cob"),
    versionId: exampleId("cov"),
    // Instances: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
    items: [
      new ComponentFile({
        path: "skills/deploy-to-staging/SKILL.md",
        kind: "entry",
        size: 412,
        sha256: null,
        mediaType: "text/markdown; charset=utf-8",
        omitted: null,
        executable: false
      }),
      new ComponentFile({
        path: "skills/deploy-to-staging/scripts/deploy.sh",
        kind: "file",
        size: 812,
        sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        mediaType: "text/x-shellscript",
        omitted: null,
        executable: true
      })
    ]
  }]
})
export type ComponentFileList = typeof ComponentFileList.Type

export const ComponentFileQuery = Schema.Struct({
  path: Schema.String.annotate({ description: "The file's `path`, as the version's file list gives it." }).check(
    Schema.isMinLength(1, { message: "must be a file path of the version's list" }),
    Schema.isMaxLength(1024, { message: "must be at most 1024 characters long" }),
    // The document states only the bounds.
    Schema.makeFilter((path: string) => !path.includes("\u0000") || "must not contain the NUL character (U+0000)")
  )
}).annotate({ examples: [{ path: "skills/deploy-to-staging/scripts/deploy.sh" }] })
export type ComponentFileQuery = typeof ComponentFileQuery.Type
