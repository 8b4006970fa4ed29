/** The `orgplane` command tree, and `run`: parse the arguments, run the command, and answer with an exit code. */
import { CliConfig, Command, ValidationError } from "@effect/cli"
import { Console, Effect } from "effect"
import { apiKeys } from "./commands/apiKeys.js"
import { auth } from "./commands/auth.js"
import { bootstrap } from "./commands/bootstrap.js"
import { invitations } from "./commands/invitations.js"
import { members } from "./commands/members.js"
import { orgs } from "./commands/orgs.js"
import * as Serve from "./commands/serve.js"
import { teams } from "./commands/teams.js"
import { whoami } from "./commands/whoami.js"
import { group } from "./commands/group.js"
import { ExitCodes, Reported } from "./Errors.js"
import * as Output from "./Output.js"
import { VERSION } from "./Version.js"

/** The root command. `serveEnvironment` is the server's list of environment variables, shown by `serve --help`. */
export const make = (options: { readonly serveEnvironment?: Serve.Environment | undefined } = {}) =>
  group("orgplane", "Administer an orgplane control plane: run the server, sign in, manage organizations, members, teams, invitations and API keys.", [
    Serve.make(options.serveEnvironment),
    auth,
    whoami,
    orgs,
    members,
    teams,
    invitations,
    apiKeys,
    bootstrap
  ])

export const command = make()

const synopsis: ReadonlyArray<readonly [string, string]> = [
  ["serve [--port N] [--host H] [--data DIR|memory] [--database-url URL]", "Run the server"],
  ["auth signup --email E --name N [--password P]", "Create an account; its session is saved"],
  ["auth login --email E [--password P]", "Sign in; the session is saved"],
  ["auth logout", "Revoke the session and forget it"],
  ["whoami", "Show the user, active organization and role"],
  ["orgs create <name>", "Create an organization and switch to it"],
  ["orgs switch <organizationId>", "Switch the active organization"],
  ["members list [--role R] [--query T] [--include-removed]", "List the members (paged: --limit, --cursor, --all)"],
  ["members role <memberId> <owner|admin|member>", "Change a member's role"],
  ["members remove <memberId>", "Remove a member (your own id: leave)"],
  ["members transfer-ownership <memberId>", "Make an admin owner; you become admin"],
  ["teams create <name> [--member ID]...", "Create a team"],
  ["teams list [--query T] [--member ID]", "List the teams (paged like members list)"],
  ["teams add <teamId> <memberId>...", "Add members to a team"],
  ["teams remove <teamId> <memberId>", "Take a member out of a team"],
  ["teams rename <teamId> <name>", "Rename a team"],
  ["teams delete <teamId>", "Delete a team"],
  ["invitations create <email> [--role member|admin]", "Invite someone (the token is printed once)"],
  ["invitations list [--status S]", "List the invitations (paged like members list)"],
  ["invitations cancel <invitationId>", "Cancel a pending invitation"],
  ["invitations accept <token> [--sign-up --name N]", "Join with an invite token (or as a new account)"],
  ["api-keys create <name> [--expires-at ISO]", "Create an API key (printed once)"],
  ["api-keys list [--limit N] [--cursor C] [--all]", "List the organization's API keys"],
  ["api-keys revoke <apiKeyId>", "Revoke an API key"],
  ["bootstrap --workspace-name N [--role R]... [--owner-email E]", "Create a provisional workspace with claim links"],
  ["bootstrap claim <token>", "Join a workspace with a claim token"]
]

const globalFlags: ReadonlyArray<readonly [string, string]> = [
  ["--url URL", "Server (ORGPLANE_URL, else the profile's, else http://127.0.0.1:8787)"],
  ["--token TOKEN", "Session token (ORGPLANE_TOKEN, else the profile's)"],
  ["--api-key KEY", "Organization API key (ORGPLANE_API_KEY, else the profile's)"],
  ["--profile NAME", "Profile in the config file (ORGPLANE_PROFILE, else 'default')"],
  ["--json", "Print the result as JSON"]
]

const indent = (text: string) => text.split("\n").map((line) => `  ${line}`).join("\n")

/**
 * `orgplane --help`: a short overview. The parser's own listing repeats every global flag on every line, which
 * buries the commands; each command's own `--help` still comes from the parser.
 */
export const overview = [
  `orgplane ${VERSION}: administer an orgplane control plane.`,
  "",
  "USAGE",
  "  orgplane <command> [<subcommand>] [flags]",
  "",
  "COMMANDS",
  indent(Output.fields(synopsis)),
  "",
  "GLOBAL FLAGS (every command but serve, whose --json switches to JSON logs)",
  indent(Output.fields(globalFlags)),
  "",
  "Run 'orgplane <command> --help' for a command's flags ('serve --help' lists the server's environment variables).",
  "Also: --version, --completions bash|zsh|fish|sh.",
  "Exit codes: 0 ok, 1 error, 2 usage error, 3 not authenticated, 4 not found, 5 cannot reach the server."
].join("\n")

/** The first word that is not a flag: the command the user asked for. */
const requested = (args: ReadonlyArray<string>) => args.find((arg) => !arg.startsWith("-"))

/**
 * Runs the CLI on `argv` (as in `process.argv`: runtime and script first) and succeeds with the exit code:
 * 0 ok, 1 error, 2 usage, 3 not authenticated, 4 not found, 5 connection failure.
 */
export const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const args = argv.slice(2)
    if (args.length === 0 || (args.length === 1 && (args[0] === "--help" || args[0] === "-h"))) {
      yield* Console.log(overview)
      return ExitCodes.ok
    }
    // Only `serve` pays for loading the server, which owns the list of its environment variables.
    const serveEnvironment = requested(args) === "serve"
      ? (yield* Effect.promise(() => import("@orgplane/server"))).environment
      : undefined
    const cli = Command.run(make({ serveEnvironment }), { name: "orgplane", version: VERSION })
    return yield* cli(argv).pipe(
      Effect.as(ExitCodes.ok),
      // Types in usage lines (`--url text`) only lengthen them; built-in flags are described in the README.
      Effect.provide(CliConfig.layer({ showTypes: false, showBuiltIns: false }))
    )
  }).pipe(
    Effect.catchAll((error) => {
      if (error instanceof Reported) return Effect.succeed(error.code)
      // The parser has already printed what was wrong.
      if (ValidationError.isValidationError(error)) return Effect.succeed(ExitCodes.usage)
      return Effect.as(Console.error(`error: ${String(error)}`), ExitCodes.error)
    }),
    Effect.catchAllDefect((defect) => Effect.as(Console.error(`error: unexpected failure: ${String(defect)}`), ExitCodes.error))
  )
