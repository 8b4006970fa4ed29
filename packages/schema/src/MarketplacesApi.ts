/** Marketplaces: curated lists of plugins that members browse and install from. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { MarketplaceAccessGrantPage, MarketplaceAccessGrantResponse, MarketplaceGrantPath } from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import {
  AddMarketplacePluginRequest,
  CreateMarketplaceRequest,
  MarketplaceDetail,
  MarketplaceListQuery,
  MarketplacePage,
  MarketplacePath,
  MarketplacePluginPage,
  MarketplacePluginPath,
  MarketplacePluginResponse,
  MarketplaceResponse,
  MembershipListQuery,
  ResolvedMarketplaceResponse,
  UpdateMarketplaceRequest
} from "./Plugins.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

const access = accessEndpoints({
  name: "marketplace",
  kind: "marketplace",
  base: "/v1/marketplaces/:marketplaceId",
  path: MarketplacePath,
  grantPath: MarketplaceGrantPath,
  grant: MarketplaceAccessGrantResponse,
  page: MarketplaceAccessGrantPage
})

export class MarketplacesApi extends HttpApiGroup.make("marketplaces")
  .add(
    HttpApiEndpoint.post("create", "/v1/marketplaces", { payload: CreateMarketplaceRequest, success: MarketplaceResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, ConflictResponse] }).pipe(audits("marketplace.create"), requires("marketplaces.create"))
      .annotate(OpenApi.Summary, "Create a marketplace")
      .annotate(
        OpenApi.Description,
        "Creates an empty marketplace; the creator gets manager access. Marketplace names are unique in the organization among marketplaces that are not deleted (compared case-insensitively).\n\nErrors: 409 `marketplace_exists`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/marketplaces", { query: MarketplaceListQuery, success: MarketplacePage, error: [ForbiddenResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List marketplaces")
      .annotate(
        OpenApi.Description,
        "The marketplaces the caller can view (owners and admins: all; others: those granted to them, their teams or the organization), by name. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/marketplaces/:marketplaceId", { params: MarketplacePath, success: MarketplaceDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "Get a marketplace")
      .annotate(
        OpenApi.Description,
        "One marketplace with its plugin count, deleted ones included. Needs viewer access. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/marketplaces/:marketplaceId", { params: MarketplacePath, payload: UpdateMarketplaceRequest, success: MarketplaceResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("marketplace.update"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Update a marketplace")
      .annotate(
        OpenApi.Description,
        "Changes a marketplace's name, description or logo. Needs editor access.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`; 409 `marketplace_exists` when another marketplace has the name."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/marketplaces/:marketplaceId", { params: MarketplacePath, success: MarketplaceResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("marketplace.delete"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Delete a marketplace")
      .annotate(
        OpenApi.Description,
        "Soft-deletes the marketplace (status `deleted`, `deletedAt` set); its plugins stay, and members who could view them only through it no longer can. Deleting a deleted marketplace changes nothing. Answers the marketplace. Needs manager access.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`; 409 `managed_marketplace_cannot_be_deleted` while a connector or the service lists plugins in it (`canDelete` is false)."
      )
  )
  .add(
    HttpApiEndpoint.get("listPlugins", "/v1/marketplaces/:marketplaceId/plugins", { params: MarketplacePath, query: MembershipListQuery, success: MarketplacePluginPage, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "List a marketplace's plugins")
      .annotate(
        OpenApi.Description,
        "The marketplace's plugin memberships, in the order they were added, each with its plugin; removed ones too with `includeRemoved=true`. Needs viewer access on the marketplace. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("addPlugin", "/v1/marketplaces/:marketplaceId/plugins", { params: MarketplacePath, payload: AddMarketplacePluginRequest, success: MarketplacePluginResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("marketplace.plugin.add"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Add a plugin to a marketplace")
      .annotate(
        OpenApi.Description,
        "Lists a plugin in the marketplace and answers the membership; adding one that is already listed answers the existing membership, and one that was removed comes back. Everyone who can view the marketplace can then view the plugin. Needs editor access on the marketplace and viewer access on the plugin.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`, `plugin_not_found`; 409 `plugin_deleted`, `plugin_name_listed` (another plugin of that name is listed: a name is unique within a marketplace, as Claude Code installs `name@marketplace`)."
      )
  )
  .add(
    HttpApiEndpoint.delete("removePlugin", "/v1/marketplaces/:marketplaceId/plugins/:pluginId", { params: MarketplacePluginPath, success: HttpApiSchema.NoContent, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("marketplace.plugin.remove"), requires("catalog.read"))
      .annotate(OpenApi.Summary, "Remove a plugin from a marketplace")
      .annotate(
        OpenApi.Description,
        "Takes a plugin out of the marketplace; the membership record stays with `removedAt` set. Needs editor access on the marketplace.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`, `marketplace_membership_not_found` when the plugin is not listed."
      )
  )
  .add(
    HttpApiEndpoint.get("resolved", "/v1/marketplaces/:marketplaceId/resolved", { params: MarketplacePath, success: ResolvedMarketplaceResponse, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("catalog.read"))
      .annotate(OpenApi.Summary, "Resolve a marketplace")
      .annotate(
        OpenApi.Description,
        "The marketplace with every plugin it lists (not deleted), each with its count of active config objects per type and its cloud readiness, and the repository its plugins come from. `canDelete` and `pluginCount` are as in the marketplace itself. Needs viewer access. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `marketplace_not_found`."
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Marketplaces")
  .annotate(
    OpenApi.Description,
    "Marketplaces of the caller's organization: curated lists of plugins. Owners and admins create them and manage all of them; other members need a grant (direct, through a team, or organization-wide) and can then view every plugin listed. A member without the access an operation needs gets 403 `insufficient_access`; another organization's marketplace answers 404 like a missing one. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
