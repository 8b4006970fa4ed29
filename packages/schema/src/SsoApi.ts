/** SSO: the organization's SSO connection and the DNS verification of its email domain (enterprise plan). */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ConflictResponse,
  DnsLookupFailedResponse,
  DomainVerificationFailedResponse,
  ForbiddenResponse,
  NotFoundResponse,
  PlanRequiredResponse
} from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { DomainVerificationResponse, PutSsoConnectionRequest, SsoConnectionResponse, VerifyDomainResponse } from "./Sso.js"

export class SsoApi extends HttpApiGroup.make("sso")
  .add(
    HttpApiEndpoint.put("put", "/v1/sso/connection")
      .setPayload(PutSsoConnectionRequest)
      .addSuccess(SsoConnectionResponse)
      .pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Set the SSO connection")
      .annotate(
        OpenApi.Description,
        "Creates or replaces the organization's SSO connection: `protocol` `oidc` with `oidc` settings (issuer, client id, client secret) or `saml` with `saml` settings (entity id, sign-on URL, certificate), and the email `domain`. The OIDC client secret is stored encrypted and never answered (`clientSecretSet`). Keeping the domain keeps its verification; a new domain must be verified again. Sign-in through SSO is not offered yet: this stores what it will use.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/sso/connection")
      .addSuccess(SsoConnectionResponse)
      .addError(NotFoundResponse)
      .pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Get the SSO connection")
      .annotate(
        OpenApi.Description,
        "The organization's SSO connection with its domain's verification state, without secrets. Changes nothing.\n\nErrors: 404 `sso_connection_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/sso/connection")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Delete the SSO connection")
      .annotate(
        OpenApi.Description,
        "Deletes the organization's SSO connection with its secrets and its domain verification.\n\nErrors: 404 `sso_connection_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("requestDomainVerification", "/v1/sso/request-domain-verification")
      .addSuccess(DomainVerificationResponse)
      .pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Request SSO domain verification")
      .annotate(
        OpenApi.Description,
        "Answers the DNS TXT record to publish to prove the organization owns its SSO domain: `recordName` `_orgplane-verification.<domain>`, `recordValue` `orgplane-verification=<random token>`, and when the request expires (7 days). Asking again before then answers the same record; afterwards, a new one. No body.\n\nErrors: 404 `organization_not_found` when the organization has no SSO connection."
      )
  )
  .add(
    HttpApiEndpoint.post("verifyDomain", "/v1/sso/verify-domain")
      .addSuccess(VerifyDomainResponse)
      .addError(ConflictResponse)
      .addError(DomainVerificationFailedResponse)
      .addError(DnsLookupFailedResponse)
      .pipe(requires("sso.manage"))
      .annotate(OpenApi.Summary, "Verify the SSO domain")
      .annotate(
        OpenApi.Description,
        "Looks up the TXT records at the requested record name and marks the organization's SSO domain verified when one of them is the expected value. No body; a session bearer token (API keys answer 403 `session_required`). Success: `{verified: true, domain, verifiedAt, ssoConnection}`; verifying a verified domain again answers the same.\n\nErrors: 404 `organization_not_found` when the organization has no SSO connection; 409 `domain_verification_not_requested` when no record was requested or the request expired, `domain_verification_failed` when no TXT record at `recordName` holds `expectedValue` (the body names both, and the values found), `sso_domain_taken` when another organization verified the domain first; 502 `dns_lookup_failed` when no DNS server answered (unreachable, timeout, SERVFAIL, REFUSED)."
      )
  )
  .addError(ForbiddenResponse)
  .addError(PlanRequiredResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "SSO")
  .annotate(
    OpenApi.Description,
    "The SSO connection of the caller's active organization and the verification of its email domain. Owners and admins only, on the enterprise plan: every operation answers 402 `enterprise_plan_required` with `feature` `sso` otherwise (checked before the role). Every operation needs credentials: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
