/** HTTP handlers of the MCP Authorization group. Thin: the OAuth service authorizes and decides. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import { OAuth } from "./OAuth.js"
import { clientMetadataDocument } from "./OAuthClientMetadata.js"

export const McpAuthorizationHttp = group(Api, "mcpAuthorization", (handlers) =>
  Effect.gen(function*() {
    const oauth = yield* OAuth
    return handlers
      .handle("connect", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => Effect.flatMap(requestBaseUrl, (base) => oauth.connect(caller, path.connectionId, base))))
      .handle("callback", ({ urlParams }) => oauth.callback(urlParams))
      .handle("disconnect", ({ path }) => Effect.flatMap(CurrentMember, (caller) => oauth.disconnect(caller, path.connectionId)))
      .handle("disconnectMine", ({ path }) => Effect.flatMap(CurrentMember, (caller) => oauth.disconnectMine(caller, path.connectionId)))
      .handle("clientMetadata", () => Effect.map(requestBaseUrl, clientMetadataDocument))
  }))

export const layer = McpAuthorizationHttp.pipe(Layer.provide(OAuth.layer))
