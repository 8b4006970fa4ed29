/** PLACEHOLDER until the plugins group is built: every handler dies. Replace the whole file. */
import { Api } from "@orgplane/schema"
import { Effect } from "effect"
import type { Layer } from "effect"
import { group } from "../platform/HttpErrors.js"

export const PluginsHttp: Layer.Layer<any> = (group as any)(Api, "plugins", (handlers: any) =>
  Effect.succeed<any>(
    Object.keys(Api.groups.plugins.endpoints).reduce(
      (built: any, name) => built.handle(name, () => Effect.dieMessage("plugins.${name} is not built")),
      handlers
    )
  ))
