/**
 * Progress on stderr while a long request runs: a spinner with a label and the elapsed seconds, redrawn in place.
 * Drawn only when stderr is a terminal (`Invocation.interactive`), and erased before anything else is printed, so
 * piped and captured output never sees it.
 */
import { Clock, Effect, Fiber, Option, Ref } from "effect"
import { Invocation } from "./Commands.js"

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
    const fibers = yield* Effect.all([Effect.fork(loop), Effect.fork(described)])
    return yield* use((text) => Ref.set(label, text)).pipe(
      Effect.ensuring(Effect.zipRight(Fiber.interruptAll(fibers), draw("")))
    )
  })
