/**
 * The files of a config object version (issue 31), read with viewer access on the object: the list, and one stored
 * file's bytes.
 */
import {
  type ComponentFileList,
  type ConfigObjectId,
  type ConfigObjectVersionId,
  NotFound
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable } from "../platform/Sql.js"
import { Access, ConfigObjectKind } from "../access/Access.js"
import { ComponentFilesRepository } from "./ComponentFilesRepository.js"
import { ConfigObjectsRepository } from "./ConfigObjectsRepository.js"

const versionNotFound = () => new NotFound({ error: "config_object_version_not_found", message: "Config object version not found." })
export const fileNotFound = () =>
  new NotFound({
    error: "config_object_file_not_found",
    message: "The version stores no file at this path (an entry's content is the version's rawSourceText; omitted files are not stored)."
  })

const make = Effect.gen(function*() {
  const objects = yield* ConfigObjectsRepository
  const files = yield* ComponentFilesRepository
  const access = yield* Access

  /** The object readable by the caller and the version one of its own. */
  const checked = (principal: Principal, id: ConfigObjectId, versionId: ConfigObjectVersionId) =>
    Effect.gen(function*() {
      yield* access.require(principal, ConfigObjectKind, id, "viewer")
      const version = yield* objects.findVersion(principal.organization.id, id, versionId)
      if (Option.isNone(version)) return yield* versionNotFound()
    })

  const list = Effect.fn("ComponentFiles.list")(function*(principal: Principal, id: ConfigObjectId, versionId: ConfigObjectVersionId) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(Effect.gen(function*() {
      yield* checked(principal, id, versionId)
      const items = yield* files.listOf(principal.organization.id, versionId)
      return { configObjectId: id, versionId, items } satisfies ComponentFileList
    }))
  })

  const content = Effect.fn("ComponentFiles.content")(function*(principal: Principal, id: ConfigObjectId, versionId: ConfigObjectVersionId, path: string) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(Effect.gen(function*() {
      yield* checked(principal, id, versionId)
      const found = yield* files.contentOf(principal.organization.id, versionId, path)
      if (Option.isNone(found)) return yield* fileNotFound()
      return found.value
    }))
  })

  return { list, content } as const
})

export class ComponentFiles extends Context.Service<ComponentFiles>()("@orgplane/server/catalog/ComponentFiles", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ComponentFilesRepository.layer,
      ConfigObjectsRepository.layer,
      Access.layer
    ])
  )
}
