/** SSO: an organization's single sign-on connection (OIDC or SAML) and the proof, by a DNS TXT record, that it owns the connection's email domain. */
import * as Schema from "effect/Schema"
import { requestBody, Timestamp, TrimmedText } from "./Common.js"
import { OrganizationId } from "./Ids.js"
import { acme, exampleOf, exampleTime, exampleToken } from "./Examples.js"

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
    pattern: "^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$",
    description:
      "An email domain such as `example.com`: at least two labels, the last of letters only (a top-level domain alone, such as `com`, is no organization's domain); stored lower-case. Leading and trailing white space is removed first."
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
  ).annotations({
    description,
    jsonSchema: { type: "string", format: "uri", maxLength: 2048, pattern: "^https://[^/?#@\\u0000]*(?:[/?][^#\\u0000]*)?$", description }
  })

export const SsoProtocol = Schema.Literal("oidc", "saml").annotations({ identifier: "SsoProtocol" })

/** The example connection: Acme's OpenID Provider, and a SAML identity provider for the other protocol. */
const example = {
  domain: "acme.example",
  oidc: { issuer: "https://login.acme.example", clientId: "orgplane" },
  saml: {
    entityId: "https://idp.acme.example/saml/metadata",
    ssoUrl: "https://idp.acme.example/saml/sso",
    certificate: "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUSGc0Ii3rQmFjbWUgZXhhbXBsZSBjZXJ0aWZpY2F0ZTAK\nBggqhkjOPQQDAjAeMRwwGgYDVQQDDBNpZHAuYWNtZS5leGFtcGxlMB4XDTI2MTEw\n-----END CERTIFICATE-----"
  }
}
export type SsoProtocol = typeof SsoProtocol.Type

export const OidcSettingsInput = Schema.Struct({
  issuer: HttpsUrl("The OpenID Provider's issuer URL (its discovery document is at `<issuer>/.well-known/openid-configuration`)."),
  clientId: TrimmedText(1, 255, "The client id orgplane is registered under at the provider"),
  clientSecret: TrimmedText(1, 1024, "The client secret: stored encrypted, never answered")
}).annotations({ ...requestBody, examples: [{ ...example.oidc, clientSecret: "Zt8q-provider-issued-secret" }] })

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
    jsonSchema: {
      type: "string",
      maxLength: 16384,
      pattern: "^\\s*-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\\s]+-----END CERTIFICATE-----\\s*$",
      description: "The identity provider's signing certificate, PEM."
    }
  })
}).annotations({ ...requestBody, examples: [example.saml] })

/** `protocol` with the settings of that protocol: one member of the union per protocol, told apart by `protocol`. */
export const PutSsoConnectionRequest = Schema.Union(
  Schema.Struct({
    protocol: Schema.Literal("oidc"),
    domain: SsoDomain,
    oidc: OidcSettingsInput
  }).annotations({
    ...requestBody,
    identifier: "PutOidcConnectionRequest",
    description: "An OpenID Connect connection.",
    examples: [{ protocol: "oidc", domain: example.domain, oidc: { ...example.oidc, clientSecret: "Zt8q-provider-issued-secret" } }]
  }),
  Schema.Struct({
    protocol: Schema.Literal("saml"),
    domain: SsoDomain,
    saml: SamlSettingsInput
  }).annotations({
    ...requestBody,
    identifier: "PutSamlConnectionRequest",
    description: "A SAML connection.",
    examples: [{ protocol: "saml", domain: example.domain, saml: example.saml }]
  })
).annotations({ ...requestBody, identifier: "PutSsoConnectionRequest" })
export type PutSsoConnectionRequest = typeof PutSsoConnectionRequest.Type

export class OidcSettings extends Schema.Class<OidcSettings>("OidcSettings")(Schema.Struct({
  issuer: Schema.String,
  clientId: Schema.String,
  clientSecretSet: Schema.Literal(true).annotations({ description: "A client secret is stored (it is never answered)." })
}).annotations({ examples: [{ ...example.oidc, clientSecretSet: true }] })) {}

export class SamlSettings extends Schema.Class<SamlSettings>("SamlSettings")(Schema.Struct({
  entityId: Schema.String,
  ssoUrl: Schema.String,
  certificate: Schema.String
}).annotations({ examples: [example.saml] })) {}

export class SsoConnection extends Schema.Class<SsoConnection>("SsoConnection")(Schema.Struct({
  organizationId: OrganizationId,
  protocol: SsoProtocol,
  domain: Schema.String,
  oidc: Schema.NullOr(OidcSettings).annotations({ description: "The OIDC settings; null for SAML." }),
  saml: Schema.NullOr(SamlSettings).annotations({ description: "The SAML settings; null for OIDC." }),
  domainVerified: Schema.Boolean,
  domainVerifiedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({
  examples: [{
    organizationId: acme.id,
    protocol: "oidc",
    domain: example.domain,
    oidc: { ...example.oidc, clientSecretSet: true },
    saml: null,
    domainVerified: true,
    domainVerifiedAt: exampleTime(500),
    createdAt: exampleTime(480),
    updatedAt: exampleTime(500)
  }]
})) {}

export const SsoConnectionResponse = Schema.Struct({ ssoConnection: SsoConnection }).annotations({
  identifier: "SsoConnectionResponse"
})

export class DomainVerificationRecord extends Schema.Class<DomainVerificationRecord>("DomainVerificationRecord")(Schema.Struct({
  domain: Schema.String,
  recordType: Schema.Literal("TXT"),
  recordName: Schema.String.annotations({ description: "Where to publish the record: `_orgplane-verification.<domain>`." }),
  recordValue: Schema.String.annotations({ description: "The exact TXT value to publish (carries a random token)." }),
  expiresAt: Timestamp.annotations({ description: "Verify before this instant; afterwards request a new record." })
}).annotations({
  examples: [{
    domain: example.domain,
    recordType: "TXT",
    recordName: `_orgplane-verification.${example.domain}`,
    recordValue: `orgplane-verification=${exampleToken("opv")}`,
    expiresAt: exampleTime(490 + 24 * 60)
  }]
})) {}

export const DomainVerificationResponse = Schema.Struct({ verification: DomainVerificationRecord }).annotations({
  identifier: "DomainVerificationResponse"
})

export const VerifyDomainResponse = Schema.Struct({
  verified: Schema.Literal(true),
  domain: Schema.String,
  verifiedAt: Timestamp,
  ssoConnection: SsoConnection
}).annotations({
  identifier: "VerifyDomainResponse",
  description: "The organization's SSO domain is verified.",
  examples: [{ verified: true, domain: example.domain, verifiedAt: exampleTime(500), ssoConnection: exampleOf(SsoConnection) }]
})
