/** PLACEHOLDER until the marketplaces group is built: every handler dies. Replace the whole file. */
import { Api } from "@orgplane/schema"
import { Effect } from "effect"
import type { Layer } from "effect"
import { group } from "../platform/HttpErrors.js"

export const MarketplacesHttp: Layer.Layer<any> = (group as any)(Api, "marketplaces", (handlers: any) =>
  Effect.succeed<any>(
    Object.keys(Api.groups.marketplaces.endpoints).reduce(
      (built: any, name) => built.handle(name, () => Effect.dieMessage("marketplaces.${name} is not built")),
      handlers
    )
  ))
