/** SSO: an organization's single sign-on connection (OIDC or SAML) and the proof, by a DNS TXT record, that it owns the connection's email domain. */
import { Schema } from "effect"
import { requestBody, Timestamp, TrimmedText } from "./Common.js"
import { OrganizationId } from "./Ids.js"

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/**
 * The email domain people of the organization sign in with: a DNS name of at least two labels (letters, digits,
 * hyphens; the last one letters only), stored lower-case, without a trailing dot.
 */
export const SsoDomain = Schema.Trim.pipe(
  Schema.compose(Schema.Lowercase),
  Schema.filter((domain) => {
    const labels = domain.split(".")
    return (domain.length <= 253 && labels.length >= 2 && labels.every((label) => LABEL.test(label)) &&
      /^[a-z]{2,63}$/.test(labels[labels.length - 1]!)) ||
      "must be a domain name such as example.com (letters, digits and hyphens in dot-separated labels)"
  })
).annotations({
  identifier: "SsoDomain",
  jsonSchema: {
    type: "string",
    format: "hostname",
    maxLength: 253,
    description: "A domain name such as `example.com`: at least two labels, the last of letters only; stored lower-case."
  }
})

/** An absolute `https:` URL without credentials or fragment, at most 2048 characters. */
export const HttpsUrl = (description: string) =>
  Schema.Trim.pipe(
    Schema.maxLength(2048, { message: () => "must be at most 2048 characters long" }),
    Schema.filter((text) => {
      try {
        const url = new URL(text)
        return (url.protocol === "https:" && url.username === "" && url.password === "" && url.hash === "") ||
          "must be an https:// URL without credentials or fragment"
      } catch {
        return "must be an absolute https:// URL"
      }
    })
  ).annotations({ description, jsonSchema: { type: "string", format: "uri", maxLength: 2048, description } })

export const SsoProtocol = Schema.Literal("oidc", "saml").annotations({ identifier: "SsoProtocol" })
export type SsoProtocol = typeof SsoProtocol.Type

export const OidcSettingsInput = Schema.Struct({
  issuer: HttpsUrl("The OpenID Provider's issuer URL (its discovery document is at `<issuer>/.well-known/openid-configuration`)."),
  clientId: TrimmedText(1, 255, "The client id orgplane is registered under at the provider"),
  clientSecret: TrimmedText(1, 1024, "The client secret: stored encrypted, never answered")
}).annotations(requestBody)

export const SamlSettingsInput = Schema.Struct({
  entityId: TrimmedText(1, 1024, "The identity provider's entity id"),
  ssoUrl: HttpsUrl("The identity provider's single sign-on (HTTP-Redirect or HTTP-POST binding) URL."),
  certificate: Schema.Trim.pipe(
    Schema.maxLength(16384, { message: () => "must be at most 16384 characters long" }),
    Schema.filter((pem) =>
      /^-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----$/.test(pem) ||
      "must be a PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)"
    )
  ).annotations({
    description: "The identity provider's signing certificate, PEM.",
    jsonSchema: { type: "string", maxLength: 16384, description: "The identity provider's signing certificate, PEM." }
  })
}).annotations(requestBody)

/** `protocol` with the settings of that protocol: `oidc` or `saml`, exactly one, matching it. */
export const PutSsoConnectionRequest = Schema.Struct({
  protocol: SsoProtocol,
  domain: SsoDomain,
  oidc: Schema.optionalWith(OidcSettingsInput, { exact: true }).annotations({ description: "With `protocol: oidc`." }),
  saml: Schema.optionalWith(SamlSettingsInput, { exact: true }).annotations({ description: "With `protocol: saml`." })
}).pipe(
  Schema.filter((body) =>
    body.oidc === undefined && body.saml === undefined
      ? "give oidc settings (protocol oidc) or saml settings (protocol saml)"
      : body.protocol === "oidc"
      ? body.saml === undefined || { path: ["saml"], message: "protocol oidc takes oidc settings, not saml" }
      : body.oidc === undefined || { path: ["oidc"], message: "protocol saml takes saml settings, not oidc" }, {
    jsonSchema: { allOf: [{ oneOf: [{ required: ["oidc"] }, { required: ["saml"] }] }] }
  })
).annotations({ ...requestBody, identifier: "PutSsoConnectionRequest" })
export type PutSsoConnectionRequest = typeof PutSsoConnectionRequest.Type

export class OidcSettings extends Schema.Class<OidcSettings>("OidcSettings")({
  issuer: Schema.String,
  clientId: Schema.String,
  clientSecretSet: Schema.Literal(true).annotations({ description: "A client secret is stored (it is never answered)." })
}) {}

export class SamlSettings extends Schema.Class<SamlSettings>("SamlSettings")({
  entityId: Schema.String,
  ssoUrl: Schema.String,
  certificate: Schema.String
}) {}

export class SsoConnection extends Schema.Class<SsoConnection>("SsoConnection")({
  organizationId: OrganizationId,
  protocol: SsoProtocol,
  domain: Schema.String,
  oidc: Schema.NullOr(OidcSettings).annotations({ description: "The OIDC settings; null for SAML." }),
  saml: Schema.NullOr(SamlSettings).annotations({ description: "The SAML settings; null for OIDC." }),
  domainVerified: Schema.Boolean,
  domainVerifiedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

export const SsoConnectionResponse = Schema.Struct({ ssoConnection: SsoConnection }).annotations({
  identifier: "SsoConnectionResponse"
})

export class DomainVerificationRecord extends Schema.Class<DomainVerificationRecord>("DomainVerificationRecord")({
  domain: Schema.String,
  recordType: Schema.Literal("TXT"),
  recordName: Schema.String.annotations({ description: "Where to publish the record: `_orgplane-verification.<domain>`." }),
  recordValue: Schema.String.annotations({ description: "The exact TXT value to publish (carries a random token)." }),
  expiresAt: Timestamp.annotations({ description: "Verify before this instant; afterwards request a new record." })
}) {}

export const DomainVerificationResponse = Schema.Struct({ verification: DomainVerificationRecord }).annotations({
  identifier: "DomainVerificationResponse"
})

export const VerifyDomainResponse = Schema.Struct({
  verified: Schema.Literal(true),
  domain: Schema.String,
  verifiedAt: Timestamp,
  ssoConnection: SsoConnection
}).annotations({ identifier: "VerifyDomainResponse", description: "The organization's SSO domain is verified." })
