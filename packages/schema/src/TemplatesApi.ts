/** Templates: the organization's shared templates, with immutable versions, access grants and an instantiate read. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { TemplateAccessGrantPage, TemplateAccessGrantResponse, TemplateGrantPath } from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import { MaxBodyBytes } from "./BodyLimit.js"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import {
  CreateTemplateRequest,
  InstantiateTemplateQuery,
  TemplateInstance,
  TemplateListQuery,
  TemplatePage,
  TemplatePath,
  TemplateResponse,
  TemplateVersionListQuery,
  TemplateVersionPage,
  TemplateVersionPath,
  TemplateVersionResponse,
  UpdateTemplateRequest
} from "./Templates.js"
import { audits } from "./AuditCatalog.js"

/**
 * A document may be 256 KiB as compact JSON; the body that carries it may be indented and escape more (a control
 * character is 6 bytes as `\u001f`), so these operations take 1 MiB whatever the server's default.
 */
export const TEMPLATE_BODY_BYTES = 1024 * 1024

const documentErrors =
  "400 `invalid_request` for a bad member (every one listed with its path); for a document over 256 KiB as compact JSON (path `document`), nested deeper than 64 levels in the body, or with NUL or a lone surrogate in a string; and, when a JSON Schema is registered for the `schemaVersion`, one detail per violation with `code` `schema_violation`, the path under `document`, the JSON Schema `keyword` and its message; 413 `payload_too_large` for a body over 1 MiB"

const access = accessEndpoints({
  name: "template",
  kind: "template",
  base: "/v1/templates/:templateId",
  path: TemplatePath,
  grantPath: TemplateGrantPath,
  grant: TemplateAccessGrantResponse,
  page: TemplateAccessGrantPage,
  action: "templates.read"
})

// Each endpoint lists 403 (Effect 4 has no group-wide error).
export class TemplatesApi extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.post("create", "/v1/templates", {
      payload: CreateTemplateRequest,
      success: TemplateResponse.pipe(HttpApiSchema.status(201)),
      error: [ForbiddenResponse]
    }).pipe(audits("template.create"), requires("templates.create"))
      .annotate(MaxBodyBytes, TEMPLATE_BODY_BYTES)
      .annotate(OpenApi.Summary, "Create a template")
      .annotate(
        OpenApi.Description,
        `Creates a template with its first version and answers it with its document. The template is private to its creator, who keeps manager access to it (as do owners and admins); share it with grants to members, teams or (owners and admins) the whole organization. When a JSON Schema is registered for \`schemaVersion\` (the server's \`ORGPLANE_TEMPLATE_SCHEMAS_DIR\`) the document must be valid against it; a \`schemaVersion\` nothing is registered for is accepted and stored unvalidated (\`validated: false\`).\n\nErrors: ${documentErrors}.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/templates", {
      query: TemplateListQuery,
      success: TemplatePage,
      error: [ForbiddenResponse]
    }).pipe(requires("templates.read"))
      .annotate(OpenApi.Summary, "List templates")
      .annotate(
        OpenApi.Description,
        "The templates the caller can view (owners and admins: all of them; others: those they created or were granted), newest first, each with its latest version (without the document); `q` matches words of the name (each word as a word or the start of one), `kind` one kind. Deleted templates are not listed. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/templates/:templateId", {
      params: TemplatePath,
      success: TemplateResponse,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("templates.read"))
      .annotate(OpenApi.Summary, "Get a template")
      .annotate(
        OpenApi.Description,
        "One template with its latest version's document. Needs viewer access: a template the caller cannot view answers 404 like a missing one. Changes nothing.\n\nErrors: 404 `template_not_found` for an unknown, deleted, not visible or another organization's template."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/templates/:templateId", {
      params: TemplatePath,
      payload: UpdateTemplateRequest,
      success: TemplateResponse,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("template.update"), requires("templates.read"))
      .annotate(MaxBodyBytes, TEMPLATE_BODY_BYTES)
      .annotate(OpenApi.Summary, "Update a template")
      .annotate(
        OpenApi.Description,
        `Changes the template's name, description or kind in place, and makes a new version when \`document\` or \`schemaVersion\` is given (the other one taken from the latest version): earlier versions never change. The new version's document is validated as on creation. Answers the template with its latest document. Needs editor access (the creator, owners and admins have it; others through an \`editor\` or \`manager\` grant).\n\nErrors: ${documentErrors}; 403 \`insufficient_access\` for a caller who can view but not edit the template; 404 \`template_not_found\`.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/templates/:templateId", {
      params: TemplatePath,
      success: HttpApiSchema.NoContent,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("template.delete"), requires("templates.read"))
      .annotate(OpenApi.Summary, "Delete a template")
      .annotate(
        OpenApi.Description,
        "Soft-deletes the template: from then on it answers 404 and is not listed; its versions and grants are kept in the database. Needs manager access (the creator, owners and admins have it; others through a `manager` grant).\n\nErrors: 403 `insufficient_access` for a caller who can view but not manage the template; 404 `template_not_found`, also for one already deleted."
      )
  )
  .add(
    HttpApiEndpoint.get("listVersions", "/v1/templates/:templateId/versions", {
      params: TemplatePath,
      query: TemplateVersionListQuery,
      success: TemplateVersionPage,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("templates.read"))
      .annotate(OpenApi.Summary, "List template versions")
      .annotate(
        OpenApi.Description,
        "The template's versions, newest first, without their documents. Needs viewer access. Changes nothing.\n\nErrors: 404 `template_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.get("getVersion", "/v1/templates/:templateId/versions/:versionId", {
      params: TemplateVersionPath,
      success: TemplateVersionResponse,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("templates.read"))
      .annotate(OpenApi.Summary, "Get a template version")
      .annotate(
        OpenApi.Description,
        "One version with its document, as it was stored. Needs viewer access. Changes nothing.\n\nErrors: 404 `template_not_found`, `template_version_not_found` for a version that is not one of the template's."
      )
  )
  .add(
    HttpApiEndpoint.get("instantiate", "/v1/templates/:templateId/instantiate", {
      params: TemplatePath,
      query: InstantiateTemplateQuery,
      success: TemplateInstance,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("templates.read"))
      .annotate(OpenApi.Summary, "Instantiate a template")
      .annotate(
        OpenApi.Description,
        "A version's document (default: the latest version's) resolved for use: when a JSON Schema is registered for the version's `schemaVersion`, a copy with that schema's `default` values filled in where the document leaves a member out (as Ajv's `useDefaults` does: properties of objects the document has, not whole objects it lacks); otherwise the document as stored. Nothing else is substituted: templates carry no placeholder language. Needs viewer access. Changes nothing.\n\nErrors: 404 `template_not_found`, `template_version_not_found`."
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Templates")
  .annotate(
    OpenApi.Description,
    "The organization's shared templates (the desktop app's workspace templates): a name, a description, a kind and a JSON document of at most 256 KiB, optionally validated against the JSON Schema registered for its `schemaVersion`. Every change of the document makes a new immutable version. Any member creates templates; the creator, owners and admins change and delete them, and grants (`viewer`, `editor`, `manager`) to members, teams or the whole organization share them. A template the caller cannot view, a deleted one and another organization's answer 404 like a missing one; one they can view but not change answers 403 `insufficient_access` to a change. Template ids are `tpl_` TypeIDs, version ids `tpv_` (a malformed one is a 400). Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
