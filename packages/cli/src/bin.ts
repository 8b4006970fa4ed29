/** The `orgplane` executable: runs the CLI and exits with its code; SIGINT/SIGTERM interrupt it gracefully. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { defaultTeardown, type Teardown } from "@effect/platform/Runtime"
import { Effect, Exit } from "effect"
import { run } from "./Cli.js"

/** The program's result is the exit code; an interruption (a signal) exits 0 after the finalizers ran. */
const teardown: Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit) && typeof exit.value === "number") onExit(exit.value)
  else defaultTeardown(exit, onExit)
}

// The CLI prints through Console; log lines come from `serve`, whose server installs its own one-line format (the
// runtime's multi-line pretty logger would replace it and spread each request over several lines).
NodeRuntime.runMain(run(process.argv).pipe(Effect.provide(NodeContext.layer)), {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown
})
