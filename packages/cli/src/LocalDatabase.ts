/**
 * What the local commands share (`keys rotate`, `admin reset-password`): they open the server's database directly
 * (DATABASE_URL or `--database-url`, else the embedded one in `--data`, which no running server may hold) with the
 * server's own settings, never the HTTP API. The server package is imported only when such a command runs.
 */
import type { Config as ServerConfig } from "@orgplane/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Inputs from "./Inputs.js"

export const inputs = {
  data: Inputs.optional(Inputs.text("data", {
    placeholder: "<dir>",
    description: "Embedded database folder (overrides ORGPLANE_DATA_DIR; default ./.orgplane/data). Stop the server using it first."
  })),
  databaseUrl: Inputs.optional(Inputs.secret("database-url", {
    placeholder: "<url>",
    description: "Postgres URL instead of the embedded database (overrides DATABASE_URL)."
  }))
}

type Server = typeof import("@orgplane/server")

/** Runs `use` with the server package, on the configured database with the server's settings (the flags on top). */
export const use = <A, E>(
  flags: { readonly data: Option.Option<string>; readonly databaseUrl: Option.Option<Redacted.Redacted<string>> },
  use: (server: Server) => Effect.Effect<A, E, SqlClient.SqlClient | ServerConfig.ServerConfig>
) =>
  Effect.gen(function*() {
    const overrides: ServerConfig.Options = {
      ...Inputs.ifSome("dataDir", flags.data),
      ...Inputs.ifSome("databaseUrl", flags.databaseUrl)
    }
    const server = yield* Effect.promise(() => import("@orgplane/server"))
    return yield* use(server).pipe(Effect.provide(server.Database.layer.pipe(Layer.provideMerge(server.Config.layer(overrides)))))
  })
