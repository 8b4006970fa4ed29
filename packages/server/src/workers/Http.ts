/** HTTP handlers of the Workers and Worker Runtime groups. Thin by design: the service authorizes. */
import { Api, CurrentMember, CurrentWorker } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Activity, offlineCheckLayer } from "./Activity.js"
import * as Authentication from "./Authentication.js"
import { Runtime } from "./Runtime.js"
import { Workers } from "./Workers.js"
import { WorkersRepository } from "./WorkersRepository.js"

export const WorkersHttp = group(Api, "workers", (handlers) =>
  Effect.gen(function*() {
    const workers = yield* Workers
    return handlers
      .handle("register", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => workers.register(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => workers.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => workers.get(caller, path.id)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => workers.update(caller, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => workers.remove(caller, path.id)))
      .handle("rotateToken", ({ path }) => Effect.flatMap(CurrentMember, (caller) => workers.rotateToken(caller, path.id)))
      .handle("upgradeRuntime", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => workers.upgradeRuntime(caller, path.id, payload)))
  }))

export const WorkerRuntimeHttp = group(Api, "workerRuntime", (handlers) =>
  Effect.gen(function*() {
    const workers = yield* Workers
    const activity = yield* Activity
    return handlers
      .handle("heartbeat", ({ payload }) => Effect.flatMap(CurrentWorker, (caller) => activity.heartbeat(caller, payload)))
      .handle("registerInstance", ({ payload }) => Effect.flatMap(CurrentWorker, (caller) => workers.registerInstance(caller, payload)))
  }))

export const WorkerActivityHttp = group(Api, "workerActivity", (handlers) =>
  Effect.gen(function*() {
    const activity = yield* Activity
    return handlers.handle("list", ({ path, urlParams }) => Effect.flatMap(CurrentMember, (caller) => activity.list(caller, path.id, urlParams)))
  }))

export const layer = Layer.mergeAll(WorkersHttp, WorkerRuntimeHttp, WorkerActivityHttp, offlineCheckLayer).pipe(
  Layer.provide(Authentication.layer),
  Layer.provide(Workers.layer),
  Layer.provide(Activity.layer),
  Layer.provide(Runtime.layer),
  Layer.provide(WorkersRepository.layer)
)
