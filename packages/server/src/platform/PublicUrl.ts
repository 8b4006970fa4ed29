/** The server's public base URL, for what it publishes to others (OAuth redirect URIs, the client metadata document). */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { publicUrl, ServerConfig, type ServerSettings } from "./Config.js"

const HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i

/**
 * The server's base URL for what it publishes (callbacks, SCIM's base, the MCP resource): `ORGPLANE_PUBLIC_URL`
 * (a host's mount included), else the address the request reached (its `Host`, over http: a server without a public
 * URL is a local one) under the mount (`basePath`), else the configured host and port under the mount.
 */
export const baseUrlOf = (settings: Pick<ServerSettings, "publicUrl" | "host" | "port" | "basePath">, host: string | undefined): string => {
  if (settings.publicUrl !== undefined || host === undefined || !HOST.test(host)) return publicUrl(settings)
  return `http://${host}${settings.basePath}`
}

/** The server's base URL for the request being handled: `ORGPLANE_PUBLIC_URL`, else the address it reached under the mount. */
export const requestBaseUrl = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  return baseUrlOf(settings, request.headers.host)
})
