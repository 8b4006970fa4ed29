/**
 * A process that takes an embedded data folder's lock (`DATA_FOLDER`) for test/http/DataFolder.test.ts, driven over
 * the IPC channel: it says `ready` once loaded, takes the lock at `go` and answers `{ held }` or `{ refused: message }`,
 * and at `release` lets it go and exits. Processes started together and sent `go` at once race for one lock.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as DataFolderLock from "../../src/platform/DataFolderLock.js"

const folder = process.env.DATA_FOLDER ?? ""
const scope = Scope.makeUnsafe()

process.on("message", (message: unknown) => {
  if (message === "go") {
    void Effect.runPromiseExit(Scope.provide(scope)(DataFolderLock.hold(folder))).then((exit) =>
      process.send?.(Exit.isSuccess(exit) ? { held: true } : { refused: String((Cause.squash(exit.cause) as Error).message) })
    )
  } else if (message === "release") {
    void Effect.runPromise(Scope.close(scope, Exit.void)).then(() => process.disconnect())
  }
})
// Goes with the test.
process.on("disconnect", () => process.exit(0))
process.send?.("ready")
