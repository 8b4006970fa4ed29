/**
 * `orgplane serve`: runs the server until SIGINT/SIGTERM, then says "orgplane stopped" (exit 0). The server (database engine included) is imported only
 * here, when the command runs, so every other command starts without loading it.
 */
import type { Server } from "@orgplane/server"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Net from "node:net"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"

/** The server's documented environment variables: `[name, default, description]`. */
export type Environment = ReadonlyArray<readonly [name: string, defaultValue: string, description: string]>

/** Text read as a number (`NaN` and `Infinity` too, refused later as not integers), or none. */
const parseNumber = (text: string): number | undefined => {
  if (text === "NaN") return Number.NaN
  if (text === "Infinity") return Number.POSITIVE_INFINITY
  if (text === "-Infinity") return Number.NEGATIVE_INFINITY
  if (text.trim() === "") return undefined
  const value = Number(text)
  return Number.isNaN(value) ? undefined : value
}

/**
 * A port, refused in the words scripts already match (not a number, not an integer, out of range:
 * packages/cli/test/fixtures/usage/refusals.json).
 */
const Port = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Number.check(
      Schema.makeFilter((value: number) => Number.isInteger(value) || `Expected an integer, actual ${value}`),
      Schema.makeFilter((value: number) => (value >= 0 && value <= 65535) || "must be an integer from 0 to 65535")
    ),
    {
      decode: SchemaGetter.transformEffect((text: string) => {
        const value = parseNumber(text)
        return value === undefined
          ? Effect.fail(new SchemaIssue.InvalidValue({ message: `Unable to decode ${JSON.stringify(text)} into a number` }, text))
          : Effect.succeed(value)
      }),
      encode: SchemaGetter.transform((value: number) => String(value))
    }
  )
)

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

/** What the chain of causes is read for: a tag, or a Node error code. */
interface Link {
  readonly _tag?: unknown
  readonly code?: unknown
  readonly cause?: unknown
}

const isLink = (value: unknown): value is Link => typeof value === "object" && value !== null

/** The failure, or one of its causes down the chain, that `test` picks. */
const inChain = (error: unknown, test: (error: Link) => boolean): Link | undefined => {
  for (let current = error; isLink(current); current = current.cause) {
    if (test(current)) return current
  }
  return undefined
}

/** The message of the error `test` picks in the chain, when it is an `Error`. */
const messageIn = (error: unknown, test: (error: Link) => boolean) => {
  const found = inChain(error, test)
  return found instanceof Error ? found.message : undefined
}

/** How this CLI is typed where it runs: `pnpm orgplane` from a clone (running its TypeScript sources), else `orgplane`. */
const cliCommand = () => (process.argv[1] ?? "").endsWith(".ts") ? "pnpm orgplane" : "orgplane"

/** The refusal of a port another process listens on, naming it and how to choose another. */
const portInUse = (port: number, host: string) =>
  new CommandFailed({
    error: "port_in_use",
    message: `port ${port} on ${host} is already in use: choose another with --port <n> or ORGPLANE_PORT (--port 0 takes any free one)`
  })

/** Whether another process listens on `host:port`: a probe that cannot listen there (EADDRINUSE) says so. */
const taken = (port: number, host: string) =>
  new Promise<boolean>((resolve) => {
    const probe = Net.createServer()
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "EADDRINUSE"))
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(false)))
  })

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
        const overrides: Server.ServerOptions = {
          ...Inputs.ifSome("port", flags.port),
          ...Inputs.ifSome("host", flags.host),
          ...Inputs.ifSome("dataDir", flags.data),
          ...Inputs.ifSome("databaseUrl", flags.databaseUrl)
        }
        const server = yield* Effect.promise(() => import("@orgplane/server"))
        const settings = yield* Effect.scoped(Effect.map(Layer.build(server.Config.layer(overrides)), (context) => Context.get(context, server.Config.ServerConfig)))
        // A port taken is told before the database is opened (migrations, a data folder's lock): a probe listens on it
        // for a moment. One taken between the probe and the server's own listen is told as the server fails below.
        if (settings.port !== 0 && (yield* Effect.promise(() => taken(settings.port, settings.host)))) {
          return yield* portInUse(settings.port, settings.host)
        }
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(server.Server.layer({ ...overrides, cliCommand: cliCommand() })).pipe(
            Effect.catchCause((cause) => {
              const error = Cause.squash(cause)
              // The durable engine's runner port (with DATABASE_URL) says so itself; any other port in use is the HTTP one.
              const runner = messageIn(error, (current) => current._tag === "RunnerPortInUse")
              if (runner !== undefined) return Effect.fail(new CommandFailed({ error: "port_in_use", message: runner }))
              // Another process (or host) holds the embedded data folder: its message names the folder and the holder.
              const folder = messageIn(error, (current) => current._tag === "DataFolderInUse")
              if (folder !== undefined) return Effect.fail(new CommandFailed({ error: "data_folder_in_use", message: folder }))
              // No encryption key, or keys that do not open the database's secrets: its message names the variable.
              const keys = messageIn(error, (current) => current._tag === "EncryptionKeysUnusable")
              if (keys !== undefined) return Effect.fail(new CommandFailed({ error: "encryption_keys_unusable", message: keys }))
              // The database refused or could not be reached: the reason in one line (a missing role or database, a closed port).
              const database = server.Database.connectFailure(error)
              if (database !== undefined) return Effect.fail(new CommandFailed({ error: "database_unreachable", message: database }))
              return inChain(error, (current) => current.code === "EADDRINUSE") !== undefined
                ? Effect.fail(portInUse(settings.port, settings.host))
                : Effect.failCause(cause)
            })
          )
          return yield* Effect.never
        })).pipe(
          // A requested stop (SIGINT, SIGTERM: Main.ts exits 0 on it) says so once the server has closed, in the
          // server's own log format, so a terminal (and `pnpm start`) ends on a line saying why it ended.
          Effect.onInterrupt(() => Effect.logInfo("orgplane stopped").pipe(Effect.provide(server.loggerLayer(settings))))
        )
      }).pipe(
        // With --json, log lines are JSON: the server keeps a logger its launcher installed (RequestLog.loggerLayer).
        flags.json ? Effect.provideService(References.CurrentLoggers, new Set([Logger.consoleJson])) : (effect) => effect
      )
  })
