/**
 * HTTP handlers of the SCIM discovery and Users groups. Thin: the Users service reads, checks and writes.
 */
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { Api, CurrentScimClient, ScimNotFound } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
import { DirectoryTeams } from "../teams/DirectoryTeams.js"
import * as ProtocolAuthentication from "./ProtocolAuthentication.js"
import { unlessNotModified, withResourceHeaders } from "./ResourceHeaders.js"
import { Users } from "./Users.js"

/** The connection's SCIM base URL, as `meta.location` and the documents name it. */
const scimBase = (connectionId: string) => Effect.map(requestBaseUrl, (base) => `${base}/scim/v2/${connectionId}`)

export const ScimDiscoveryHttp = group(Api, "scimDiscovery", (handlers) =>
  Effect.succeed(
    handlers
      .handle("serviceProviderConfig", ({ params }) => Effect.map(scimBase(params.connectionId), serviceProviderConfigDocument))
      .handle("listSchemas", ({ params }) =>
        Effect.map(scimBase(params.connectionId), (base) => listResponse(Schemas.map((schema) => schemaDocument(schema, base)))))
      .handle("getSchema", ({ params }) =>
        Effect.flatMap(scimBase(params.connectionId), (base) => {
          const schema = Schemas.find((candidate) => candidate.id.toLowerCase() === params.schemaId.toLowerCase())
          return schema === undefined
            ? Effect.fail(new ScimNotFound({ detail: `The server has no schema ${params.schemaId}.` }))
            : Effect.succeed(schemaDocument(schema, base))
        }))
      .handle("listResourceTypes", ({ params }) =>
        Effect.map(scimBase(params.connectionId), (base) => listResponse(ResourceTypes.map((type) => resourceTypeDocument(type, base)))))
      .handle("getResourceType", ({ params }) =>
        Effect.flatMap(scimBase(params.connectionId), (base) => {
          const type = ResourceTypes.find((candidate) => candidate.name.toLowerCase() === params.name.toLowerCase())
          return type === undefined
            ? Effect.fail(new ScimNotFound({ detail: `The server has no resource type ${params.name}.` }))
            : Effect.succeed(resourceTypeDocument(type, base))
        }))
  ))

/** The request an event records: method and params (no query: a filter may hold personal data). */
const requestOf = Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) => ({
  method: request.method,
  path: request.url.split("?")[0]!,
  resourceType: "User" as const
}))

const joined = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" || value === undefined ? value : value.join(","))

export const ScimUsersHttp = group(Api, "scimUsers", (handlers) =>
  Effect.gen(function*() {
    const users = yield* Users
    const context = (connectionId: string) =>
      Effect.all({ caller: Effect.service(CurrentScimClient), base: scimBase(connectionId), request: requestOf })
    return handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ base, caller, request }) => users.create(caller, request, payload, base)).pipe(
          withResourceHeaders(true)
        ))
      .handle("list", ({ params, query }) =>
        Effect.flatMap(context(params.connectionId), ({ base, caller }) => users.list(caller, query, base)))
      .handle("search", ({ params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ base, caller }) =>
          users.list(caller, {
            ...payload,
            attributes: joined(payload.attributes),
            excludedAttributes: joined(payload.excludedAttributes)
          }, base)))
      .handle("get", ({ params, request, query }) =>
        Effect.flatMap(context(params.connectionId), ({ base, caller }) => users.get(caller, params.userId, query, base)).pipe(
          unlessNotModified(request.headers["if-none-match"])
        ))
      .handle("replace", ({ headers, params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ base, caller, request }) =>
          users.replace(caller, request, params.userId, payload, headers["if-match"], base)).pipe(withResourceHeaders()))
      .handle("patch", ({ headers, params, payload }) =>
        Effect.flatMap(context(params.connectionId), ({ base, caller, request }) =>
          users.patch(caller, request, params.userId, payload.Operations, headers["if-match"], base)).pipe(withResourceHeaders()))
      .handle("delete", ({ headers, params }) =>
        Effect.flatMap(context(params.connectionId), ({ caller, request }) =>
          users.remove(caller, request, params.userId, headers["if-match"])))
  }))

export const layer = Layer.mergeAll(ScimDiscoveryHttp, ScimUsersHttp).pipe(
  Layer.provide(Users.layer),
  Layer.provide(DirectoryTeams.layer),
  Layer.provide(ProtocolAuthentication.layer)
)
