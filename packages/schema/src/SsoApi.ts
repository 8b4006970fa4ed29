/**
 * SSO: the organization's verified domains and sign-in connections (enterprise plan; owners and admins), and the
 * public sign-in flow (`SsoSignInApi`: home-realm discovery, start, the IdP's callback, the one-time code exchange).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import {
  ConflictResponse,
  DnsLookupFailedResponse,
  DomainVerificationConflictResponse,
  DomainVerificationFailedResponse,
  ForbiddenResponse,
  NotFoundResponse,
  PlanRequiredResponse,
  RateLimitedResponse,
  ServiceUnavailableResponse,
  SsoSignInFailedResponse
} from "./Errors.js"
import { allErrors } from "./Common.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, sessionOnly } from "./Security.js"
import {
  CreateSsoConnectionRequest,
  SamlAcsForm,
  DomainVerificationResponse,
  SsoCallbackQuery,
  SsoCallbackResult,
  SsoConnectionList,
  SsoConnectionPath,
  SsoConnectionResponse,
  SsoDiscoverRequest,
  SsoDiscovery,
  SsoDomain,
  SsoDomainList,
  SsoExchangeRequest,
  SetSsoPolicyRequest,
  SsoPolicyResponse,
  SsoSignInRequest,
  SsoTestPath,
  SsoTestResponse,
  StartedSsoTest,
  StartedSsoSignIn,
  UpdateSsoConnectionRequest,
  VerifyDomainResponse
} from "./Sso.js"
import { AuthResult } from "./Users.js"
import { audits, notAudited } from "./AuditCatalog.js"

const notFound = "404 `sso_connection_not_found` (also for another organization's connection)"
const domainPath = Schema.Struct({ domain: SsoDomain.annotate({ examples: ["acme.example"] }) })
const SsoDomainQuery = Schema.Struct({
  domain: Schema.optionalKey(SsoDomain).annotateKey({
    description: "The domain; default: the organization's only unverified domain."
  })
}).annotate({ examples: [{ domain: "acme.example" }] })

/** The errors every operation of SsoApi may answer (Effect 4 declares errors on endpoints, not groups). */
const ssoErrors = [ForbiddenResponse, PlanRequiredResponse] as const

export class SsoApi extends HttpApiGroup.make("sso")
  .add(
    HttpApiEndpoint.get("listDomains", "/v1/sso/domains", { success: SsoDomainList, error: ssoErrors }).pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "List the SSO domains")
      .annotate(
        OpenApi.Description,
        "Every email domain of the organization with its verification state, oldest first: an organization has at most 50, so the list is whole (not paginated). A domain is added by naming it in `request-domain-verification` or in a connection's `domains`. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.post("requestDomainVerification", "/v1/sso/request-domain-verification", { query: SsoDomainQuery, success: DomainVerificationResponse, error: ssoErrors }).pipe(audits("sso.domain.verification.request"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Request SSO domain verification")
      .annotate(
        OpenApi.Description,
        "Answers the DNS TXT record to publish to prove the organization owns a domain: `recordName` `_orgplane-verification.<domain>`, `recordValue` `orgplane-verification=<random token>`, and when the request expires (7 days). Asking again before then answers the same record; afterwards, a new one. No body. The query parameter `domain` names the domain (added to the organization's domains if new); without it, the organization's only unverified domain.\n\nErrors: 400 `invalid_request` on `domain` without it when the organization has no unverified domain or several (the message names them), and for a new domain beyond the organization's 50."
      )
  )
  .add(
    HttpApiEndpoint.post("verifyDomain", "/v1/sso/verify-domain", { query: SsoDomainQuery, success: VerifyDomainResponse, error: [DomainVerificationConflictResponse, DomainVerificationFailedResponse, DnsLookupFailedResponse, ...ssoErrors] }).pipe(sessionOnly, audits("sso.domain.verify"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Verify an SSO domain")
      .annotate(
        OpenApi.Description,
        "Looks up the TXT records at the requested record name and marks the domain verified when one of them is the expected value. No body (as the spec gives it); the query parameter `domain` names the domain, else the organization's only unverified domain; a session bearer token (API keys answer 403 `session_required`). Success: `{verified: true, domain, verifiedAt}`; verifying a verified domain again answers the same.\n\nErrors, within the bodies the spec allows this operation (`invalid_request`, `unauthorized`, `enterprise_plan_required`, `organization_not_found` and `{message, reason}`): 400 `invalid_request` on `domain` when it names a domain that is not one of the organization's, or, without it, when no domain or several are unverified; 409 with `reason` `domain_verification_not_requested` when no record was requested or the request expired, `domain_verification_failed` when no TXT record at `recordName` holds `expectedValue` (the body names both, and the values found), `sso_domain_taken` when another organization verified the domain first; 502 with `reason` `dns_lookup_failed` when no DNS server answered."
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteDomain", "/v1/sso/domains/:domain", { params: domainPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ConflictResponse, ...ssoErrors] }).pipe(audits("sso.domain.delete"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Delete an SSO domain")
      .annotate(
        OpenApi.Description,
        "Removes a domain (and its verification) from the organization and from its connections.\n\nErrors: 404 `sso_domain_not_found`; 409 `sso_domain_in_use` while an active connection serves it (deactivate the connection first)."
      )
  )
  .add(
    HttpApiEndpoint.post("createConnection", "/v1/sso/connections", { payload: CreateSsoConnectionRequest, success: SsoConnectionResponse.pipe(HttpApiSchema.status(201)), error: [NotFoundResponse, ...ssoErrors] }).pipe(audits("sso.connection.create"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Create an SSO connection")
      .annotate(
        OpenApi.Description,
        "Creates a `draft` connection: `kind` `oidc` with `oidc` settings (issuer, or manual `endpoints`; client id and secret; scopes; token endpoint authentication) or `saml` with `saml` settings (metadata URL, metadata XML or manual entity id, SSO URL and certificates). The client secret is stored encrypted and never answered (`clientSecretSet`). Nothing is fetched yet: the provider is reached by the test (`POST /v1/sso/connections/{connectionId}/tests`). `sp` answers what to register at the provider. `jit` defaults to enabled with role `member` and no teams; `mapping` to the protocol's usual claim names. Several connections may serve the same domains; only one may be active per domain.\n\nErrors: 400 on a team of `jit.defaultTeamIds` or `mapping.groupRules` that is not the organization's, or a SAML certificate that does not parse; 400 `invalid_request` when the organization has 50 connections already, or when the new domains would take it past 50 domains (the limits hold under concurrent requests: each addition waits for the one before it); 404 none."
      )
  )
  .add(
    HttpApiEndpoint.get("listConnections", "/v1/sso/connections", { success: SsoConnectionList, error: ssoErrors }).pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "List the SSO connections")
      .annotate(OpenApi.Description, "Every connection of the organization, oldest first: an organization has at most 50, so the list is whole (not paginated). Changes nothing.\n\nErrors: none beyond the group's.")
  )
  .add(
    HttpApiEndpoint.get("getConnection", "/v1/sso/connections/:connectionId", { params: SsoConnectionPath, success: SsoConnectionResponse, error: [NotFoundResponse, ...ssoErrors] }).pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Get an SSO connection")
      .annotate(OpenApi.Description, `One connection with its settings (no secret), its domains and its latest test. Changes nothing.\n\nErrors: ${notFound}.`)
  )
  .add(
    HttpApiEndpoint.patch("updateConnection", "/v1/sso/connections/:connectionId", { params: SsoConnectionPath, payload: UpdateSsoConnectionRequest, success: SsoConnectionResponse, error: [NotFoundResponse, ConflictResponse, ...ssoErrors] }).pipe(audits("sso.connection.update"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Update an SSO connection")
      .annotate(
        OpenApi.Description,
        `Changes the fields given. A change of \`domains\`, \`mapping\`, \`oidc\` or \`saml\` bumps \`configRevision\`, so the connection needs a new test before it can be activated. An active connection takes changes of \`name\` and \`jit\` only: a settings change would serve an untested configuration (or cut sign-in), so it answers 409 \`sso_connection_active\`; the way is to create a second connection, test it, activate it (which needs the domains free: deactivate the old one first, in that order, seconds apart) and delete the old one. \`oidc.clientSecret\` left out keeps the stored secret.\n\nErrors: 400 on \`oidc\` for a SAML connection or \`saml\` for an OIDC one, on teams that are not the organization's, and when new domains would take the organization past 50; ${notFound}; 409 \`sso_connection_active\`.`
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteConnection", "/v1/sso/connections/:connectionId", { params: SsoConnectionPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...ssoErrors] }).pipe(audits("sso.connection.delete"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Delete an SSO connection")
      .annotate(
        OpenApi.Description,
        `Deletes the connection with its secret, its pending intents and its identity links (people keep their accounts and memberships; sessions it authenticated keep running until they expire). The organization's domains stay.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("activateConnection", "/v1/sso/connections/:connectionId/activate", { params: SsoConnectionPath, success: SsoConnectionResponse, error: [NotFoundResponse, ConflictResponse, ...ssoErrors] }).pipe(audits("sso.connection.activate"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Activate an SSO connection")
      .annotate(
        OpenApi.Description,
        `Makes the connection serve sign-in for its domains. No body. Activating an active connection answers it as is.\n\nErrors: ${notFound}; 409 \`sso_connection_untested\` without a successful test of the current \`configRevision\`, \`sso_domain_not_verified\` when the connection has no domain or one is not verified, \`sso_domain_served\` when another active connection of the organization serves one of its domains.`
      )
  )
  .add(
    HttpApiEndpoint.post("deactivateConnection", "/v1/sso/connections/:connectionId/deactivate", { params: SsoConnectionPath, success: SsoConnectionResponse, error: [NotFoundResponse, ...ssoErrors] }).pipe(audits("sso.connection.deactivate"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Deactivate an SSO connection")
      .annotate(
        OpenApi.Description,
        `Stops sign-in through the connection (state \`inactive\`). No body. Deactivating a connection that is not active answers it as is.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("startTest", "/v1/sso/connections/:connectionId/tests", { params: SsoConnectionPath, success: StartedSsoTest.pipe(HttpApiSchema.status(201)), error: [NotFoundResponse, ConflictResponse, ...ssoErrors] }).pipe(sessionOnly, audits("sso.connection.test"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Test an SSO connection")
      .annotate(
        OpenApi.Description,
        `Starts a test of the connection's current revision: a single-use intent, bound to the caller, that expires in 5 minutes. Open \`authorizationUrl\` in a browser and sign in at the provider as yourself; the provider sends the browser to the callback, which records the report (claims received, the profile the mapping made, or a failure with its \`code\`) and never signs anyone in. The test succeeds only for the caller (the provider's email must be the caller's, else \`identity_mismatch\`). Needs a session (API keys answer 403 \`session_required\`).\n\nErrors: ${notFound}; 409 \`sso_client_secret_required\` for an OIDC connection without a secret (one migrated from the single-connection model).`
      )
  )
  .add(
    HttpApiEndpoint.get("getTest", "/v1/sso/connections/:connectionId/tests/:testId", { params: SsoTestPath, success: SsoTestResponse, error: [NotFoundResponse, ...ssoErrors] }).pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Get an SSO test report")
      .annotate(
        OpenApi.Description,
        `A test's report: \`pending\` until the provider sends the browser back (or forever, if nobody finishes it), then \`succeeded\` or \`failed\`. Changes nothing.\n\nErrors: ${notFound}; 404 \`sso_test_not_found\`.`
      )
  )
  .add(
    HttpApiEndpoint.post("refreshMetadata", "/v1/sso/connections/:connectionId/refresh-metadata", { params: SsoConnectionPath, success: SsoConnectionResponse, error: [NotFoundResponse, ConflictResponse, ...ssoErrors] }).pipe(audits("sso.connection.metadata.refresh"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Refresh a SAML connection's IdP metadata")
      .annotate(
        OpenApi.Description,
        `Fetches the connection's metadata URL now (through the outbound guard), as the schedule does every \`ORGPLANE_SAML_METADATA_REFRESH_INTERVAL\` (6 hours by default), and answers the connection. No body. Rotated or added signing certificates and a moved SSO URL are taken without a new test and without changing \`state\` or \`configRevision\` (the administrator configured the URL, and a rotation must not cut sign-in). A document naming another entity id (another IdP), a fetch that fails and a document that does not parse change nothing but \`saml.metadataRefresh\`, which records when and why (\`ok: false\`, \`message\`); the refresh itself still answers 200.\n\nErrors: ${notFound}; 409 \`sso_metadata_url_required\` for an OIDC connection or a SAML connection whose settings come from metadata XML or were given by hand.`
      )
  )
  .add(
    HttpApiEndpoint.get("getPolicy", "/v1/sso/policy", { success: SsoPolicyResponse, error: ssoErrors }).pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Get the SSO enforcement policy")
      .annotate(
        OpenApi.Description,
        "Whether the organization requires SSO (`requireSso`) and whether its owners keep password sign-in as break-glass (`ownersPasswordFallback`). An organization that never set it answers the defaults (`false`, `true`, `updatedAt` null). Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.put("setPolicy", "/v1/sso/policy", { payload: SetSsoPolicyRequest, success: SsoPolicyResponse, error: [ConflictResponse, ...ssoErrors] }).pipe(audits("sso.policy.update"), requires("sso.manage"))
      .annotate(OpenApi.Summary, "Set the SSO enforcement policy")
      .annotate(
        OpenApi.Description,
        "Replaces the policy. While `requireSso` is on, for the domains an active connection of the organization serves: password sign-in for their emails answers 403 `sso_required`, discovery answers `required: true`, and the organization's routes answer 403 `sso_session_required` to sessions its own connections did not authenticate: a session another organization's SSO authenticated, or a password session of a member of those domains (sessions started before are judged at every request, so they stop at once). API keys are judged as the session that made them: a key a member of those domains made outside the organization's SSO (a password session, or before keys recorded it) answers 403 `sso_session_required` while enforcement covers them, and only their SSO sessions make new keys. Not affected: password sessions (and their keys) of members whose email is outside those domains (guests, contractors), keys made in the organization's SSO sessions, and, with `ownersPasswordFallback` (default true), the owners' password sign-in (break-glass: such a session acts as an owner). A domain no active connection serves stays on passwords.\n\nErrors: 409 `sso_connection_required` to turn `requireSso` on without an active connection serving a verified domain; 409 `sso_policy_locks_you_out` when the new policy would refuse the very session (or API key) that sends it (sign in through the organization's SSO first, or as an owner keep `ownersPasswordFallback`); an API key made in an SSO session is never locked out; 409 `operator_password_fallback` to require SSO in the operator organization without `ownersPasswordFallback` (its owners keep a way in that an identity provider's outage does not close)."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "SSO")
  .annotate(
    OpenApi.Description,
    "The SSO domains and connections of the caller's active organization. Owners and admins only, on the enterprise plan: every operation answers 402 `enterprise_plan_required` with `feature` `sso` otherwise (checked before the role). Every operation needs credentials: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}

/**
 * The answer of a sign-in that named a `returnTo` (OIDC callback, SAML ACS): the browser is sent there. A redirect
 * is no success body the platform can declare, so the document states it.
 */
const redirectsToReturnTo = (operation: Record<string, unknown>): Record<string, unknown> => ({
  ...operation,
  responses: {
    ...(Predicate.isObject(operation["responses"]) ? operation["responses"] : {}),
    "302": {
      description: "A sign-in that named a `returnTo`: the browser goes there with the one-time `code`, or, refused, with `error` (the failure's code) and `error_description`. No body.",
      headers: {
        Location: {
          description: "`returnTo` with `code`, or with `error` and `error_description`.",
          schema: { type: "string", format: "uri" },
          example: "http://127.0.0.1:53682/callback?code=ssx__6fhJoJvEwAJQQ1xqNAzA8rfk48nmwEeLPHN2glsgJY"
        },
        "Cache-Control": { description: "`no-store`: the code is single-use.", schema: { type: "string", enum: ["no-store"] } }
      }
    }
  }
})

/** The errors every operation of SsoSignInApi may answer (Effect 4 declares errors on endpoints, not groups). */
const signInErrors = [ServiceUnavailableResponse] as const

export class SsoSignInApi extends HttpApiGroup.make("ssoSignIn")
  .add(
    HttpApiEndpoint.post("discover", "/v1/sso/discover", { payload: SsoDiscoverRequest, success: SsoDiscovery, error: [RateLimitedResponse, ...signInErrors] }).pipe(notAudited("home-realm discovery reads where an email signs in and changes nothing"))
      .annotate(OpenApi.Summary, "Find where an email signs in")
      .annotate(
        OpenApi.Description,
        "Home-realm discovery: given an email, answers whether it signs in through SSO (the active connection serving its domain) or with a password. The answer depends on the domain alone, so it says nothing about whether the person has an account. `required` is true when the connection's organization requires SSO (`PUT /v1/sso/policy`): password sign-in for the email is refused, except its owners' break-glass. Public; 30 requests per minute per client address.\n\nErrors: 429 `rate_limited`."
      )
  )
  .add(
    HttpApiEndpoint.post("start", "/v1/sso/sign-in", { payload: SsoSignInRequest, success: StartedSsoSignIn.pipe(HttpApiSchema.status(201)), error: [SsoSignInFailedResponse, RateLimitedResponse, ...signInErrors] }).pipe(notAudited("starts a sign-in at the IdP; its completion records session.create (or the test's report)"))
      .annotate(OpenApi.Summary, "Start an SSO sign-in")
      .annotate(
        OpenApi.Description,
        "Starts signing in through the active connection serving the email's domain: answers the provider's authorization URL to open in a browser (PKCE, state and nonce always), valid once for 5 minutes. After the provider, the callback gives a one-time code (on `returnTo`, or as JSON) that `POST /v1/sso/sign-in/exchange` turns into a session. Public; 30 requests per minute per client address.\n\nErrors: 400 on `returnTo` when it is neither a loopback URL nor on this server's origin; 401 `sso_sign_in_failed` with `code` `email_domain_not_verified` when no active connection serves the domain; 429 `rate_limited`."
      )
  )
  .add(
    HttpApiEndpoint.get("oidcCallback", "/v1/sso/oidc/callback", { query: SsoCallbackQuery, success: SsoCallbackResult, error: [SsoSignInFailedResponse, ConflictResponse, ...signInErrors] })
      .annotate(OpenApi.Transform, redirectsToReturnTo)
      .annotate(OpenApi.Summary, "Complete an OIDC sign-in or test")
      .annotate(
        OpenApi.Description,
        "Where the OpenID Provider sends the browser back (the redirect URL every OIDC connection answers in `sp.redirectUrl`: `<ORGPLANE_PUBLIC_URL>/v1/sso/oidc/callback`). Public: the signed `state` names the single-use intent. The server exchanges the code (PKCE verifier, the connection's client authentication), lets openid-client validate the ID token (issuer, audience, signature, expiry, nonce), reads userinfo when the token lacks claims, and applies the mapping and the connection's rules. A first sign-in links the person to the account with their email only when that email is proven (an earlier SSO sign-in, or to this organization: its creator, an accepted invitation); an account whose email nobody proved is taken back first: its password, sessions and API keys end. A test: records its report and answers `{purpose: \"test\", ok, test}` (a failed test is a 200 with `ok: false`: the test ran). A sign-in: a one-time code, valid 2 minutes, answered as `{purpose: \"sign_in\", ok: true, code}` or, when the sign-in named a `returnTo`, by a 302 to `returnTo?code=<code>` (a refusal: `returnTo?error=<code>&error_description=<message>`). The session token never travels in a URL.\n\nErrors: 401 `sso_sign_in_failed` with `code` (`replayed` for a state already used or unknown, `intent_expired`, `issuer_mismatch`, `audience_mismatch`, `signature_invalid`, `token_expired`, `nonce_mismatch`, `idp_error`, `idp_unreachable`, `discovery_invalid`, `email_missing`, `email_not_verified`, `email_domain_not_verified`, `identity_deprovisioned`, `membership_required`, ...); 409 `email_taken` when two first sign-ins of the same new person raced (sign in again)."
      )
  )
  .add(
    HttpApiEndpoint.post("samlAcs", "/v1/sso/saml/:connectionId/acs", { params: SsoConnectionPath, payload: SamlAcsForm.pipe(HttpApiSchema.asFormUrlEncoded()), success: SsoCallbackResult, error: [NotFoundResponse, SsoSignInFailedResponse, ConflictResponse, ...signInErrors] }).pipe(notAudited("completes a sign-in started earlier; the session it yields is recorded at the exchange as session.create"))
      // Every bad member reported, and members the form does not declare ignored (an IdP may post more): not the API's
      // request body options, which refuse them (Effect 4 reads parse options from the API, group or endpoint).
      .annotate(HttpApi.PayloadParseOptions, allErrors)
      .annotate(OpenApi.Transform, redirectsToReturnTo)
      .annotate(OpenApi.Summary, "Complete a SAML sign-in or test (ACS)")
      .annotate(
        OpenApi.Description,
        "The Assertion Consumer Service of one SAML connection (`sp.acsUrl`: `<ORGPLANE_PUBLIC_URL>/v1/sso/saml/{connectionId}/acs`), where the IdP's auto-posting form sends the browser (HTTP-POST binding, `application/x-www-form-urlencoded`). Public: what authenticates it is the IdP's signature, and for a sign-in orgplane started the signed `RelayState` naming the single-use intent. The Response must carry a signed assertion (SHA-256 or stronger) from the connection's IdP, for this connection's SP entity id and ACS URL (Destination, Recipient), within its validity (2 minutes of clock skew), answering this sign-in's AuthnRequest (InResponseTo, single use). An IdP-initiated Response (no InResponseTo) is taken only by an active connection with `allowIdpInitiated`, with a `RelayState` of its `relayStateAllowList` (a loopback URL or a path on this server, where the browser goes with the code) or none; each assertion is taken once. Then the mapping and the connection's rules apply as for OIDC. Answers as `GET /v1/sso/oidc/callback` does: a test records its report and answers `{purpose: \"test\", ok, test}`; a sign-in answers `{purpose: \"sign_in\", ok: true, code}`, or a 302 to its `returnTo` with `code` (a refusal: `error`).\n\nErrors: 400 `invalid_request` on a form without `SAMLResponse`, one larger than 512 KiB, or one that is not a base64 SAML Response; 404 `sso_connection_not_found` for an unknown connection, an OIDC one, or a `RelayState` of another organization's sign-in (one of another connection of the organization is refused with `destination_mismatch`, and left unspent); 401 `sso_sign_in_failed` with `code` (`replayed`, `intent_expired`, `signature_invalid`, `unsupported_algorithm`, `assertion_expired`, `assertion_not_yet_valid`, `audience_mismatch`, `destination_mismatch`, `issuer_mismatch`, `in_response_to_mismatch`, `idp_initiated_not_allowed`, `relay_state_not_allowed`, `idp_error`, `email_missing`, `email_domain_not_verified`, `membership_required`, ...); 409 `email_taken` when two first sign-ins of the same new person raced (sign in again)."
      )
  )
  .add(
    HttpApiEndpoint.get("samlMetadata", "/v1/sso/saml/:connectionId/metadata", {
      params: SsoConnectionPath,
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/samlmetadata+xml" })).annotate({
        examples: [
          `<?xml version="1.0"?>\n<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://orgplane.example/v1/sso/saml/ssc_01jc0000000000000000000000/metadata"><SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" AuthnRequestsSigned="false" WantAssertionsSigned="true"><NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat><AssertionConsumerService index="1" isDefault="true" Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://orgplane.example/v1/sso/saml/ssc_01jc0000000000000000000000/acs"/></SPSSODescriptor></EntityDescriptor>`
        ]
      }),
      error: [NotFoundResponse, ...signInErrors]
    })
      .annotate(OpenApi.Summary, "Get a SAML connection's SP metadata")
      .annotate(
        OpenApi.Description,
        "orgplane's service-provider metadata for one SAML connection, as XML (`application/samlmetadata+xml`), to give the IdP instead of typing values: the SP entity id (this URL, `sp.entityId`), the ACS URL (`sp.acsUrl`, HTTP-POST), the NameID format asked for (emailAddress) and `WantAssertionsSigned`. Public, as IdPs fetch it without credentials; it holds no secret. Changes nothing.\n\nErrors: 404 `sso_connection_not_found` for an unknown or OIDC connection."
      )
  )
  .add(
    HttpApiEndpoint.post("exchange", "/v1/sso/sign-in/exchange", { payload: SsoExchangeRequest, success: AuthResult, error: [SsoSignInFailedResponse, ...signInErrors] }).pipe(audits("session.create"))
      .annotate(OpenApi.Summary, "Exchange an SSO sign-in code")
      .annotate(
        OpenApi.Description,
        "Turns the callback's one-time code into a session, as password sign-in gives: `{user, session}`, acting in the connection's organization and recording which connection authenticated it. A code works once, for 2 minutes.\n\nErrors: 401 `sso_sign_in_failed` with `code` `replayed` (used, unknown or expired code)."
      )
  )
  .annotate(OpenApi.Title, "SSO sign-in")
  .annotate(
    OpenApi.Description,
    "Signing in through an organization's SSO connection. Public: no credentials; what authenticates each step is the signed state or the one-time code. Every operation answers 503 `service_unavailable` when the database is unavailable."
  )
{}
