/**
 * What the catalog's service tests share (CatalogServices.test.ts, CatalogAccessPaging.test.ts): the services over a
 * fresh migrated database, the requests and queries decoded by the API's schemas as the HTTP layer decodes them
 * (names trimmed, `"true"` and `"20"` read), and an error as its plain members.
 */
import {
  AccessListQuery,
  ConfigObjectId,
  ConfigObjectListQuery,
  CreateAccessGrantRequest,
  CreateConfigObjectRequest,
  CreateMarketplaceRequest,
  CreatePluginRequest,
  CreateVersionRequest,
  MarketplaceAccessGrantId,
  MarketplaceId,
  MarketplaceListQuery,
  MembershipListQuery,
  PluginAccessGrantId,
  PluginId,
  PluginListQuery,
  UpdateMarketplaceRequest,
  UpdatePluginRequest,
  VersionListQuery
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Access } from "../../src/access/Access.js"
import { ConfigObjects } from "../../src/catalog/ConfigObjects.js"
import { Marketplaces } from "../../src/catalog/Marketplaces.js"
import { Plugins } from "../../src/catalog/Plugins.js"
import { BUILT_IN } from "../../src/mcp/Presets.js"
import { McpPresets } from "../../src/mcp/PresetsConfig.js"
import { IdGenerator } from "../../src/platform/Ids.js"
import { Teams } from "../../src/teams/Teams.js"
import * as Db from "./IdentityDatabase.js"

const services = Layer.mergeAll(ConfigObjects.layer, Plugins.layer, Marketplaces.layer, Access.layer, Teams.layer).pipe(
  Layer.provide(Layer.succeed(McpPresets, BUILT_IN))
)

/** The catalog's services (and Access, Teams for grants to teams) over a fresh migrated database. */
export const layer = Layer.provideMerge(services, Layer.merge(Db.layer, IdGenerator.layer))
export type Env = Layer.Success<typeof layer>

/** What the HTTP layer hands a handler: the body or query decoded by the API's schema. */
const decoder = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => (input: unknown): S["Type"] =>
  Schema.decodeUnknownSync(schema)(input)

export const createObject = decoder(CreateConfigObjectRequest)
export const newVersion = decoder(CreateVersionRequest)
export const objectsQuery = decoder(ConfigObjectListQuery)
export const versionsQuery = decoder(VersionListQuery)
export const createPlugin = decoder(CreatePluginRequest)
export const updatePlugin = decoder(UpdatePluginRequest)
export const pluginsQuery = decoder(PluginListQuery)
export const membershipsQuery = decoder(MembershipListQuery)
export const createMarketplace = decoder(CreateMarketplaceRequest)
export const updateMarketplace = decoder(UpdateMarketplaceRequest)
export const marketplacesQuery = decoder(MarketplaceListQuery)
export const grantRequest = decoder(CreateAccessGrantRequest)
export const grantsQuery = decoder(AccessListQuery)
export const configObjectId = decoder(ConfigObjectId)
export const pluginId = decoder(PluginId)
export const marketplaceId = decoder(MarketplaceId)
export const pluginGrantId = decoder(PluginAccessGrantId)
export const marketplaceGrantId = decoder(MarketplaceAccessGrantId)

/** The error an effect fails with, as its plain members (`_tag` and the body: Effect 4 keeps `message` off the object's own). */
export const plain = (error: object): object => ({ ...error, ..."message" in error ? { message: error.message } : {} })
export const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), plain)

export const unique = () => Math.random().toString(36).slice(2, 10)
export const idsOf = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) => page.items.map((item) => item.id)
