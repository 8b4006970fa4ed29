/** HTTP handlers of the SCIM connections group (management). Thin: the Connections service authorizes and decides. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import * as DirectoryTeams from "../teams/DirectoryTeams.js"
import { Connections } from "./Connections.js"

const caller = Effect.all({ member: CurrentMember, base: requestBaseUrl })

export const ScimConnectionsHttp = group(Api, "scimConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(caller, ({ base, member }) => connections.create(member, payload, base)))
      .handle("list", ({ urlParams }) => Effect.flatMap(caller, ({ base, member }) => connections.list(member, urlParams, base)))
      .handle("get", ({ path }) => Effect.flatMap(caller, ({ base, member }) => connections.get(member, path.connectionId, base)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(caller, ({ base, member }) => connections.update(member, path.connectionId, payload, base)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (member) => connections.remove(member, path.connectionId)))
      .handle("createToken", ({ path, payload }) =>
        Effect.flatMap(caller, ({ base, member }) => connections.createToken(member, path.connectionId, payload, base)))
      .handle("listTokens", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (member) => connections.listTokens(member, path.connectionId, urlParams)))
      .handle("revokeToken", ({ path }) =>
        Effect.flatMap(CurrentMember, (member) => connections.revokeToken(member, path.connectionId, path.tokenId)))
      .handle("listEvents", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (member) => connections.listEvents(member, path.connectionId, urlParams)))
      .handle("reconcile", ({ path }) => Effect.flatMap(CurrentMember, (member) => connections.reconcile(member, path.connectionId)))
  }))

export const layer = ScimConnectionsHttp.pipe(Layer.provide(Connections.layer), Layer.provide(DirectoryTeams.layer))
