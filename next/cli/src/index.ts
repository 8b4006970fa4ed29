/** The `orgplane` CLI for programmatic use: the command tree and a runner that answers with an exit code. */
export { make, run, type RunOptions, suggest } from "./Cli.js"
export { ExitCodes } from "./Errors.js"
export { VERSION } from "./Version.js"
