/**
 * HTTP handlers of the Workers and Worker Runtime groups. Thin by design: the service authorizes.
 */
import { Api, CurrentMember, CurrentWorker } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
      .handle("register", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.register(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.get(caller, params.id)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.update(caller, params.id, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.remove(caller, params.id)))
      .handle("rotateToken", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.rotateToken(caller, params.id)))
      .handle("upgradeRuntime", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => workers.upgradeRuntime(caller, params.id, payload)))
  }))

export const WorkerRuntimeHttp = group(Api, "workerRuntime", (handlers) =>
  Effect.gen(function*() {
    const workers = yield* Workers
    const activity = yield* Activity
    return handlers
      .handle("heartbeat", ({ payload }) => Effect.flatMap(Effect.service(CurrentWorker), (caller) => activity.heartbeat(caller, payload)))
      .handle("registerInstance", ({ payload }) => Effect.flatMap(Effect.service(CurrentWorker), (caller) => workers.registerInstance(caller, payload)))
  }))

export const WorkerActivityHttp = group(Api, "workerActivity", (handlers) =>
  Effect.gen(function*() {
    const activity = yield* Activity
    return handlers.handle("list", ({ params, query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => activity.list(caller, params.id, query)))
  }))

export const layer = Layer.mergeAll(WorkersHttp, WorkerRuntimeHttp, WorkerActivityHttp, offlineCheckLayer).pipe(
  Layer.provide(Authentication.layer),
  Layer.provide(Workers.layer),
  Layer.provide(Activity.layer),
  Layer.provide(Runtime.layer),
  Layer.provide(WorkersRepository.layer)
)
