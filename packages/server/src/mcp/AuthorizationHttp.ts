/**
 * HTTP handlers of the MCP Authorization group. Thin: the OAuth service authorizes and decides.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import { OAuth } from "./OAuth.js"
import { clientMetadataDocument } from "./OAuthClientMetadata.js"

export const McpAuthorizationHttp = group(Api, "mcpAuthorization", (handlers) =>
  Effect.gen(function*() {
    const oauth = yield* OAuth
    return handlers
      .handle("connect", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => Effect.flatMap(requestBaseUrl, (base) => oauth.connect(caller, params.connectionId, base))))
      .handle("callback", ({ query }) => oauth.callback(query))
      .handle("disconnect", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => oauth.disconnect(caller, params.connectionId)))
      .handle("disconnectMine", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => oauth.disconnectMine(caller, params.connectionId)))
      .handle("clientMetadata", () => Effect.map(requestBaseUrl, clientMetadataDocument))
  }))

export const layer = McpAuthorizationHttp.pipe(Layer.provide(OAuth.layer))
