/**
 * What the local commands share (`keys rotate`, `admin reset-password`): they open the server's database directly
 * (DATABASE_URL or `--database-url`, else the embedded one in `--data`, which no running server may hold) with the
 * server's own settings, never the HTTP API. The server package is imported only when such a command runs.
 *
 * Its commands (`keys`, `admin`) are not ported yet: this module waits for them.
 */
import type { Config, Server } from "@orgplane-next/server"
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

type ServerPackage = typeof import("@orgplane-next/server")

/** Runs `use` with the server package, on the configured database with the server's settings (the flags on top). */
export const use = <A, E>(
  flags: { readonly data: Option.Option<string>; readonly databaseUrl: Option.Option<Redacted.Redacted> },
  use: (server: ServerPackage) => Effect.Effect<A, E, SqlClient.SqlClient | Config.ServerConfig>
) =>
  Effect.gen(function*() {
    const overrides: Server.ServerOptions = {
      ...Inputs.ifSome("dataDir", flags.data),
      ...Inputs.ifSome("databaseUrl", flags.databaseUrl)
    }
    const server = yield* Effect.promise(() => import("@orgplane-next/server"))
    return yield* use(server).pipe(Effect.provide(server.Database.layer.pipe(Layer.provideMerge(server.Config.layer(overrides)))))
  })
