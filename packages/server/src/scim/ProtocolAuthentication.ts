/**
 * The SCIM protocol's middleware: a bearer token of the path's connection (not revoked, not expired) becomes the
 * `CurrentScimClient`; anything else is a SCIM 401, so a token of another connection or organization learns nothing,
 * with the `WWW-Authenticate` challenge RFC 7644 §2 asks for (RFC 6750 §3: `error="invalid_token"` once one was sent).
 * An organization no longer on the enterprise plan gets a SCIM 403 (its directory should stop, not retry). The token's
 * `lastUsedAt` is written off the request path, at most once a minute per token, as API keys' are.
 *
 * The middleware wraps the endpoint: `scimToken(httpEffect, { credential })` provides `CurrentScimClient` to it.
 */
import {
  CurrentScimClient,
  type OrganizationId,
  ScimAuthentication,
  scimChallenge,
  type ScimClient,
  type ScimConnectionId,
  ScimForbidden,
  type ScimTokenId,
  ScimServiceUnavailable,
  ScimUnauthorized
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import { ScimTokenStanding } from "../platform/Authority.js"
import { Crypto } from "../platform/Crypto.js"
import { orUnavailable } from "../platform/Sql.js"
import { now } from "../platform/Time.js"

/** The 401, with its challenge (`refusedToken`: a token was sent and is not one this connection takes). */
const unauthorized = (refusedToken: boolean) =>
  Effect.andThen(
    HttpEffect.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", scimChallenge(refusedToken)))),
    Effect.fail(new ScimUnauthorized({ detail: "A valid SCIM token of this connection is required." }))
  )
const planRequired = new ScimForbidden({
  detail: "The organization's plan no longer includes directory provisioning (SCIM): it needs the enterprise plan."
})

/** A token records its last use at most this often, so a busy directory does not write on every request. */
const TOUCH_INTERVAL_MILLIS = 60_000
/** Bounds the memory of recent touches; past it, the map starts over (a few extra writes, nothing more). */
const MAX_REMEMBERED_TOUCHES = 10_000

/**
 * The middleware, and how a directory's token is read again when its write commits (platform/Authority.ts): still
 * unrevoked and unexpired, locked FOR SHARE against its revocation (an UPDATE) and its connection's deletion (which
 * deletes it).
 */
export const layer = Layer.effectContext(
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const sql = yield* SqlClient.SqlClient
    // Touches run in the server's scope: they never hold up a response, and stop with the server.
    const touches = yield* FiberSet.make()
    const lastTouched = new Map<string, number>()
    const standing = (client: ScimClient, at: Date) =>
      Effect.map(
        sql<{ live: boolean }>`SELECT EXISTS (
          SELECT 1 FROM scim_tokens t
          WHERE t.organization_id = ${client.organizationId} AND t.id = ${client.tokenId} AND t.connection_id = ${client.connectionId}
            AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ${at})
          FOR SHARE) AS live`,
        (rows) => rows[0]?.live === true
      )
    /** The client a directory's bearer token stands for, or the SCIM error that answers. */
    const authenticate = (token: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!/^bearer /i.test(request.headers["authorization"] ?? "")) return yield* unauthorized(false)
        const value = Redacted.value(token).trim()
        const connectionId = /^\/scim\/v2\/([^/?]+)/.exec(request.url)?.[1]
        if (value === "" || connectionId === undefined) return yield* unauthorized(value !== "")
        const at = yield* now
        const rows = yield* orUnavailable(sql<{ id: string; organizationId: string; connectionId: string; lastUsedAt: Date | null; plan: string }>`
          SELECT t.id, t.organization_id, t.connection_id, t.last_used_at, o.plan
          FROM scim_tokens t JOIN organizations o ON o.id = t.organization_id AND o.deleted_at IS NULL
          WHERE t.token_hash = ${crypto.hashToken(value)} AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ${at})`).pipe(
          Effect.mapError((error) => new ScimServiceUnavailable({ detail: error.message }))
        )
        const found = rows[0]
        if (found === undefined || found.connectionId !== decodeURIComponent(connectionId)) return yield* unauthorized(true)
        if (found.plan !== "enterprise") return yield* planRequired
        const last = Math.max(found.lastUsedAt?.getTime() ?? 0, lastTouched.get(found.id) ?? 0)
        if (at.getTime() - last > TOUCH_INTERVAL_MILLIS) {
          if (lastTouched.size >= MAX_REMEMBERED_TOUCHES) lastTouched.clear()
          lastTouched.set(found.id, at.getTime())
          yield* FiberSet.run(
            touches,
            Effect.ignore(sql`UPDATE scim_tokens SET last_used_at = ${at}
                                    WHERE organization_id = ${found.organizationId} AND id = ${found.id}`, { log: "Debug" })
          )
        }
        return {
          organizationId: found.organizationId as OrganizationId,
          connectionId: found.connectionId as ScimConnectionId,
          tokenId: found.id as ScimTokenId
        }
      })
    return Context.make(ScimTokenStanding, standing).pipe(Context.add(ScimAuthentication, ScimAuthentication.of({
      scimToken: (httpEffect, { credential }) =>
        Effect.flatMap(authenticate(credential), (client) => Effect.provideService(httpEffect, CurrentScimClient, client))
    })))
  })
)
