/**
 * `orgplane serve`: runs the server until SIGINT/SIGTERM. The server (database engine included) is imported only
 * here, when the command runs, so every other command starts without loading it.
 */
import { Command, HelpDoc, Options, Span } from "@effect/cli"
import { Array as Arr, Console, Context, Effect, FiberRef, HashSet, Layer, Logger, Option, Redacted } from "effect"
import type { ServerSettings } from "@orgplane/server"
import { reported, UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"

/** The server's documented environment variables: `[name, default, description]`. */
export type Environment = ReadonlyArray<readonly [name: string, defaultValue: string, description: string]>

const flags = {
  port: Options.integer("port").pipe(Options.withDescription("Port to listen on (overrides ORGPLANE_PORT; default 8787)."), Options.optional),
  host: Options.text("host").pipe(Options.withDescription("Interface to bind (overrides ORGPLANE_HOST; default 127.0.0.1)."), Options.optional),
  data: Options.text("data").pipe(
    Options.withDescription("Embedded database folder, or 'memory' for a throwaway database (overrides ORGPLANE_DATA_DIR; default ./.orgplane/data)."),
    Options.optional
  ),
  databaseUrl: Options.redacted("database-url").pipe(
    Options.withDescription("Postgres URL instead of the embedded database (overrides DATABASE_URL)."),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Log JSON lines instead of text."))
}

const description = (environment: Environment | undefined) => {
  const variables = (environment ?? []).map(([name, defaultValue, text]): [Span.Span, HelpDoc.HelpDoc] => [
    Span.text(name),
    HelpDoc.p(`${text} Default: ${defaultValue}.`)
  ])
  return HelpDoc.blocks([
    HelpDoc.p(
      "Run the orgplane server: the HTTP API, its OpenAPI document (/openapi.json) and reference (/docs). Stops gracefully on SIGINT or SIGTERM. Settings come from the environment variables below; flags override them."
    ),
    ...(Arr.isNonEmptyArray(variables) ? [HelpDoc.h2("ENVIRONMENT"), HelpDoc.descriptionList(variables)] : [])
  ])
}

/** The address to show people: a wildcard bind is reachable on loopback. */
const displayUrl = (settings: ServerSettings) => {
  const host = settings.host === "0.0.0.0" || settings.host === "::" ? "127.0.0.1" : settings.host
  return `http://${host.includes(":") ? `[${host}]` : host}:${settings.port}`
}

const serve = (flags: {
  readonly port: Option.Option<number>
  readonly host: Option.Option<string>
  readonly data: Option.Option<string>
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly json: boolean
}) =>
  Effect.gen(function*() {
    if (Option.isSome(flags.port) && (flags.port.value < 0 || flags.port.value > 65535)) {
      return yield* new UsageError({ message: "--port: must be from 0 to 65535" })
    }
    const overrides: Partial<ServerSettings> = {
      ...Inputs.ifSome("port", flags.port),
      ...Inputs.ifSome("host", flags.host),
      ...Inputs.ifSome("dataDir", flags.data),
      ...Inputs.ifSome("databaseUrl", flags.databaseUrl)
    }
    const server = yield* Effect.promise(() => import("@orgplane/server"))
    yield* Effect.scoped(Effect.gen(function*() {
      const settings = Context.get(yield* Layer.build(server.configLayer(overrides)), server.ServerConfig)
      yield* Layer.build(server.layer(overrides))
      if (!flags.json) yield* Console.log(`API reference: ${displayUrl(settings)}/docs`)
      return yield* Effect.never
    }))
  }).pipe(
    reported({ json: flags.json }),
    flags.json ? Effect.locally(FiberRef.currentLoggers, HashSet.make(Logger.withConsoleLog(Logger.jsonLogger))) : (effect) => effect
  )

/** `environment` comes from the server package; it is passed in so that only `serve --help` needs to load it. */
export const make = (environment?: Environment) =>
  Command.make("serve", flags, serve).pipe(Command.withDescription(description(environment)))
