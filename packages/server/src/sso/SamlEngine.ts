/**
 * The SAML engine of SSO sign-in: the SAML service provider (`Saml.ts`, over node-saml) behind the protocol-neutral
 * contract (`Protocol.ts`). `start` sends an AuthnRequest by HTTP-Redirect with the intent's signed state as
 * RelayState, and answers its id for the intent to keep (InResponseTo). `complete` validates the ACS form against
 * that request id, or, IdP-initiated, against none (the connection's `allowIdpInitiated` and RelayState allow-list
 * decide), and answers the NameID and the attributes, with the assertion's ID for the flow to take once.
 */
import type { SsoFailureCode } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { failure, type IntentSecrets, type ProtocolEngine, type Received } from "./Protocol.js"
import { clockSkew, Saml, type SamlProfile, type SamlResponseErrorCode } from "./Saml.js"
import { idpSettingsOf, spSettingsOf } from "./SamlSettings.js"
import { samlUrls } from "./Sso.js"
import type { SsoConnectionRow } from "./SsoRepository.js"

/** Every refusal of the SAML engine is a failure code of the API as it is (the compiler holds the two lists together). */
const codeOf = (code: SamlResponseErrorCode): SsoFailureCode => code

/** How long an assertion whose validity could not be read is remembered as taken. */
const fallbackValidity = Duration.hours(1)

/**
 * The attributes received, and the fields the engine read through its fallbacks (the SAML default attribute names,
 * the emailAddress NameID) under the names the connection's mapping reads, where no attribute of that name came.
 */
const claimsOf = (profile: SamlProfile, connection: SsoConnectionRow): Record<string, unknown> => {
  const claims: Record<string, unknown> = { ...profile.attributes }
  const fill = (name: string, value: string | ReadonlyArray<string> | null) => {
    if (value !== null && (typeof value === "string" || value.length > 0) && claims[name] === undefined) claims[name] = value
  }
  const { mapping } = connection
  fill(mapping.email, profile.email)
  fill(mapping.name, profile.name)
  fill(mapping.givenName, profile.givenName)
  fill(mapping.familyName, profile.familyName)
  fill(mapping.groups, profile.groups)
  return claims
}

export const samlEngine = Effect.gen(function*() {
  const saml = yield* Saml

  const settingsOf = Effect.fn("SamlEngine.settingsOf")(function*(connection: SsoConnectionRow, base: string) {
    if (connection.saml === null) return yield* failure("response_invalid", "The connection is not a SAML connection.")
    const idp = yield* idpSettingsOf(connection.saml)
    if (idp === undefined || idp.certificates.length === 0) {
      return yield* failure("response_invalid", "The connection names no usable IdP (entity id, SSO URL and a signing certificate that parses): set its SAML settings again.")
    }
    return { idp, sp: spSettingsOf(samlUrls(base, connection.id), connection.saml, connection.mapping) }
  })

  const start: ProtocolEngine["start"] = Effect.fn("SamlEngine.start")(function*(connection: SsoConnectionRow, intent: IntentSecrets, base: string) {
    const { idp, sp } = yield* settingsOf(connection, base)
    // An HTTP-POST AuthnRequest needs a page that posts it from the browser; orgplane answers a URL to open.
    if (idp.ssoBinding === "post") {
      return yield* failure("binding_unsupported", "The IdP takes AuthnRequests by HTTP-POST only; orgplane sends them by HTTP-Redirect: enable the HTTP-Redirect binding at the IdP and set the metadata again.")
    }
    const started = yield* saml.startSignIn(idp, sp, intent.state)
    return { url: started.url, samlRequestId: started.requestId }
  })

  const complete: ProtocolEngine["complete"] = Effect.fn("SamlEngine.complete")(function*(
    connection: SsoConnectionRow,
    intent: Parameters<ProtocolEngine["complete"]>[1],
    params: Readonly<Record<string, string>>,
    base: string
  ) {
    const { idp, sp } = yield* settingsOf(connection, base)
    const idpInitiated = intent.idpInitiated === true
    if (!idpInitiated && intent.samlRequestId === null) {
      return yield* failure("in_response_to_mismatch", "This sign-in sent no AuthnRequest (its start failed): start again.")
    }
    const profile = yield* saml.validateResponse(
      idp,
      sp,
      { SAMLResponse: params.SAMLResponse, RelayState: params.RelayState },
      { requestId: idpInitiated ? null : intent.samlRequestId }
    ).pipe(Effect.mapError((error) => failure(codeOf(error.code), error.message)))
    if (profile.assertionId === null && idpInitiated) {
      return yield* failure("response_invalid", "The assertion has no ID, so an IdP-initiated sign-in could be replayed: refused.")
    }
    const expiresAt = profile.notOnOrAfter === null
      ? new Date(Date.now() + Duration.toMillis(fallbackValidity))
      : new Date(profile.notOnOrAfter.getTime() + Duration.toMillis(clockSkew))
    return {
      subject: profile.subject,
      claims: claimsOf(profile, connection),
      singleUse: profile.assertionId === null ? undefined : { id: profile.assertionId, expiresAt }
    } satisfies Received
  })

  return { kind: "saml", start, complete } satisfies ProtocolEngine
})
