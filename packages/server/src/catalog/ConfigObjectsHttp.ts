/**
 * HTTP handlers of the Config objects group. Thin by design: the services authorize.
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Access, ConfigObjectKind } from "../access/Access.js"
import { ComponentFiles } from "./ComponentFiles.js"
import { ConfigObjects } from "./ConfigObjects.js"

export const ConfigObjectsHttp = group(Api, "configObjects", (handlers) =>
  Effect.gen(function*() {
    const objects = yield* ConfigObjects
    const access = yield* Access
    const files = yield* ComponentFiles
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.get(caller, params.configObjectId)))
      .handle("createVersion", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.createVersion(caller, params.configObjectId, payload)))
      .handle("listVersions", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.listVersions(caller, params.configObjectId, query)))
      .handle("getVersion", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.getVersion(caller, params.configObjectId, params.versionId)))
      .handle("listVersionFiles", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => files.list(caller, params.configObjectId, params.versionId)))
      // The bytes as stored, with the file's own media type (the schema documents the octet-stream default).
      .handle("getVersionFile", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) =>
          Effect.map(files.content(caller, params.configObjectId, params.versionId, query.path), (file) =>
            HttpServerResponse.uint8Array(file.content, {
              contentType: file.mediaType,
              headers: { etag: `"${file.sha256}"` }
            }))))
      .handle("archive", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.archive(caller, params.configObjectId)))
      .handle("restore", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.restore(caller, params.configObjectId)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => objects.remove(caller, params.configObjectId)))
      .handle("configObjectGrant", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => access.grant(caller, ConfigObjectKind, params.configObjectId, payload)))
      .handle("configObjectListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => access.listGrants(caller, ConfigObjectKind, params.configObjectId, query)))
      .handle("configObjectRevoke", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => access.revoke(caller, ConfigObjectKind, params.configObjectId, params.grantId)))
  })).pipe(Layer.provide([ConfigObjects.layer, ComponentFiles.layer, Access.layer]))
