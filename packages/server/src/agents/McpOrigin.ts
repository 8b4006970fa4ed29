/**
 * Which browser origins may call `/mcp`: the ones the operator lists (`ORGPLANE_MCP_ALLOWED_ORIGINS`) and the
 * server's own. A request without `Origin` is no browser's and passes (the credential is checked next).
 *
 * The server's own origin is its public URL's when `ORGPLANE_PUBLIC_URL` is set. Without one the server is a local
 * one, and its own origin is the loopback address the request reached: `http://127.0.0.1:8787` with
 * `Host: 127.0.0.1:8787` (so `localhost` and `[::1]` too). Both are read from `Host`, which a page cannot set: a page
 * of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own name in both `Host` and `Origin`,
 * a name that is no loopback one, and is refused. A server reached by another name without a public URL (a LAN
 * address) has no own origin: only the listed ones pass.
 */
import type { ServerSettings } from "../platform/Config.js"

/** A loopback name, with the port when not the scheme's default, as `Host` carries it. */
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/

/** The server's own origin for a request that reached it at `host`, or undefined when it has none there. */
export const ownOrigin = (settings: Pick<ServerSettings, "publicUrl">, host: string | undefined): string | undefined => {
  if (settings.publicUrl !== undefined) return new URL(settings.publicUrl).origin
  const name = host?.toLowerCase()
  return name !== undefined && LOOPBACK_HOST.test(name) ? `http://${name}` : undefined
}

/** Whether a request with these headers may call `/mcp` as far as its `Origin` goes. */
export const admits = (
  allowed: ReadonlySet<string>,
  settings: Pick<ServerSettings, "publicUrl">,
  headers: Readonly<Record<string, string | undefined>>
): boolean => {
  const origin = headers["origin"]
  return origin === undefined || allowed.has(origin) || origin === ownOrigin(settings, headers["host"])
}
