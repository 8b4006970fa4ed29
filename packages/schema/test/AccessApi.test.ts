/**
 * AccessApi.ts's `accessEndpoints`: the grant, list and revoke operations it makes for a kind of resource, as the saved
 * document publishes them, named after the kind.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Access from "../src/Access.js"
import { accessEndpoints } from "../src/AccessApi.js"
import { apiOf } from "../src/ApiOf.js"
import { ConfigObjectPath } from "../src/ConfigObjects.js"
import { MarketplacePath, PluginPath } from "../src/Plugins.js"
import { MemberAuthentication } from "../src/Security.js"
import { isJsonObject, type Json, objectAt, savedDocument } from "./support/SavedDocument.js"

/** What a client reads of the access operations under `base` (a path of the document): their method and path, id, summary, tags, security and success status. */
const accessOperations = (document: Json, base: string): Array<Json> => {
  const out: Array<Json> = []
  for (const [path, item] of Object.entries(objectAt(document, "paths"))) {
    if (!path.startsWith(`${base}/access`)) continue
    for (const [method, operation] of Object.entries(isJsonObject(item) ? item : {})) {
      if (!isJsonObject(operation)) continue
      const { operationId = null, summary = null, tags = null, security = null } = operation
      const success = Object.keys(objectAt(operation, "responses")).filter((status) => status.startsWith("2"))
      out.push({ at: `${method.toUpperCase()} ${path}`, operationId, summary, tags, security, success })
    }
  }
  return out.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
}

/** The three operations `accessEndpoints` makes for a kind, in a group of `identifier`, are the saved document's under `base`. */
const publishedAs = (endpoints: ReturnType<typeof accessEndpoints>, identifier: string, title: string, base: string) => {
  const group = HttpApiGroup.make(identifier).add(endpoints.grant, endpoints.listAccess, endpoints.revoke)
    .middleware(MemberAuthentication)
    .annotate(OpenApi.Title, title)
  const made = accessOperations(JSON.parse(JSON.stringify(OpenApi.fromApi(apiOf(group)))), base)
  expect(made).toHaveLength(3)
  expect(made).toEqual(accessOperations(savedDocument, base))
}

const pluginAccess = () =>
  accessEndpoints({
    name: "plugin",
    kind: "plugin",
    base: "/v1/plugins/:pluginId",
    path: PluginPath,
    grantPath: Access.PluginGrantPath,
    grant: Access.PluginAccessGrantResponse,
    page: Access.PluginAccessGrantPage
  })

describe("AccessApi", () => {
  it("makes the grant, list and revoke operations of a kind as the saved document publishes them", () => {
    publishedAs(accessEndpoints({
      name: "configObject",
      kind: "config object",
      base: "/v1/config-objects/:configObjectId",
      path: ConfigObjectPath,
      grantPath: Access.ConfigObjectGrantPath,
      grant: Access.ConfigObjectAccessGrantResponse,
      page: Access.ConfigObjectAccessGrantPage
    }), "configObjects", "Config objects", "/v1/config-objects/{configObjectId}")
    publishedAs(pluginAccess(), "plugins", "Plugins", "/v1/plugins/{pluginId}")
    publishedAs(accessEndpoints({
      name: "marketplace",
      kind: "marketplace",
      base: "/v1/marketplaces/:marketplaceId",
      path: MarketplacePath,
      grantPath: Access.MarketplaceGrantPath,
      grant: Access.MarketplaceAccessGrantResponse,
      page: Access.MarketplaceAccessGrantPage
    }), "marketplaces", "Marketplaces", "/v1/marketplaces/{marketplaceId}")
  })

  it("names the operations after the kind, in the types too", () => {
    const endpoints = pluginAccess()
    // Typed too: the server's handlers and the client's methods are named by them.
    const names: readonly ["pluginGrant", "pluginListAccess", "pluginRevoke"] = [endpoints.grant.identifier, endpoints.listAccess.identifier, endpoints.revoke.identifier]
    expect(names).toEqual(["pluginGrant", "pluginListAccess", "pluginRevoke"])
  })
})
