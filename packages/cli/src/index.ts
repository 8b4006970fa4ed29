/** The `orgplane` CLI for programmatic use: the command tree and a runner that answers with an exit code. */
export { command, make, run } from "./Cli.js"
export { ExitCodes } from "./Errors.js"
