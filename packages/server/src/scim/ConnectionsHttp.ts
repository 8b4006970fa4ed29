/**
 * HTTP handlers of the SCIM connections group (management). Thin: the Connections service authorizes and decides.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import { DirectoryTeams } from "../teams/DirectoryTeams.js"
import { Connections } from "./Connections.js"

const caller = Effect.all({ member: Effect.service(CurrentMember), base: requestBaseUrl })

export const ScimConnectionsHttp = group(Api, "scimConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(caller, ({ base, member }) => connections.create(member, payload, base)))
      .handle("list", ({ query }) => Effect.flatMap(caller, ({ base, member }) => connections.list(member, query, base)))
      .handle("get", ({ params }) => Effect.flatMap(caller, ({ base, member }) => connections.get(member, params.connectionId, base)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(caller, ({ base, member }) => connections.update(member, params.connectionId, payload, base)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (member) => connections.remove(member, params.connectionId)))
      .handle("createToken", ({ params, payload }) =>
        Effect.flatMap(caller, ({ base, member }) => connections.createToken(member, params.connectionId, payload, base)))
      .handle("listTokens", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (member) => connections.listTokens(member, params.connectionId, query)))
      .handle("revokeToken", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (member) => connections.revokeToken(member, params.connectionId, params.tokenId)))
      .handle("listEvents", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (member) => connections.listEvents(member, params.connectionId, query)))
      .handle("reconcile", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (member) => connections.reconcile(member, params.connectionId)))
  }))

export const layer = ScimConnectionsHttp.pipe(Layer.provide(Connections.layer), Layer.provide(DirectoryTeams.layer))
