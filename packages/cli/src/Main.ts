/** The CLI in a process: runs it on the process's arguments and exits with its code; SIGINT/SIGTERM interrupt it gracefully. */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import { run, type RunOptions } from "./Cli.js"

/**
 * The program's result is the exit code; an interruption (a signal) exits 0 after the finalizers ran, as the CLI's
 * exit codes promise (Effect 4's default teardown answers 130).
 */
const teardown: Runtime.Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit) && typeof exit.value === "number") onExit(exit.value)
  else if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) onExit(0)
  else Runtime.defaultTeardown(exit, onExit)
}

/**
 * A signal that comes after the one that stopped the program is ignored, never fatal. `runMain` removes its SIGINT and
 * SIGTERM listeners when the program ends, and Node then lets the signal kill the process; but Ctrl-C on `pnpm start`
 * reaches the server twice (the terminal's, and pnpm's forwarded copy a moment later), and the second one landing
 * between that removal and the exit ended a clean stop by SIGINT, which pnpm reported as ELIFECYCLE.
 */
const ignoreLateSignals = () => {
  const ignore = () => {}
  process.on("SIGINT", ignore)
  process.on("SIGTERM", ignore)
}

// The CLI prints through Console; log lines come from `serve`, whose server installs its own one-line format in place
// of Effect's default logger (RequestLog.loggerLayer), so no pretty logger is to be turned off here.
export const main = (options: RunOptions) => {
  ignoreLateSignals()
  NodeRuntime.runMain(run(process.argv, options).pipe(Effect.provide(NodeServices.layer)), { disableErrorReporting: true, teardown })
}
