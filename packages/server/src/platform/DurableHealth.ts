/** Whether the durable engine (`Durable.ts`) runs, as the health probes read it. */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/**
 * `starting` until the engine is up (it starts in the background once the server listens), then `running`, or
 * `stopped` once it shuts down with the server; `failed` when it could not start (logged as an error; it does not
 * try again).
 */
export type DurableEngineState = "starting" | "running" | "failed" | "stopped"

export class DurableHealth extends Context.Service<DurableHealth, {
  readonly state: Effect.Effect<DurableEngineState>
}>()("@orgplane/server/platform/DurableHealth") {}
