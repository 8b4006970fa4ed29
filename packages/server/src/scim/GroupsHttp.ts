/** HTTP handlers of the SCIM Groups group. Thin: the Groups service reads, checks and writes. */
import { type HttpApiGroup, HttpServerRequest } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import {
  Api,
  CurrentScimClient,
  type ScimBadRequest,
  type ScimConflict,
  type ScimNotFound,
  type ScimPreconditionFailed,
  type ScimServiceUnavailable
} from "@orgplane/schema"
import { Effect, Layer } from "effect"
import type { ServerConfig } from "../platform/Config.js"
import { group } from "../platform/HttpErrors.js"
import type { IdGenerator } from "../platform/Ids.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import * as DirectoryTeams from "../teams/DirectoryTeams.js"
import { Groups } from "./Groups.js"
import * as ProtocolAuthentication from "./ProtocolAuthentication.js"
import { unlessNotModified, withResourceHeaders } from "./ResourceHeaders.js"

/** The request an event records: method and path (no query: a filter may hold personal data). */
const requestOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => ({
  method: request.method,
  path: request.url.split("?")[0]!,
  resourceType: "Group" as const
}))

/**
 * Reads answer none of the writes' refusals (409, 412), nor a create a 412 or a delete a 409 (the service's one
 * error mapping gives all of them): narrowed to what each operation declares. Resources are projected records,
 * checked by the response schema on the way out.
 */
const declared = <E>() => <A, E2, R>(effect: Effect.Effect<A, E2, R>) => effect as unknown as Effect.Effect<any, E, R>
const asRead = declared<ScimBadRequest | ScimNotFound | ScimServiceUnavailable>()
const asCreate = declared<ScimBadRequest | ScimNotFound | ScimConflict | ScimServiceUnavailable>()
const asWrite = declared<ScimBadRequest | ScimNotFound | ScimConflict | ScimPreconditionFailed | ScimServiceUnavailable>()
const asDelete = declared<ScimBadRequest | ScimNotFound | ScimPreconditionFailed | ScimServiceUnavailable>()

const joined = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" || value === undefined ? value : value.join(","))

export const ScimGroupsHttp = group(Api, "scimGroups", (handlers) =>
  Effect.gen(function*() {
    const groups = yield* Groups
    const context = (connectionId: string) =>
      Effect.all({
        caller: CurrentScimClient,
        place: Effect.map(requestBaseUrl, (base) => ({ baseUrl: `${base}/scim/v2/${connectionId}` })),
        request: requestOf
      })
    return handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, place, request }) =>
          asCreate(groups.create(caller, request, place, payload).pipe(withResourceHeaders(true)))))
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, place }) => asRead(groups.list(caller, place, urlParams))))
      .handle("search", ({ path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, place }) =>
          asRead(groups.list(caller, place, {
            ...payload,
            attributes: joined(payload.attributes),
            excludedAttributes: joined(payload.excludedAttributes)
          }))))
      .handle("get", ({ path, request, urlParams }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, place }) =>
          asRead(groups.get(caller, place, path.groupId, urlParams).pipe(unlessNotModified(request.headers["if-none-match"])))))
      .handle("replace", ({ headers, path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, place, request }) =>
          asWrite(groups.replace(caller, request, place, path.groupId, payload, headers["if-match"]).pipe(withResourceHeaders()))))
      .handle("patch", ({ headers, path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, place, request }) =>
          asWrite(groups.patch(caller, request, place, path.groupId, payload.Operations, headers["if-match"]).pipe(withResourceHeaders()))))
      .handle("delete", ({ headers, path }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, request }) =>
          asDelete(groups.remove(caller, request, path.groupId, headers["if-match"]))))
  }))

/**
 * The group's layer. (The builder's requirement type came out `unknown` here, though every handler's requirements
 * are known: stated, they are the service, the database, ids and the configuration, all provided by Server.ts.)
 */
const typed = ScimGroupsHttp as unknown as Layer.Layer<
  HttpApiGroup.ApiGroup<"orgplane", "scimGroups">,
  never,
  Groups | SqlClient.SqlClient | IdGenerator | ServerConfig
>

export const layer = typed.pipe(
  Layer.provide(Groups.layer),
  Layer.provide(DirectoryTeams.layer),
  Layer.provide(ProtocolAuthentication.layer)
)
