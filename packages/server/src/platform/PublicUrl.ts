/** The server's public base URL, for what it publishes to others (OAuth redirect URIs, the client metadata document). */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { ServerConfig, type ServerSettings } from "./Config.js"

const HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i

/**
 * The server's base URL for the callback and the client metadata document: `ORGPLANE_PUBLIC_URL`, else the address
 * the request reached (its `Host`, over http: a server without a public URL is a local one), else the configured
 * host and port.
 */
export const baseUrlOf = (settings: Pick<ServerSettings, "publicUrl" | "host" | "port">, host: string | undefined): string => {
  if (settings.publicUrl !== undefined) return settings.publicUrl.replace(/\/+$/, "")
  if (host !== undefined && HOST.test(host)) return `http://${host}`
  return `http://${settings.host}:${settings.port}`
}

/** The server's base URL for the request being handled: `ORGPLANE_PUBLIC_URL`, else the address it reached. */
export const requestBaseUrl = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  return baseUrlOf(settings, request.headers.host)
})
