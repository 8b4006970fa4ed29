/** PLACEHOLDER until the configObjects group is built: every handler dies. Replace the whole file. */
import { Api } from "@orgplane/schema"
import { Effect } from "effect"
import type { Layer } from "effect"
import { group } from "../platform/HttpErrors.js"

export const ConfigObjectsHttp: Layer.Layer<any> = (group as any)(Api, "configObjects", (handlers: any) =>
  Effect.succeed<any>(
    Object.keys(Api.groups.configObjects.endpoints).reduce(
      (built: any, name) => built.handle(name, () => Effect.dieMessage("configObjects.${name} is not built")),
      handlers
    )
  ))
