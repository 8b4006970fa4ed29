/**
 * HTTP handlers of the SCIM Groups group. Thin: the Groups service reads, checks and writes.
 */
import { Api, CurrentScimClient, type ScimGroup } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import { DirectoryTeams } from "../teams/DirectoryTeams.js"
import { Groups } from "./Groups.js"
import * as ProtocolAuthentication from "./ProtocolAuthentication.js"
import { unlessNotModified, withResourceHeaders } from "./ResourceHeaders.js"

/** The request an event records: method and path (no query: a filter may hold personal data). */
const requestOf = Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) => ({
  method: request.method,
  path: request.url.split("?")[0]!,
  resourceType: "Group" as const
}))

/**
 * Reads answer none of the writes' refusals (409, 412), nor a create a 412 or a delete a 409: the service's one error
 * mapping names every SCIM refusal, and each operation declares only those it can give. One it does not declare
 * would be a bug: a defect (500), never an answer the document does not list.
 */
const asRead = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchTags(effect, { ScimConflict: Effect.die, ScimPreconditionFailed: Effect.die })
const asCreate = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchTags(effect, { ScimPreconditionFailed: Effect.die })
const asDelete = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchTags(effect, { ScimConflict: Effect.die })

/** Resources are projected records (Projection.ts), held to the response schema on the way out, as Users' are. */
const asGroup = (resource: Readonly<Record<string, unknown>>) => resource as ScimGroup
const asGroups = <L extends { readonly Resources: ReadonlyArray<Readonly<Record<string, unknown>>> }>(list: L) => ({ ...list, Resources: list.Resources.map(asGroup) })

const joined = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" || value === undefined ? value : value.join(","))

export const ScimGroupsHttp = group(Api, "scimGroups", (handlers) =>
  Effect.gen(function*() {
    const groups = yield* Groups
    const context = (connectionId: string) =>
      Effect.all({
        caller: Effect.service(CurrentScimClient),
        place: Effect.map(requestBaseUrl, (base) => ({ baseUrl: `${base}/scim/v2/${connectionId}` })),
        request: requestOf
      })
    return handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, place, request }) =>
          asCreate(Effect.map(groups.create(caller, request, place, payload), asGroup).pipe(withResourceHeaders(true)))))
      .handle("list", ({ params, query }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, place }) => asRead(Effect.map(groups.list(caller, place, query), asGroups))))
      .handle("search", ({ params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, place }) =>
          asRead(Effect.map(
            groups.list(caller, place, {
              ...payload,
              attributes: joined(payload.attributes),
              excludedAttributes: joined(payload.excludedAttributes)
            }),
            asGroups
          ))))
      .handle("get", ({ params, request, query }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, place }) =>
          asRead(Effect.map(groups.get(caller, place, params.groupId, query), asGroup).pipe(unlessNotModified(request.headers["if-none-match"])))))
      .handle("replace", ({ headers, params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, place, request }) =>
          Effect.map(groups.replace(caller, request, place, params.groupId, payload, headers["if-match"]), asGroup).pipe(withResourceHeaders())))
      .handle("patch", ({ headers, params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, place, request }) =>
          Effect.map(groups.patch(caller, request, place, params.groupId, payload.Operations, headers["if-match"]), asGroup).pipe(withResourceHeaders())))
      .handle("delete", ({ headers, params }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, request }) =>
          asDelete(groups.remove(caller, request, params.groupId, headers["if-match"]))))
  }))

export const layer = ScimGroupsHttp.pipe(
  Layer.provide(Groups.layer),
  Layer.provide(DirectoryTeams.layer),
  Layer.provide(ProtocolAuthentication.layer)
)
