/**
 * The CLI in-process, as a test calls it: `cli(args, env)` runs the command through `run` with its own output, its
 * own environment (through Effect's ConfigProvider) and a fresh config folder, and answers with what a process would
 * have printed and its exit code. Neither the developer's profile nor their variables leak in.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { run, type RunOptions } from "../src/Cli.js"

/** A loopback port that was free a moment ago, from below the ephemeral range (testkit's FreePort.ts). */
export { freePort } from "../../testkit/src/FreePort.js"

export const PASSWORD = "correct horse battery"

export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const json = (result: Result) => JSON.parse(result.stdout)

/** A `--json` answer as the API puts it on the wire: checked against, and typed by, the schema's encoded side. */
export const wire = <S extends Schema.Top>(schema: S, result: Result): S["Encoded"] =>
  Schema.decodeUnknownSync(Schema.toEncoded(schema))(json(result))

const capture = (base: Console.Console, stdout: Array<string>, stderr: Array<string>): Console.Console => {
  const line = (into: Array<string>) => (...args: ReadonlyArray<unknown>) => void into.push(`${args.map(String).join(" ")}\n`)
  const log = line(stdout)
  const error = line(stderr)
  return { ...base, log, info: log, error, warn: error }
}

/** What a running command has printed so far, line by line, for a test waiting on a line before the command ends. */
export interface Output {
  readonly stdout: Array<string>
  readonly stderr: Array<string>
}

/**
 * Each command running in-process holds a listener on the process's stdin while it runs (NodeServices' terminal,
 * removed when it ends); a test that runs a dozen commands at once would otherwise trip Node's warning at 10.
 */
process.stdin.setMaxListeners(64)

/** Runs `orgplane ...args` with exactly the variables in `env`; `output` receives its lines as they are printed. */
export const invoke = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: RunOptions = {},
  output: Output = { stdout: [], stderr: [] }
): Promise<Result> => {
  const { stdout, stderr } = output
  return Effect.runPromise(
    Effect.flatMap(Effect.service(Console.Console), (base) =>
      run(["node", "orgplane", ...args], options).pipe(
        Effect.provideService(Console.Console, capture(base, stdout, stderr)),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
        Effect.provide(NodeServices.layer)
      ))
  ).then((code) => ({ code, stdout: stdout.join(""), stderr: stderr.join("") }))
}

const homes: Array<string> = []

/** A fresh config folder and a CLI bound to it; `env` adds variables. Remove them all with `cleanup`. */
export const fresh = async () => {
  const home = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-cli-"))
  homes.push(home)
  const configDir = Path.join(home, "config")
  const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}, options: RunOptions = {}, output?: Output) =>
    invoke(args, { ORGPLANE_CONFIG_DIR: configDir, ...env }, options, output)
  return { home, configDir, cli }
}

export const cleanup = () => Promise.all(homes.splice(0).map((home) => Fs.rm(home, { recursive: true, force: true })))
