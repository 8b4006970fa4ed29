/** Config objects: versioned configuration items with immutable versions and access grants. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import {
  ConfigObjectAccessGrantPage,
  ConfigObjectAccessGrantResponse,
  ConfigObjectGrantPath
} from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import { MaxBodyBytes } from "./BodyLimit.js"
import {
  ComponentFileList,
  ComponentFileQuery,
  MAX_COMPONENT_FILE_BYTES,
  MAX_COMPONENT_FILES,
  MAX_COMPONENT_FILES_BYTES
} from "./ComponentFiles.js"
import {
  ConfigObjectDetail,
  ConfigObjectListQuery,
  ConfigObjectPage,
  ConfigObjectPath,
  ConfigObjectResponse,
  ConfigObjectVersionDetail,
  ConfigObjectVersionPage,
  ConfigObjectVersionPath,
  CreateConfigObjectRequest,
  CreateVersionRequest,
  VersionListQuery
} from "./ConfigObjects.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

/** A version's source may be 1 MiB of text; its JSON form, escaped, and the rest of the body fit in 4 MiB. */
/**
 * A file is served with its own media type (`ComponentFile.mediaType`: by extension, else text or bytes), which the
 * platform's generator cannot say: the document declares the success as any media type (`*\/*`), its body the
 * file's bytes.
 */
const anyMediaType = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = operation.responses
  const ok = typeof responses === "object" && responses !== null ? Reflect.get(responses, "200") : undefined
  const content = typeof ok === "object" && ok !== null ? Reflect.get(ok, "content") : undefined
  if (typeof content !== "object" || content === null) return operation
  const bytes: unknown = Reflect.get(content, "application/octet-stream")
  if (bytes === undefined) return operation
  Reflect.set(ok, "content", { "*/*": bytes })
  return operation
}

const SOURCE_BODY_BYTES = 4 * 1024 * 1024

const access = accessEndpoints({
  name: "configObject",
  kind: "config object",
  base: "/v1/config-objects/:configObjectId",
  path: ConfigObjectPath,
  grantPath: ConfigObjectGrantPath,
  grant: ConfigObjectAccessGrantResponse,
  page: ConfigObjectAccessGrantPage
})

const lifecycle = <const Name extends "archive" | "restore">(name: Name, summary: string, description: string, errors: string) =>
  HttpApiEndpoint.post(name, `/v1/config-objects/:configObjectId/${name}`, { params: ConfigObjectPath, success: ConfigObjectResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits(`config_object.${name}`), requires("catalog.read"))
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, `${description} Needs manager access.\n\nErrors: 403 \`insufficient_access\`; 404 \`config_object_not_found\`${errors}.`)

export class ConfigObjectsApi extends HttpApiGroup.make("configObjects")
  .add(
    HttpApiEndpoint.post("create", "/v1/config-objects", { payload: CreateConfigObjectRequest, success: ConfigObjectResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse] }).pipe(audits("config_object.create"))
      .annotate(MaxBodyBytes, SOURCE_BODY_BYTES)
      .pipe(requires("catalog.create"))
      .annotate(OpenApi.Summary, "Create a config object (skill, agent, command, hook, ...)")
      .annotate(
        OpenApi.Description,
        [
          "Creates a private config object with its first version, reads its source with the parser of its type (`input.parserMode` chooses where several fit, see `ParserMode`), and answers it with `latestVersion`. The object's title, description and search text come from the source: a skill's front matter `name` and `description`; otherwise `metadata.title`/`metadata.name`, the payload's `title`/`name`, or the source's first line. The creator gets manager access; `pluginIds` adds it to those plugins in the same step.",
          "Skills are Markdown with YAML front matter: `name` 1 to 64 characters of lowercase letters and digits in words joined by single hyphens (`deploy-to-staging`), `description` 1 to 1024 characters, and a body. `mcp` and `hook` sources are JSON (or YAML) objects; an `mcp` object's servers (under `mcpServers` or `mcp`, or the object itself) each need a `url` or a `command`.",
          "`normalizedPayloadJson` instead of `rawSourceText` gives the content as an object: it is kept as it is, parser `json`, with its pretty JSON as the version's source (then `parserMode` may only be `json`). Skills refuse it (`invalid_skill_source`): they are read from their Markdown.",
          "Errors: 400 `invalid_request` for a source its parser refuses, with the path of the bad member under `input.rawSourceText` (or `input.normalizedPayloadJson`, or `input.parserMode`) and a `code` (`invalid_skill_frontmatter`, `invalid_skill_name`, `invalid_skill_description`, `invalid_skill_body`, `invalid_skill_source`, `invalid_json`, `invalid_yaml`, `invalid_mcp_server`, `parser_not_allowed`, `payload_too_deep` beyond 64 levels of nesting, `payload_too_large` for an object over 1 MiB as JSON, `invalid_character` for NUL or a lone surrogate in parsed content); 400 `invalid_request` on `input.sourceMode` for `connector` (connector-sourced objects come from a connector sync), and on `pluginIds[i]` for each plugin id that is not one of the organization's or is of a deleted plugin (the spec lists no 404 or 409 for this operation); 403 `insufficient_access` without editor access on a plugin."
        ].join("\n\n")
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/config-objects", { query: ConfigObjectListQuery, success: ConfigObjectPage, error: [ForbiddenResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List config objects")
      .annotate(
        OpenApi.Description,
        "The config objects the caller can view (owners and admins: all), newest first, each with its latest version; filtered by type, status, source mode, plugin, connector instance or text. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/config-objects/:configObjectId", { params: ConfigObjectPath, success: ConfigObjectDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "Get a config object")
      .annotate(
        OpenApi.Description,
        "One config object with its latest version, deleted ones included. Needs viewer access. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `config_object_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("createVersion", "/v1/config-objects/:configObjectId/versions", { params: ConfigObjectPath, payload: CreateVersionRequest, success: ConfigObjectResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("config_object.version.create"))
      .annotate(MaxBodyBytes, SOURCE_BODY_BYTES)
      .pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "Add a config object version")
      .annotate(
        OpenApi.Description,
        "Adds a version with new content (read as on creation, by the object's type) and answers the object, whose title, description and search text follow the new version. Earlier versions never change. Needs editor access.\n\nErrors: 400 `invalid_request` for a source its parser refuses (as on creation); 403 `insufficient_access`; 404 `config_object_not_found`; 409 `config_object_deleted` for a deleted object (restore it first)."
      )
  )
  .add(
    HttpApiEndpoint.get("listVersions", "/v1/config-objects/:configObjectId/versions", { params: ConfigObjectPath, query: VersionListQuery, success: ConfigObjectVersionPage, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List config object versions")
      .annotate(
        OpenApi.Description,
        "The object's versions, newest first; versions that record a deletion only with `includeDeleted=true`. Needs viewer access. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `config_object_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.get("getVersion", "/v1/config-objects/:configObjectId/versions/:versionId", { params: ConfigObjectVersionPath, success: ConfigObjectVersionDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "Get a config object version")
      .annotate(
        OpenApi.Description,
        "One version of the object. Needs viewer access. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `config_object_not_found`, `config_object_version_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.get("listVersionFiles", "/v1/config-objects/:configObjectId/versions/:versionId/files", { params: ConfigObjectVersionPath, success: ComponentFileList, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List a config object version's files")
      .annotate(
        OpenApi.Description,
        [
          "The files of one version as a connector sync stored them from the repository: the component's entry file (its content is the version's `rawSourceText`), then the files it carries: for a skill every file of its folder (`references/`, `scripts/`, assets, binary files included) except those of a skill nested in it; for hooks and MCP servers every file of their plugin's folder, as Claude Code installs a plugin (a hook script imports the modules beside it); for any component the files its text names under `${CLAUDE_PLUGIN_ROOT}/` (a named folder gives its files). A file several components carry is listed by each. Paths are relative to the plugin's folder, so a desktop writes them all under one folder to lay the plugin out as the repository has it.",
          `Limits: a file over ${MAX_COMPONENT_FILE_BYTES} bytes, or one that would take the version's stored files past ${MAX_COMPONENT_FILES_BYTES} bytes, is listed with \`omitted\` and not stored; so is a named file missing from the repository. A version carries at most ${MAX_COMPONENT_FILES} files (the rest are reported in the sync's warnings). Versions made by hand list nothing. Needs viewer access. Changes nothing.`,
          "Errors: 403 `insufficient_access`; 404 `config_object_not_found`, `config_object_version_not_found`."
        ].join("\n\n")
      )
  )
  .add(
    HttpApiEndpoint.get("getVersionFile", "/v1/config-objects/:configObjectId/versions/:versionId/files/content", {
      params: ConfigObjectVersionPath,
      query: ComponentFileQuery,
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/octet-stream" })).annotate({
        examples: [new TextEncoder().encode("#!/bin/sh\nset -e\n./deploy.sh staging\n")]
      }),
      error: [ForbiddenResponse, NotFoundResponse]
    }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Transform, anyMediaType)
      .annotate(OpenApi.Summary, "Get a config object version's file")
      .annotate(
        OpenApi.Description,
        "The stored bytes of one file of the version's list, exactly as the repository has them, with the file's `mediaType` as `Content-Type` and its SHA-256 in `ETag`. Needs viewer access. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `config_object_not_found`, `config_object_version_not_found`, `config_object_file_not_found` for a path the version does not list, its entry (read `rawSourceText`) or an omitted file."
      )
  )
  .add(
    lifecycle(
      "archive",
      "Archive a config object",
      "Sets the object's status to `archived`: it stays readable and listed, and its plugins stop using it (their manifests leave it out). Archiving an archived object changes nothing.",
      "; 409 `config_object_deleted` for a deleted object (restore it first)"
    )
  )
  .add(
    lifecycle(
      "restore",
      "Restore a config object",
      "Makes an archived or deleted object `active` again. Restoring a deleted one adds a version with the content it had before it was deleted. Restoring an active object changes nothing.",
      ""
    )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/config-objects/:configObjectId", { params: ConfigObjectPath, success: ConfigObjectResponse, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("config_object.delete"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Delete a config object")
      .annotate(
        OpenApi.Description,
        "Soft-deletes the object: status `deleted`, `deletedAt` set, and a version with `isDeletedVersion` records it; its versions, grants and plugin memberships are kept, so restoring brings it back whole. Deleting a deleted object changes nothing. Answers the object. Needs manager access.\n\nErrors: 403 `insufficient_access`; 404 `config_object_not_found`."
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Config objects")
  .annotate(
    OpenApi.Description,
    "Versioned configuration items of the caller's organization: skills, agents, commands, tools, MCP server definitions, hooks, context and custom items. Each keeps an immutable version history. Access is per object: owners and admins manage every object; other members need a grant (direct, through a team, or organization-wide), and may also view the objects of plugins they can view. A member without the access an operation needs gets 403 `insufficient_access`; another organization's object answers 404 like a missing one. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
