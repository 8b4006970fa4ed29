/** The CLI in a process: runs it on the process's arguments and exits with its code; SIGINT/SIGTERM interrupt it gracefully. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { defaultTeardown, type Teardown } from "@effect/platform/Runtime"
import { Effect, Exit } from "effect"
import { run, type RunOptions } from "./Cli.js"

/** The program's result is the exit code; an interruption (a signal) exits 0 after the finalizers ran. */
const teardown: Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit) && typeof exit.value === "number") onExit(exit.value)
  else defaultTeardown(exit, onExit)
}

// The CLI prints through Console; log lines come from `serve`, whose server installs its own one-line format (the
// runtime's multi-line pretty logger would replace it and spread each request over several lines).
export const main = (options: RunOptions) =>
  NodeRuntime.runMain(
    run(process.argv, options).pipe(Effect.provide(NodeContext.layer)),
    { disableErrorReporting: true, disablePrettyLogger: true, teardown }
  )
