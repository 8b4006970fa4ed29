/** HTTP handlers of the SCIM discovery and Users groups. Thin: the Users service reads, checks and writes. */
import { HttpServerRequest } from "@effect/platform"
import { Api, CurrentScimClient, ScimNotFound } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import {
  listResponse,
  ResourceTypes,
  resourceTypeDocument,
  schemaDocument,
  Schemas,
  serviceProviderConfigDocument
} from "./Attributes.js"
import * as DirectoryTeams from "../teams/DirectoryTeams.js"
import * as ProtocolAuthentication from "./ProtocolAuthentication.js"
import { unlessNotModified, withResourceHeaders } from "./ResourceHeaders.js"
import { Users } from "./Users.js"

/** The connection's SCIM base URL, as `meta.location` and the documents name it. */
const scimBase = (connectionId: string) => Effect.map(requestBaseUrl, (base) => `${base}/scim/v2/${connectionId}`)

export const ScimDiscoveryHttp = group(Api, "scimDiscovery", (handlers) =>
  Effect.succeed(
    handlers
      .handle("serviceProviderConfig", ({ path }) => Effect.map(scimBase(path.connectionId), serviceProviderConfigDocument))
      .handle("listSchemas", ({ path }) =>
        Effect.map(scimBase(path.connectionId), (base) => listResponse(Schemas.map((schema) => schemaDocument(schema, base)))))
      .handle("getSchema", ({ path }) =>
        Effect.flatMap(scimBase(path.connectionId), (base) => {
          const schema = Schemas.find((candidate) => candidate.id.toLowerCase() === path.schemaId.toLowerCase())
          return schema === undefined
            ? Effect.fail(new ScimNotFound({ detail: `The server has no schema ${path.schemaId}.` }))
            : Effect.succeed(schemaDocument(schema, base))
        }))
      .handle("listResourceTypes", ({ path }) =>
        Effect.map(scimBase(path.connectionId), (base) => listResponse(ResourceTypes.map((type) => resourceTypeDocument(type, base)))))
      .handle("getResourceType", ({ path }) =>
        Effect.flatMap(scimBase(path.connectionId), (base) => {
          const type = ResourceTypes.find((candidate) => candidate.name.toLowerCase() === path.name.toLowerCase())
          return type === undefined
            ? Effect.fail(new ScimNotFound({ detail: `The server has no resource type ${path.name}.` }))
            : Effect.succeed(resourceTypeDocument(type, base))
        }))
  ))

/** The request an event records: method and path (no query: a filter may hold personal data). */
const requestOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => ({
  method: request.method,
  path: request.url.split("?")[0]!,
  resourceType: "User" as const
}))

const joined = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" || value === undefined ? value : value.join(","))

export const ScimUsersHttp = group(Api, "scimUsers", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const context = (connectionId: string) =>
      Effect.all({ caller: CurrentScimClient, base: scimBase(connectionId), request: requestOf })
    return handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ base, caller, request }) => users.create(caller, request, payload, base)).pipe(
          withResourceHeaders(true)
        ))
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(context(path.connectionId), ({ base, caller }) => users.list(caller, urlParams, base)))
      .handle("search", ({ path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ base, caller }) =>
          users.list(caller, {
            ...payload,
            attributes: joined(payload.attributes),
            excludedAttributes: joined(payload.excludedAttributes)
          }, base)))
      .handle("get", ({ path, request, urlParams }) =>
        Effect.flatMap(context(path.connectionId), ({ base, caller }) => users.get(caller, path.userId, urlParams, base)).pipe(
          unlessNotModified(request.headers["if-none-match"])
        ))
      .handle("replace", ({ headers, path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ base, caller, request }) =>
          users.replace(caller, request, path.userId, payload, headers["if-match"], base)).pipe(withResourceHeaders()))
      .handle("patch", ({ headers, path, payload }) =>
        Effect.flatMap(context(path.connectionId), ({ base, caller, request }) =>
          users.patch(caller, request, path.userId, payload.Operations, headers["if-match"], base)).pipe(withResourceHeaders()))
      .handle("delete", ({ headers, path }) =>
        Effect.flatMap(context(path.connectionId), ({ caller, request }) =>
          users.remove(caller, request, path.userId, headers["if-match"])))
  }))

export const layer = Layer.mergeAll(ScimDiscoveryHttp, ScimUsersHttp).pipe(
  Layer.provide(Users.layer),
  Layer.provide(DirectoryTeams.layer),
  Layer.provide(ProtocolAuthentication.layer)
)
