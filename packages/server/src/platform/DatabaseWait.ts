/**
 * How long one request waits on its database without an answer: one bound over all of its waits, for a connection
 * (new or pooled) and for each statement's answer, so that a request to a database that answers nothing answers 503
 * within the bound, however many waits it would make in a row (a pooled connection got just before the connect
 * timeout, then a statement's whole answer timeout; a key released after its transaction's statement timed out).
 *
 * The bound is the pool's (Database.ts `patience`: the longer of the statement and connect timeouts, plus the
 * client's one-second margin). Every answer from the database gives the request the whole bound again, so a request
 * that keeps hearing from its database is never cut, however long it runs; time spent on anything else (an outbound
 * call, hashing a password) does not count. `HttpErrors.edge` gives each request its own (`watched`); work outside a
 * request (start-up, the durable engine) has none and waits as each timeout alone says.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** A request's waits so far; shared by every fiber of the request. */
export interface Wait {
  /** Milliseconds the request has waited on its database since its last answer (or since it started). */
  waited: number
  /** True once the request waited its whole bound: its database does not answer, and more waiting is no use. */
  exhausted: boolean
  /** False once the request answered: work it left behind is bound by each timeout alone. */
  open: boolean
}

/** The running request's wait; undefined outside a request. */
export const CurrentWait = Context.Reference<Wait | undefined>("@orgplane/server/platform/DatabaseWait", {
  defaultValue: () => undefined
})

/** `effect` as one request: its database waits share one bound until it ends. */
export const watched = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const wait: Wait = { waited: 0, exhausted: false, open: true }
    return Effect.ensuring(
      Effect.provideService(effect, CurrentWait, wait),
      Effect.sync(() => {
        wait.open = false
      })
    )
  })

/**
 * How long the next wait may last: `each` (the timeout of that kind of wait), or less when the request's bound
 * (`patience`) is nearer; zero or below when it is spent.
 */
export const allowed = (wait: Wait | undefined, each: number, patience: number): number =>
  wait === undefined || !wait.open ? each : Math.min(each, patience - wait.waited)

/** A wait ended: an answer gives the request its whole bound again; anything else counts what it took. */
export const ended = (wait: Wait | undefined, startedAt: number, answered: boolean, patience: number): void => {
  if (wait === undefined || !wait.open) return
  wait.waited = answered ? 0 : wait.waited + (performance.now() - startedAt)
  wait.exhausted = wait.waited >= patience
}

/**
 * Whether the request (`wait`, its fiber's `CurrentWait`) waited its whole bound: a step that would look again (the
 * check whether a COMMIT without an answer committed, Idempotency.ts) gives up instead.
 */
export const exhausted = (wait: Wait | undefined): boolean => wait !== undefined && wait.open && wait.exhausted
