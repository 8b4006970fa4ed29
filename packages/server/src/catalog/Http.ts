/**
 * HTTP handlers of the Config objects, Plugins and Marketplaces groups. Thin by design: the services authorize.
 */
import * as Layer from "effect/Layer"
import { ConfigObjectsHttp } from "./ConfigObjectsHttp.js"
import { MarketplacesHttp } from "./MarketplacesHttp.js"
import { PluginsHttp } from "./PluginsHttp.js"

export const layer = Layer.mergeAll(ConfigObjectsHttp, PluginsHttp, MarketplacesHttp)
