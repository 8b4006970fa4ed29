/**
 * `orgplane serve`: runs the server until SIGINT/SIGTERM. The server (database engine included) is imported only
 * here, when the command runs, so every other command starts without loading it.
 */
import type { ServerOptions } from "@orgplane/server"
import { Cause, Context, Effect, FiberRef, HashSet, Layer, Logger, Schema } from "effect"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"

/** The server's documented environment variables: `[name, default, description]`. */
export type Environment = ReadonlyArray<readonly [name: string, defaultValue: string, description: string]>

const Port = Schema.compose(Schema.NumberFromString, Schema.Int.pipe(Schema.between(0, 65535, { message: () => "must be an integer from 0 to 65535" })))

const inputs = {
  port: Inputs.optional(Inputs.text("port", {
    placeholder: "<n>",
    description: "Port to listen on, 0 for any free one (overrides ORGPLANE_PORT; default 8787).",
    schema: Port
  })),
  host: Inputs.optional(Inputs.text("host", { placeholder: "<address>", description: "Interface to bind (overrides ORGPLANE_HOST; default 127.0.0.1)." })),
  data: Inputs.optional(Inputs.text("data", {
    placeholder: "<dir|memory>",
    description: "Embedded database folder, or 'memory' for a throwaway database (overrides ORGPLANE_DATA_DIR; default ./.orgplane/data)."
  })),
  databaseUrl: Inputs.optional(Inputs.secret("database-url", {
    placeholder: "<url>",
    description: "Postgres URL instead of the embedded database (overrides DATABASE_URL)."
  })),
  json: Inputs.boolean("json", { description: "Log JSON lines instead of text." })
}

/** The failure, or one of its causes down the chain, that `test` picks. */
const inChain = (error: unknown, test: (error: { readonly code?: unknown; readonly _tag?: unknown }) => boolean): unknown => {
  for (let current = error; typeof current === "object" && current !== null; current = (current as { cause?: unknown }).cause) {
    if (test(current)) return current
  }
  return undefined
}

/** How this CLI is typed where it runs: `pnpm orgplane` from a clone (running its TypeScript sources), else `orgplane`. */
const cliCommand = () => (process.argv[1] ?? "").endsWith(".ts") ? "pnpm orgplane" : "orgplane"

/** `environment` comes from the server package; it is passed in so that only `serve --help` needs to load it. */
export const make = (environment?: Environment) =>
  Commands.leaf("serve", {
    summary: "Run the server: the HTTP API, its OpenAPI document (/openapi.json) and reference (/docs).",
    details: [
      "Stops gracefully on SIGINT or SIGTERM. Settings come from the environment variables below; flags override them. Without --database-url or DATABASE_URL, the data lives in an embedded database (PGlite) in --data."
    ],
    global: false,
    inputs,
    sections: () => environment === undefined ? [] : [["ENVIRONMENT", environment.map(([name, defaultValue, text]) => [name, `${text} Default: ${defaultValue}.`])]],
    run: (flags) =>
      Effect.gen(function*() {
        const overrides: ServerOptions = {
          ...Inputs.ifSome("port", flags.port),
          ...Inputs.ifSome("host", flags.host),
          ...Inputs.ifSome("dataDir", flags.data),
          ...Inputs.ifSome("databaseUrl", flags.databaseUrl)
        }
        const server = yield* Effect.promise(() => import("@orgplane/server"))
        yield* Effect.scoped(Effect.gen(function*() {
          const settings = Context.get(yield* Layer.build(server.configLayer(overrides)), server.ServerConfig)
          yield* Layer.build(server.layer({ ...overrides, cliCommand: cliCommand() })).pipe(
            Effect.catchAllCause((cause) => {
              const error = Cause.squash(cause)
              // The durable engine's runner port (with DATABASE_URL) says so itself; any other port in use is the HTTP one.
              const runner = inChain(error, (current) => current._tag === "RunnerPortInUse")
              if (runner instanceof Error) return new CommandFailed({ error: "port_in_use", message: runner.message })
              // Another process (or host) holds the embedded data folder: its message names the folder and the holder.
              const folder = inChain(error, (current) => current._tag === "DataFolderInUse")
              if (folder instanceof Error) return new CommandFailed({ error: "data_folder_in_use", message: folder.message })
              // No encryption key, or keys that do not open the database's secrets: its message names the variable.
              const keys = inChain(error, (current) => current._tag === "EncryptionKeysUnusable")
              if (keys instanceof Error) return new CommandFailed({ error: "encryption_keys_unusable", message: keys.message })
              return inChain(error, (current) => current.code === "EADDRINUSE") !== undefined
                ? new CommandFailed({
                  error: "port_in_use",
                  message: `port ${settings.port} on ${settings.host} is already in use: choose another with --port <n> or ORGPLANE_PORT (--port 0 takes any free one)`
                })
                : Effect.failCause(cause)
            })
          )
          return yield* Effect.never
        }))
      }).pipe(
        // A built-in FiberRef: Effect 4's `References.CurrentLoggers` (issue 46, step 3).
        flags.json ? Effect.locally(FiberRef.currentLoggers, HashSet.make(Logger.withConsoleLog(Logger.jsonLogger))) : (effect) => effect
      )
  })
