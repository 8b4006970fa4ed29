/**
 * HTTP handlers of the Account group: the caller's export and the deletion of their account. Thin by design.
 */
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { currentSession } from "../identity/Authentication.js"
import { Api } from "@orgplane/schema"
import { group } from "../platform/HttpErrors.js"
import { AccountDeletion } from "./AccountDeletion.js"
import { AccountExport } from "./AccountExport.js"

/** The export is a file to keep: `orgplane-account-<user id>-<day>.json`, saved rather than shown. */
const asAttachment = (name: string) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, "content-disposition", `attachment; filename="${name}"`)))

export const AccountHttp = group(Api, "account", (handlers) =>
  Effect.gen(function*() {
    const deletion = yield* AccountDeletion
    const exports = yield* AccountExport
    return handlers
      .handle("export", () =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) =>
          Effect.tap(exports.of({ userId: actor.user.id, sessionId }), (document) =>
            asAttachment(`orgplane-account-${actor.user.id}-${document.exportedAt.toISOString().slice(0, 10)}.json`))))
      .handle("delete", ({ payload }) => Effect.flatMap(currentSession, ({ actor }) => deletion.deleteOwn(actor, payload)))
  }))

export const layer = AccountHttp.pipe(Layer.provide([AccountDeletion.layer, AccountExport.layer]))
