/**
 * What answers at a server URL: an orgplane server (and its version) or something else. Asked with `GET /health`,
 * which needs no credential, only when a command cannot go on: its answer could not be read, or it had no
 * credential to send. A wrong `--url` is then told apart from a server of another version, and a server that is
 * down from a missing login.
 */
import * as Client from "@orgplane/client"
import { SystemApi } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import { VERSION } from "./Version.js"

export type Identity =
  | { readonly _tag: "Orgplane"; readonly version: string }
  /** Something answered HTTP (with this status, when it got that far) but not as orgplane's health check does. */
  | { readonly _tag: "Other"; readonly status: number | undefined }

/** Who answers at `url`; fails with the request's error when nothing does (refused, unknown host, timeout). */
export const identify = (url: string): Effect.Effect<Identity, HttpClientError.HttpClientError> =>
  Effect.gen(function*() {
    // The one group it calls: the client of the whole API would read the schemas of every endpoint first.
    const client = yield* Client.makeFor([SystemApi], { baseUrl: url, userAgent: `orgplane-cli/${VERSION}`, maxRetries: 0, timeout: "5 seconds" })
    return yield* client.system.health().pipe(
      Effect.map((health): Identity => ({ _tag: "Orgplane", version: health.version })),
      Effect.catch((error) =>
        HttpClientError.isHttpClientError(error) && error.response === undefined
          ? Effect.fail(error)
          : Effect.succeed<Identity>({
            _tag: "Other",
            status: HttpClientError.isHttpClientError(error) ? error.response?.status : undefined
          })
      )
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))
