/** HTTP handlers of the Config objects group. Thin by design: the services authorize. */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
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
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => objects.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => objects.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => objects.get(caller, path.configObjectId)))
      .handle("createVersion", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => objects.createVersion(caller, path.configObjectId, payload)))
      .handle("listVersions", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => objects.listVersions(caller, path.configObjectId, urlParams)))
      .handle("getVersion", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => objects.getVersion(caller, path.configObjectId, path.versionId)))
      .handle("listVersionFiles", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => files.list(caller, path.configObjectId, path.versionId)))
      // The bytes as stored, with the file's own media type (the schema documents the octet-stream default).
      .handle("getVersionFile", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(files.content(caller, path.configObjectId, path.versionId, urlParams.path), (file) =>
            HttpServerResponse.uint8Array(file.content, {
              contentType: file.mediaType,
              headers: { etag: `"${file.sha256}"` }
            }))))
      .handle("archive", ({ path }) => Effect.flatMap(CurrentMember, (caller) => objects.archive(caller, path.configObjectId)))
      .handle("restore", ({ path }) => Effect.flatMap(CurrentMember, (caller) => objects.restore(caller, path.configObjectId)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => objects.remove(caller, path.configObjectId)))
      .handle("configObjectGrant", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => access.grant(caller, ConfigObjectKind, path.configObjectId, payload)))
      .handle("configObjectListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => access.listGrants(caller, ConfigObjectKind, path.configObjectId, urlParams)))
      .handle("configObjectRevoke", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => access.revoke(caller, ConfigObjectKind, path.configObjectId, path.grantId)))
  })).pipe(Layer.provide([ConfigObjects.layer, ComponentFiles.layer, Access.layer]))
