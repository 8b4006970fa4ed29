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

NodeRuntime.runMain(run(process.argv).pipe(Effect.provide(NodeContext.layer)), { disableErrorReporting: true, teardown })
