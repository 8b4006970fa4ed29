/**
 * The public routes of a SAML connection: its Assertion Consumer Service (`POST /v1/sso/saml/{connectionId}/acs`),
 * which hands the IdP's Response to the sign-in flow (the intent its RelayState names, or an IdP-initiated sign-in
 * when the Response answers no request), and its SP metadata (`GET /v1/sso/saml/{connectionId}/metadata`).
 *
 * The routes' handlers are in Http.ts.
 */
import { InvalidRequest, type SamlAcsForm, type SsoConnectionId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { CursorKey } from "../platform/Keyset.js"
import { stateKeyOf, verifyState } from "../platform/OAuthState.js"
import { orUnavailable } from "../platform/Sql.js"
import { Saml } from "./Saml.js"
import { spSettingsOf } from "./SamlSettings.js"
import { SignIn } from "./SignIn.js"
import { connectionNotFound, samlUrls } from "./Sso.js"
import { SsoRepository } from "./SsoRepository.js"

const make = Effect.gen(function*() {
  const connections = yield* SsoRepository
  const signIn = yield* SignIn
  const saml = yield* Saml
  const stateKey = stateKeyOf(yield* CursorKey, "orgplane/sso-state")

  /** The SAML connection the route names, in whatever organization (the IdP knows it by its URLs alone). */
  const samlConnection = Effect.fn("SamlAcs.samlConnection")(function*(id: SsoConnectionId) {
    const found = yield* orUnavailable(connections.findConnectionById(id))
    if (Option.isNone(found) || found.value.kind !== "saml" || found.value.saml === null) return yield* connectionNotFound()
    return found.value
  })

  const acs = Effect.fn("SamlAcs.acs")(function*(id: SsoConnectionId, form: SamlAcsForm, base: string) {
    const connection = yield* samlConnection(id)
    // A sign-in of another organization posted here: this connection is not the one it knows.
    const named = form.RelayState === undefined ? undefined : verifyState(stateKey, form.RelayState)
    if (named !== undefined && named.organizationId !== connection.organizationId) return yield* connectionNotFound()
    const params: Record<string, string> = { SAMLResponse: form.SAMLResponse }
    if (form.RelayState !== undefined) params.RelayState = form.RelayState
    // A form that is no SAML Response is the client's error (400), found before any intent is spent.
    const inResponseTo = yield* saml.inResponseToOf(params).pipe(
      Effect.mapError((error) => InvalidRequest.field(["SAMLResponse"], error.message))
    )
    return yield* signIn.answer(
      inResponseTo === null
        ? signIn.completeIdpInitiated(connection, params, base)
        : signIn.complete(form.RelayState ?? "", params, base, connection.id)
    )
  })

  const metadata = Effect.fn("SamlAcs.metadata")((id: SsoConnectionId, base: string) =>
    Effect.flatMap(samlConnection(id), (connection) => saml.spMetadata(spSettingsOf(samlUrls(base, connection.id), connection.saml!, connection.mapping))))

  return { acs, metadata } as const
})

export class SamlAcs extends Context.Service<SamlAcs>()("@orgplane/server/sso/SamlAcs", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(SsoRepository.layer))
}
