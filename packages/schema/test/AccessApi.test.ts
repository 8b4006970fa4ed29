import { describe, expect, it } from "@effect/vitest"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { type AnyGroup, groupDocument } from "./apiDifferential.js"
import * as Access from "../src/Access.js"
import { accessEndpoints } from "../src/AccessApi.js"
import { apiOf } from "../src/ApiOf.js"
import { ConfigObjectPath } from "../src/ConfigObjects.js"
import { MarketplacePath, PluginPath } from "../src/Plugins.js"
import { MemberAuthentication } from "../src/Security.js"
import { operationView } from "./apiDifferential.js"
import { isJsonObject } from "./catalog.js"
import type { Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const ConfigObjectsApi3 = effect3("ConfigObjectsApi").ConfigObjectsApi
const MarketplacesApi3 = effect3("MarketplacesApi").MarketplacesApi
const PluginsApi3 = effect3("PluginsApi").PluginsApi

const json = (value: unknown): Json => JSON.parse(JSON.stringify(value))

/** The document's operations whose path has `/access`, by `METHOD /path`. */
const accessOperations = (document: Json): Map<string, { readonly [key: string]: Json }> => {
  const out = new Map<string, { readonly [key: string]: Json }>()
  const paths = isJsonObject(document) ? document["paths"] : undefined
  for (const [path, item] of Object.entries(isJsonObject(paths) ? paths : {})) {
    if (!path.includes("/access")) continue
    for (const [method, operation] of Object.entries(isJsonObject(item) ? item : {})) {
      if (isJsonObject(operation)) out.set(`${method.toUpperCase()} ${path}`, operation)
    }
  }
  return out
}

/**
 * The three operations `accessEndpoints` makes for a kind, in a group of the original's name, declare what the Effect
 * 3 helper's do in the original group.
 */
const sameAccessOperations = (endpoints: ReturnType<typeof accessEndpoints>, original: AnyGroup, title: string) => {
  const group = HttpApiGroup.make(String(original.identifier)).add(endpoints.grant, endpoints.listAccess, endpoints.revoke)
    .middleware(MemberAuthentication)
    .annotate(OpenApi.Title, title)
  const ported = json(OpenApi.fromApi(apiOf(group)))
  const expected = json(groupDocument(original))
  const portedOperations = accessOperations(ported)
  const expectedOperations = accessOperations(expected)
  expect([...portedOperations.keys()].sort()).toEqual([...expectedOperations.keys()].sort())
  expect(expectedOperations.size).toBe(3)
  for (const [at, operation] of expectedOperations) {
    const port = portedOperations.get(at)
    if (port !== undefined) expect(operationView(ported, port, false), at).toEqual(operationView(expected, operation, true))
  }
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

describe("AccessApi on Effect 4", () => {
  it("makes the grant, list and revoke operations of the Effect 3 helper", () => {
    sameAccessOperations(accessEndpoints({
      name: "configObject",
      kind: "config object",
      base: "/v1/config-objects/:configObjectId",
      path: ConfigObjectPath,
      grantPath: Access.ConfigObjectGrantPath,
      grant: Access.ConfigObjectAccessGrantResponse,
      page: Access.ConfigObjectAccessGrantPage
    }), ConfigObjectsApi3, "Config objects")
    sameAccessOperations(pluginAccess(), PluginsApi3, "Plugins")
    sameAccessOperations(accessEndpoints({
      name: "marketplace",
      kind: "marketplace",
      base: "/v1/marketplaces/:marketplaceId",
      path: MarketplacePath,
      grantPath: Access.MarketplaceGrantPath,
      grant: Access.MarketplaceAccessGrantResponse,
      page: Access.MarketplaceAccessGrantPage
    }), MarketplacesApi3, "Marketplaces")
  })

  it("names the operations after the kind, in the types too", () => {
    const endpoints = pluginAccess()
    // Typed too: the server's handlers and the client's methods are named by them.
    const names: readonly ["pluginGrant", "pluginListAccess", "pluginRevoke"] = [endpoints.grant.identifier, endpoints.listAccess.identifier, endpoints.revoke.identifier]
    expect(names).toEqual(["pluginGrant", "pluginListAccess", "pluginRevoke"])
  })
})
