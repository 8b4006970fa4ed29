/** Whether the database answers, as last seen by a unit of work: logs each outage once, and its end once. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

/** One line for the log: the failure's message and its cause's, never a stack (an outage can last long). */
export const describe = (failure: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = failure
  // Driver errors nest (SqlError → its reason → socket error); a few levels say everything useful.
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    const message = typeof current === "object" ? Reflect.get(current, "message") : current
    const text = typeof message === "string" ? message : String(message ?? "")
    if (text !== "" && !parts.includes(text)) parts.push(text)
    current = typeof current === "object" ? Reflect.get(current, "cause") : undefined
  }
  return parts.length === 0 ? "unknown cause" : parts.join(": ")
}

const make = Effect.gen(function*() {
  const down = yield* Ref.make(false)
  return {
    /** A unit of work found the database unavailable: the first report of an outage is a WARN, later ones DEBUG. */
    unavailable: Effect.fn("DatabaseStatus.unavailable")(function*(failure: unknown) {
      const wasDown = yield* Ref.getAndSet(down, true)
      yield* wasDown
        ? Effect.logDebug(`The database is still unavailable: ${describe(failure)}`)
        : Effect.logWarning(`The database is unavailable: ${describe(failure)}`)
    }),
    /** A unit of work reached the database. Cheap on the hot path: one read of a Ref while all is well. */
    available: Effect.flatMap(Ref.get(down), (isDown) =>
      isDown
        ? Effect.flatMap(Ref.getAndSet(down, false), (wasDown) => wasDown ? Effect.logInfo("The database is available again") : Effect.void)
        : Effect.void)
  }
})

export class DatabaseStatus extends Context.Service<DatabaseStatus>()("@orgplane/server/platform/DatabaseStatus", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/** Reports to the DatabaseStatus when the context has one (small test APIs and bare SqlClients do not). */
export const reportUnavailable = (failure: unknown) =>
  Effect.flatMap(Effect.serviceOption(DatabaseStatus), (status) =>
    Option.isSome(status) ? status.value.unavailable(failure) : Effect.logWarning(`The database is unavailable: ${describe(failure)}`))

export const reportAvailable = Effect.flatMap(
  Effect.serviceOption(DatabaseStatus),
  (status) => Option.isSome(status) ? status.value.available : Effect.void
)
