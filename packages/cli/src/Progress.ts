/**
 * Progress on stderr while a long request runs: a spinner with a label and the elapsed seconds, redrawn in place.
 * Drawn only when stderr is a terminal (`Invocation.interactive`), and erased before anything else is printed, so
 * piped and captured output never sees it.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Invocation } from "./Commands.js"
import { CommandFailed } from "./Errors.js"

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** Writes straight to the stream: Console adds a line break, a spinner must stay on its line. */
const draw = (text: string) => Effect.sync(() => void process.stderr.write(`\r\u001b[K${text}`))

/**
 * Runs `use` with a spinner showing `initial`; `use` may change the label (say, a sync's status), and `describe`, run
 * beside it, may give a better one (say, the repository, once looked up). Without a terminal it just runs `use`:
 * label changes cost nothing and `describe` never runs.
 */
export const spinner = <A, E, R, R2 = never>(
  initial: string,
  use: (label: (text: string) => Effect.Effect<void>) => Effect.Effect<A, E, R>,
  options: { readonly describe?: Effect.Effect<Option.Option<string>, never, R2> } = {}
): Effect.Effect<A, E, R | R2 | Invocation> =>
  Effect.gen(function*() {
    const invocation = yield* Invocation
    if (!invocation.interactive) return yield* use(() => Effect.void)
    const label = yield* Ref.make(initial)
    const started = yield* Clock.currentTimeMillis
    const loop = Effect.gen(function*() {
      for (let frame = 0;; frame++) {
        const elapsed = ((yield* Clock.currentTimeMillis) - started) / 1000
        yield* draw(`${FRAMES[frame % FRAMES.length]} ${yield* Ref.get(label)} ${elapsed.toFixed(1)}s`)
        yield* Effect.sleep("100 millis")
      }
    })
    const described = options.describe === undefined
      ? Effect.void
      : Effect.flatMap(options.describe, Option.match({ onNone: () => Effect.void, onSome: (text) => Ref.set(label, text) }))
    const fibers = yield* Effect.all([Effect.forkChild(loop), Effect.forkChild(described)])
    return yield* use((text) => Ref.set(label, text)).pipe(
      Effect.ensuring(Effect.andThen(Fiber.interruptAll(fibers), draw("")))
    )
  })

/** How long `connect --wait` waits for the browser: an authorization URL is valid 10 minutes. */
export const AUTHORIZATION_WAIT = Duration.minutes(10)

/**
 * Waits, with a spinner, until `done` says the authorization in the browser completed (asked every second, then
 * every 2 s), for at most 10 minutes; then fails with `connect_timeout`.
 */
export const awaitAuthorization = <E, R>(done: Effect.Effect<boolean, E, R>) =>
  spinner("waiting for the authorization in the browser…", () =>
    Effect.gen(function*() {
      for (let round = 0;; round++) {
        if (yield* done) return
        yield* Effect.sleep(Duration.seconds(round < 30 ? 1 : 2))
      }
    }).pipe(
      Effect.timeoutOrElse({
        duration: AUTHORIZATION_WAIT,
        orElse: () =>
          Effect.fail(
            new CommandFailed({
              error: "connect_timeout",
              message: "The authorization was not completed within 10 minutes: run connect again for a new URL."
            })
          )
      })
    ))
