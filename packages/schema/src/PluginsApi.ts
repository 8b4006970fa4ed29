/** Plugins: bundles of config objects, shared through access grants and listed in marketplaces. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { PluginAccessGrantPage, PluginAccessGrantResponse, PluginGrantPath } from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import {
  AddPluginConfigObjectRequest,
  CreatePluginRequest,
  MembershipListQuery,
  PluginConfigObjectPage,
  PluginConfigObjectPath,
  PluginConfigObjectResponse,
  PluginDetail,
  PluginListQuery,
  PluginPage,
  PluginPath,
  PluginResponse,
  UpdatePluginRequest
} from "./Plugins.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

const access = accessEndpoints({
  name: "plugin",
  kind: "plugin",
  base: "/v1/plugins/:pluginId",
  path: PluginPath,
  grantPath: PluginGrantPath,
  grant: PluginAccessGrantResponse,
  page: PluginAccessGrantPage
})

const lifecycle = <const Name extends "archive" | "restore">(name: Name, summary: string, description: string) =>
  HttpApiEndpoint.post(name, `/v1/plugins/:pluginId/${name}`, { params: PluginPath, success: PluginResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits(`plugin.${name}`), requires("catalog.read"))
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, `${description} Needs manager access.\n\nErrors: 403 \`insufficient_access\`; 404 \`plugin_not_found\`; 409 \`plugin_exists\` when restoring a deleted plugin whose name another plugin took meanwhile.`)

export class PluginsApi extends HttpApiGroup.make("plugins")
  .add(
    HttpApiEndpoint.post("create", "/v1/plugins", { payload: CreatePluginRequest, success: PluginResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, ConflictResponse] }).pipe(audits("plugin.create"), requires("catalog.create"))
      .annotate(OpenApi.Summary, "Create a plugin")
      .annotate(
        OpenApi.Description,
        "Creates an empty plugin; the creator gets manager access. Plugin names are unique in the organization among plugins that are not deleted (compared case-insensitively).\n\nErrors: 409 `plugin_exists`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/plugins", { query: PluginListQuery, success: PluginPage, error: [ForbiddenResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List plugins")
      .annotate(
        OpenApi.Description,
        "The plugins the caller can view (owners and admins: all; others: those granted to them, their teams or the organization, and those in marketplaces they can view), by name. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/plugins/:pluginId", { params: PluginPath, success: PluginDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "Get a plugin")
      .annotate(
        OpenApi.Description,
        "One plugin with its member count, the marketplaces that list it and its extension manifest, deleted ones included. Needs viewer access: a grant, or a marketplace the caller can view that lists it. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `plugin_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/plugins/:pluginId", { params: PluginPath, payload: UpdatePluginRequest, success: PluginResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("plugin.update"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Update a plugin")
      .annotate(
        OpenApi.Description,
        "Renames a plugin and/or changes its description. Needs editor access.\n\nErrors: 403 `insufficient_access`; 404 `plugin_not_found`; 409 `plugin_exists` when another plugin has the name, `plugin_deleted` for a deleted plugin."
      )
  )
  .add(lifecycle("archive", "Archive a plugin", "Sets the plugin's status to `archived`: it stays readable and listed."))
  .add(lifecycle("restore", "Restore a plugin", "Makes an archived or deleted plugin `active` again."))
  .add(
    HttpApiEndpoint.delete("delete", "/v1/plugins/:pluginId", { params: PluginPath, success: PluginResponse, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("plugin.delete"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Delete a plugin")
      .annotate(
        OpenApi.Description,
        "Soft-deletes the plugin: status `deleted`, `deletedAt` set; marketplaces stop showing it, its config objects stay. Its memberships and grants are kept, so restoring brings it back whole. Deleting a deleted plugin changes nothing. Answers the plugin. Needs manager access.\n\nErrors: 403 `insufficient_access`; 404 `plugin_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.get("listConfigObjects", "/v1/plugins/:pluginId/config-objects", { params: PluginPath, query: MembershipListQuery, success: PluginConfigObjectPage, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List a plugin's config objects")
      .annotate(
        OpenApi.Description,
        "The plugin's config-object memberships, in the order they were added, each with its config object and latest version; removed ones too with `includeRemoved=true`. Needs viewer access on the plugin. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `plugin_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("addConfigObject", "/v1/plugins/:pluginId/config-objects", { params: PluginPath, payload: AddPluginConfigObjectRequest, success: PluginConfigObjectResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("plugin.config_object.add"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Add a config object to a plugin")
      .annotate(
        OpenApi.Description,
        "Adds a config object to the plugin and answers the membership; adding one that is already in it answers the existing membership, and one that was removed comes back. Needs editor access on the plugin and viewer access on the object.\n\nErrors: 403 `insufficient_access`; 404 `plugin_not_found`, `config_object_not_found`; 409 `plugin_deleted`, `config_object_deleted`."
      )
  )
  .add(
    HttpApiEndpoint.delete("removeConfigObject", "/v1/plugins/:pluginId/config-objects/:configObjectId", { params: PluginConfigObjectPath, success: HttpApiSchema.NoContent, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("plugin.config_object.remove"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Remove a config object from a plugin")
      .annotate(
        OpenApi.Description,
        "Takes a config object out of the plugin; the membership record stays with `removedAt` set and the object is unchanged. Needs editor access on the plugin.\n\nErrors: 403 `insufficient_access`; 404 `plugin_not_found`, `plugin_membership_not_found` when the object is not in the plugin."
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Plugins")
  .annotate(
    OpenApi.Description,
    "Plugins of the caller's organization: named bundles of config objects that desktop apps install as extensions. Access is per plugin: owners and admins manage every plugin; other members need a grant (direct, through a team, or organization-wide), or view it through a marketplace they can view. A member without the access an operation needs gets 403 `insufficient_access`; another organization's plugin answers 404 like a missing one. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
