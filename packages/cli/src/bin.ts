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

// A reader that went away (`orgplane members list --json | head -1`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
}

/** Colour on a terminal, unless NO_COLOR is set; FORCE_COLOR (other than 0) turns it on anywhere. */
const colour = (stream: NodeJS.WriteStream) => {
  const force = process.env.FORCE_COLOR
  if (force !== undefined && force !== "") return force !== "0" && force !== "false"
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false
  return stream.isTTY === true
}

// The CLI prints through Console; log lines come from `serve`, whose server installs its own one-line format (the
// runtime's multi-line pretty logger would replace it and spread each request over several lines).
NodeRuntime.runMain(
  run(process.argv, {
    color: { stdout: colour(process.stdout), stderr: colour(process.stderr) },
    interactive: process.stderr.isTTY === true
  }).pipe(Effect.provide(NodeContext.layer)),
  { disableErrorReporting: true, disablePrettyLogger: true, teardown }
)
