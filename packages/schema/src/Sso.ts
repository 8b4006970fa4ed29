/**
 * SSO: an organization's verified email domains (proved by a DNS TXT record) and its sign-in connections (OIDC or
 * SAML), each tested before it goes live, with JIT membership and attribute mapping.
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Struct from "effect/Struct"
import { Timestamp, TrimmedText } from "./Common.js"
import { trimmedString } from "./internal/trimmed.js"
import { isUrl, type UrlRule, UrlOf } from "./Urls.js"
import { exampleId, OrganizationId, SsoConnectionId, SsoIntentId, TeamId } from "./Ids.js"
import { acme, ada, exampleOf, exampleTime, exampleToken } from "./Examples.js"

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** A loopback URL (any port: the CLI's listener) or a path on this server: nothing else, so no open redirect. */
const RETURN_TO: UrlRule = { absolute: "loopback", path: true }

/** Whether `value` may be a sign-in's `returnTo` (what an IdP-initiated SAML RelayState must be to become one). */
export const isSsoReturnTo = isUrl(RETURN_TO)

/** What is wrong with `domain` (trimmed, lower-case) as an organization's email domain, if anything. */
const domainProblem = (domain: string): string | undefined => {
  const labels = domain.split(".")
  return domain.length <= 253 && labels.length >= 2 && labels.every((label) => LABEL.test(label)) &&
      /^[a-z]{2,63}$/.test(labels[labels.length - 1]!)
    ? undefined
    : "must be a domain name such as example.com (letters, digits and hyphens in dot-separated labels)"
}

/**
 * The email domain people of the organization sign in with: a DNS name of at least two labels (letters, digits,
 * hyphens; the last one letters only), stored lower-case, without a trailing dot.
 */
export const SsoDomain = Schema.String.check(
  // Checked on the wire text as it will be stored, carrying the document's keywords; again on the decoded side, so
  // constructors and `Schema.is` refuse what decoding refuses.
  Schema.makeFilter((raw: string) => domainProblem(raw.trim().toLowerCase()) ?? true, {
    toJsonSchema: () => ({
      format: "hostname",
      maxLength: 253,
      pattern: "^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$"
    })
  })
).annotate({
  description:
    "An email domain such as `example.com`: at least two labels, the last of letters only (a top-level domain alone, such as `com`, is no organization's domain); stored lower-case. Leading and trailing white space is removed first."
}).pipe(
  Schema.decodeTo(Schema.Trimmed.check(Schema.isLowercased(), Schema.makeFilter((domain: string) => domainProblem(domain) ?? true)), {
    decode: SchemaGetter.transform((raw: string) => raw.trim().toLowerCase()),
    encode: SchemaGetter.passthrough()
  })
).annotate({ identifier: "SsoDomain" })

/** An http(s) URL of an identity provider, under the URL rule. */
export const IdpUrl = (description: string) =>
  UrlOf(
    { absolute: "http" },
    `${description} It is fetched through the outbound guard, so https to a public address unless the server allows private addresses.`
  )

export const SsoConnectionKind = Schema.Literals(["oidc", "saml"]).annotate({ identifier: "SsoConnectionKind" })
export type SsoConnectionKind = typeof SsoConnectionKind.Type

export const SsoConnectionState = Schema.Literals(["draft", "active", "inactive"]).annotate({
  identifier: "SsoConnectionState",
  description:
    "`draft`: created, never active; `active`: people of its domains sign in through it; `inactive`: deactivated. Only a successful test of the current `configRevision` with every domain verified lets a connection become `active`."
})
export type SsoConnectionState = typeof SsoConnectionState.Type

/**
 * Why a test or a sign-in failed, stable for scripts. The OIDC engine and the protocol-neutral flow answer these;
 * the SAML engine adds its own (`assertion_expired`, `in_response_to_mismatch`, `destination_mismatch`,
 * `unsupported_algorithm`, `response_invalid`) to this one list.
 */
export const SsoFailureCode = Schema.Literals([
  "issuer_mismatch",
  "audience_mismatch",
  "signature_invalid",
  "token_expired",
  "nonce_mismatch",
  "replayed",
  "idp_error",
  "idp_unreachable",
  "discovery_invalid",
  "response_invalid",
  "email_missing",
  "email_not_verified",
  "email_domain_not_verified",
  "identity_mismatch",
  "identity_deprovisioned",
  "membership_required",
  "intent_expired",
  "configuration_changed",
  "assertion_expired",
  "in_response_to_mismatch",
  "destination_mismatch",
  "unsupported_algorithm",
  "assertion_not_yet_valid",
  "idp_initiated_not_allowed",
  "relay_state_not_allowed",
  "binding_unsupported",
  "account_disabled"
]).annotate({
  identifier: "SsoFailureCode",
  description:
    "`issuer_mismatch` (the provider's discovery document or token names another issuer), `audience_mismatch` (the token is for another client or SP), `signature_invalid`, `token_expired`, `nonce_mismatch`, `replayed` (a state, code or response used twice), `idp_error` (the provider answered an error), `idp_unreachable`, `discovery_invalid` (the discovery document is not JSON or lacks endpoints), `response_invalid`, `email_missing`, `email_not_verified` (the provider says `email_verified: false`), `email_domain_not_verified` (the email's domain is not a verified domain of the connection), `identity_mismatch` (a test completed by another person than the admin who started it), `identity_deprovisioned` (directory sync deactivated the person), `membership_required` (the person is not a member and the connection's JIT is off), `intent_expired`, `configuration_changed` (the connection changed since the test started), and the SAML ones: `assertion_expired`, `assertion_not_yet_valid`, `in_response_to_mismatch` (the Response answers another request than this sign-in's), `destination_mismatch` (the Response's Destination or the assertion's Recipient is not the connection's ACS URL), `unsupported_algorithm` (SHA-1 or weaker), `idp_initiated_not_allowed` (an unsolicited Response while the connection does not take IdP-initiated sign-in), `relay_state_not_allowed` (an IdP-initiated RelayState not on the allow-list), `binding_unsupported` (the IdP takes AuthnRequests by HTTP-POST only), `account_disabled` (the instance's operator disabled the person's account)."
})
export type SsoFailureCode = typeof SsoFailureCode.Type

// Mapping and JIT ----------------------------------------------------------------------------------------------------

const claimName = (description: string) => TrimmedText(1, 255, description)

export const SsoGroupRule = Schema.Struct({
  group: TrimmedText(1, 255, "A group name (or id) as the identity provider sends it."),
  teamId: TeamId
}).annotate({ identifier: "SsoGroupRule", description: "A person in `group` joins the team at sign-in." })

export const SsoMapping = Schema.Struct({
  email: claimName("The claim (OIDC) or attribute (SAML) holding the email."),
  name: claimName("The claim or attribute holding the full name."),
  givenName: claimName("The claim or attribute holding the given name."),
  familyName: claimName("The claim or attribute holding the family name."),
  groups: claimName("The claim or attribute holding the groups."),
  groupRules: Schema.Array(SsoGroupRule).check(Schema.isMaxLength(100)).annotate({
    description: "Group → team rules applied at each sign-in (teams are joined, never left, by sign-in)."
  })
}).annotate({
  identifier: "SsoMapping",
  description:
    "Where the profile comes from. Defaults for OIDC: `email`, `name`, `given_name`, `family_name`, `groups`; for SAML: `email`, `displayName`, `givenName`, `surname`, `groups`."
})
export type SsoMapping = typeof SsoMapping.Type

export const SsoMappingInput = SsoMapping.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "SsoMappingInput" })

export const SsoJitRole = Schema.Literals(["member", "admin"]).annotate({ identifier: "SsoJitRole" })

export const SsoJit = Schema.Struct({
  enabled: Schema.Boolean.annotate({ description: "Whether a person new to the organization becomes a member at sign-in." }),
  // SsoJitRole's literals as a described schema of their own, written where used (no reference to SsoJitRole here).
  defaultRole: Schema.Literals(SsoJitRole.literals).annotate({ description: "The role of a member made at sign-in (default `member`)." }),
  defaultTeamIds: Schema.Array(TeamId).check(Schema.isMaxLength(20)).annotate({
    description: "Teams a member made at sign-in joins."
  })
}).annotate({ identifier: "SsoJit" })
export type SsoJit = typeof SsoJit.Type

export const SsoJitInput = SsoJit.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "SsoJitInput" })

// Identity provider settings -------------------------------------------------------------------------------------------

export const TokenEndpointAuthMethod = Schema.Literals(["client_secret_basic", "client_secret_post"]).annotate({
  identifier: "TokenEndpointAuthMethod"
})

export const OidcEndpoints = Schema.Struct({
  authorization: IdpUrl("The authorization endpoint."),
  token: IdpUrl("The token endpoint."),
  jwks: IdpUrl("The JSON Web Key Set of the provider's signing keys."),
  userinfo: Schema.optionalKey(IdpUrl("The userinfo endpoint."))
}).annotate({ identifier: "OidcEndpoints" })

const example = {
  domain: "acme.example",
  issuer: "https://login.acme.example",
  clientId: "orgplane",
  saml: {
    entityId: "https://idp.acme.example/saml/metadata",
    ssoUrl: "https://idp.acme.example/saml/sso"
  }
}

export const OidcSettingsInput = Schema.Struct({
  issuer: IdpUrl("The OpenID Provider's issuer (its discovery document is at `<issuer>/.well-known/openid-configuration`, and must name this issuer)."),
  endpoints: Schema.optionalKey(OidcEndpoints).annotateKey({
    description: "Manual endpoints, for a provider without discovery: no discovery document is fetched then."
  }),
  clientId: TrimmedText(1, 255, "The client id orgplane is registered under at the provider"),
  clientSecret: TrimmedText(1, 1024, "The client secret: stored encrypted, never answered"),
  scopes: Schema.optionalKey(Schema.Array(TrimmedText(1, 100, "A scope")).check(Schema.isMinLength(1), Schema.isMaxLength(20)))
    .annotate({ description: "Default `openid email profile`; `openid` is always added." }),
  tokenEndpointAuthMethod: Schema.optionalKey(TokenEndpointAuthMethod).annotateKey({
    description: "How orgplane authenticates at the token endpoint (default `client_secret_basic`)."
  })
}).annotate({ identifier: "OidcSettingsInput" })

/** The same, on update: `clientSecret` may be left out to keep the stored one. */
export const OidcSettingsPatch = Schema.Struct({
  ...OidcSettingsInput.fields,
  clientSecret: Schema.optionalKey(OidcSettingsInput.fields.clientSecret)
}).annotate({ identifier: "OidcSettingsPatch" })

const PEM = /^-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----$/

export const PemCertificate = trimmedString(
  (pem) =>
    pem.length > 16384
      ? "must be at most 16384 characters long"
      : PEM.test(pem)
      ? undefined
      : "must be a PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)",
  { maxLength: 16384, pattern: "^\\s*-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\\s]+-----END CERTIFICATE-----\\s*$" },
  "A signing certificate, PEM."
).annotate({ identifier: "PemCertificate" })

const samlCommon = {
  allowIdpInitiated: Schema.optionalKey(Schema.Boolean).annotateKey({
    description: "Accept sign-ins the IdP starts (default false); needs `relayStateAllowList`."
  }),
  relayStateAllowList: Schema.optionalKey(
    Schema.Array(
      UrlOf(RETURN_TO, "A RelayState an IdP-initiated sign-in may carry (exact match): where the browser goes next, with the sign-in's code.")
    ).check(Schema.isMaxLength(20))
  )
}

/**
 * The IdP of a SAML connection, by `source`: `metadataUrl` with `url`, `metadataXml` with `xml`, or `manual` with
 * `entityId`, `ssoUrl` and `certificates` (the server answers 400 on a member the source needs and lacks; members of
 * other sources are ignored).
 */
export const SamlSettingsInput = Schema.Struct({
  source: Schema.Literals(["metadataUrl", "metadataXml", "manual"]).annotate({
    description: "`metadataUrl` (with `url`; refetched on a schedule), `metadataXml` (with `xml`) or `manual` (with `entityId`, `ssoUrl`, `certificates`)."
  }),
  url: Schema.optionalKey(IdpUrl("The IdP's metadata URL (`metadataUrl`).")),
  xml: Schema.optionalKey(TrimmedText(1, 1_000_000, "The IdP's metadata document, XML (`metadataXml`).")),
  entityId: Schema.optionalKey(TrimmedText(1, 1024, "The identity provider's entity id (`manual`)")),
  ssoUrl: Schema.optionalKey(IdpUrl("The identity provider's single sign-on URL (`manual`).")),
  certificates: Schema.optionalKey(
    Schema.Array(PemCertificate).check(Schema.isMinLength(1), Schema.isMaxLength(5)).annotate({
      description: "One or more signing certificates (`manual`; two during a rotation)."
    })
  ),
  ...samlCommon
}).annotate({ identifier: "SamlSettingsInput", description: "The IdP: by metadata URL, by metadata XML, or by hand." })
export type SamlSettingsInput = typeof SamlSettingsInput.Type

export class OidcSettings extends Schema.Class<OidcSettings>("OidcSettings")(Schema.Struct({
  issuer: Schema.String,
  endpoints: Schema.NullOr(Schema.Struct({
    authorization: Schema.String,
    token: Schema.String,
    jwks: Schema.String,
    userinfo: Schema.NullOr(Schema.String)
  })).annotate({ description: "Manual endpoints; null when discovered from the issuer." }),
  clientId: Schema.String,
  clientSecretSet: Schema.Boolean.annotate({
    description: "A client secret is stored (it is never answered). False for a connection migrated from the single-connection model: set it before testing."
  }),
  scopes: Schema.Array(Schema.String),
  tokenEndpointAuthMethod: TokenEndpointAuthMethod
})) {}

export const SamlCertificate = Schema.Struct({
  pem: Schema.String,
  subject: Schema.String,
  notAfter: Timestamp.annotate({ description: "When the certificate expires: rotate before." })
}).annotate({ identifier: "SamlCertificate" })

export const SamlMetadataRefresh = Schema.Struct({
  at: Timestamp.annotate({ description: "When the metadata URL was last fetched, successfully or not." }),
  ok: Schema.Boolean,
  message: Schema.NullOr(Schema.String).annotate({
    description:
      "Why the latest refresh failed, readable, ending with its code in parentheses (`metadata_unreachable`, `metadata_not_xml`, `metadata_invalid`, `entity_id_changed`, ...): the settings from before are kept. Null when it succeeded."
  }),
  succeededAt: Schema.NullOr(Timestamp).annotate({
    description: "When the settings (SSO URL, certificates) were last taken from the metadata: the certificates in use are from then."
  })
}).annotate({
  identifier: "SamlMetadataRefresh",
  description:
    "The latest fetch of the metadata URL: at create and update, on a schedule (`ORGPLANE_SAML_METADATA_REFRESH_INTERVAL`, default 6 hours) and by `POST /v1/sso/connections/{connectionId}/refresh-metadata`. A refresh takes rotated certificates and a moved SSO URL without a new test; a changed entity id, a fetch that fails or a document that does not parse keep the settings and record why."
})

export class SamlSettings extends Schema.Class<SamlSettings>("SamlSettings")(Schema.Struct({
  source: Schema.Literals(["metadataUrl", "metadataXml", "manual"]),
  metadataUrl: Schema.NullOr(Schema.String),
  metadataXml: Schema.NullOr(Schema.String),
  entityId: Schema.NullOr(Schema.String).annotate({ description: "The IdP's entity id (from the metadata, or given)." }),
  ssoUrl: Schema.NullOr(Schema.String),
  certificates: Schema.Array(SamlCertificate),
  ssoBinding: Schema.NullOr(Schema.Literals(["redirect", "post"])).annotate({
    description: "How the AuthnRequest reaches the SSO URL: HTTP-Redirect (preferred) or HTTP-POST."
  }),
  metadataRefresh: Schema.NullOr(SamlMetadataRefresh).annotate({ description: "Metadata URL only: the latest fetch; null otherwise." }),
  allowIdpInitiated: Schema.Boolean,
  relayStateAllowList: Schema.Array(Schema.String)
})) {}

export const SsoServiceProvider = Schema.Struct({
  redirectUrl: Schema.NullOr(Schema.String).annotate({
    description: "OIDC: the redirect (callback) URL to register at the provider."
  }),
  entityId: Schema.NullOr(Schema.String).annotate({ description: "SAML: orgplane's SP entity id." }),
  acsUrl: Schema.NullOr(Schema.String).annotate({ description: "SAML: the Assertion Consumer Service URL." }),
  metadataUrl: Schema.NullOr(Schema.String).annotate({ description: "SAML: orgplane's SP metadata." })
}).annotate({ identifier: "SsoServiceProvider", description: "What to give the identity provider." })

// Profiles and tests ---------------------------------------------------------------------------------------------------

/** What a protocol engine makes of a successful sign-in, before the mapping's checks. */
export const SsoProfile = Schema.Struct({
  subject: Schema.String,
  email: Schema.NullOr(Schema.String),
  emailVerified: Schema.NullOr(Schema.Boolean),
  name: Schema.NullOr(Schema.String),
  givenName: Schema.NullOr(Schema.String),
  familyName: Schema.NullOr(Schema.String),
  groups: Schema.Array(Schema.String)
}).annotate({ identifier: "SsoProfile", description: "The person as the mapping read them from the provider's claims or attributes." })
export type SsoProfile = typeof SsoProfile.Type

export const SsoFailure = Schema.Struct({ code: SsoFailureCode, message: Schema.String }).annotate({ identifier: "SsoFailure" })
export type SsoFailure = typeof SsoFailure.Type

export const SsoTestStatus = Schema.Literals(["pending", "succeeded", "failed"]).annotate({ identifier: "SsoTestStatus" })

export class SsoTestReport extends Schema.Class<SsoTestReport>("SsoTestReport")(Schema.Struct({
  id: SsoIntentId,
  connectionId: SsoConnectionId,
  // Finite, as a JSON number is: Effect 4 documents Schema.Number with the strings "Infinity", "-Infinity" and "NaN".
  configRevision: Schema.Finite,
  status: SsoTestStatus,
  startedAt: Timestamp,
  completedAt: Schema.NullOr(Timestamp),
  claims: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "The claims (OIDC) or attributes (SAML) received, as the provider sent them."
  }),
  profile: Schema.NullOr(SsoProfile),
  failure: Schema.NullOr(SsoFailure)
}).annotate({
  examples: [{
    id: exampleId("ssi"),
    connectionId: exampleId("ssc"),
    configRevision: 2,
    status: "succeeded",
    startedAt: exampleTime(510),
    completedAt: exampleTime(511),
    claims: { sub: "00u1ada", email: ada.email, email_verified: true, name: ada.name },
    profile: {
      subject: "00u1ada",
      email: ada.email,
      emailVerified: true,
      name: ada.name,
      givenName: null,
      familyName: null,
      groups: []
    },
    failure: null
  }]
})) {}

export const SsoTestResponse = Schema.Struct({ test: SsoTestReport }).annotate({ identifier: "SsoTestResponse" })

export const SsoConnectionDomain = Schema.Struct({ domain: Schema.String, verified: Schema.Boolean }).annotate({
  identifier: "SsoConnectionDomain"
})

export class SsoConnection extends Schema.Class<SsoConnection>("SsoConnection")(Schema.Struct({
  id: SsoConnectionId,
  organizationId: OrganizationId,
  kind: SsoConnectionKind,
  name: Schema.String,
  state: SsoConnectionState,
  domains: Schema.Array(SsoConnectionDomain),
  jit: SsoJit,
  mapping: SsoMapping,
  oidc: Schema.NullOr(OidcSettings).annotate({ description: "The OIDC settings; null for SAML." }),
  saml: Schema.NullOr(SamlSettings).annotate({ description: "The SAML settings; null for OIDC." }),
  sp: SsoServiceProvider,
  configRevision: Schema.Finite.annotate({ description: "Bumped by every change of settings: a new revision needs a new test." }),
  lastTest: Schema.NullOr(SsoTestReport).annotate({ description: "The latest test, of whatever revision." }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("ssc"),
    organizationId: acme.id,
    kind: "oidc",
    name: "Acme Okta",
    state: "draft",
    domains: [{ domain: example.domain, verified: true }],
    jit: { enabled: true, defaultRole: "member", defaultTeamIds: [] },
    mapping: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: [] },
    oidc: new OidcSettings({
      issuer: example.issuer,
      endpoints: null,
      clientId: example.clientId,
      clientSecretSet: true,
      scopes: ["openid", "email", "profile"],
      tokenEndpointAuthMethod: "client_secret_basic"
    }),
    saml: null,
    sp: { redirectUrl: "https://orgplane.acme.example/v1/sso/oidc/callback", entityId: null, acsUrl: null, metadataUrl: null },
    configRevision: 1,
    lastTest: null,
    createdAt: exampleTime(480),
    updatedAt: exampleTime(480)
  }]
})) {}

export const SsoConnectionResponse = Schema.Struct({ connection: SsoConnection }).annotate({ identifier: "SsoConnectionResponse" })
export const SsoConnectionList = Schema.Struct({ connections: Schema.Array(SsoConnection) }).annotate({
  identifier: "SsoConnectionList"
})

export const SsoConnectionName = TrimmedText(1, 100, "A name for people: `Okta`, `Entra (new tenant)`")

const connectionCommon = {
  name: SsoConnectionName,
  domains: Schema.optionalKey(Schema.Array(SsoDomain).check(Schema.isMaxLength(50))).annotateKey({
    description: "Email domains the connection serves; each becomes a domain of the organization to verify, if it is not one yet."
  }),
  jit: Schema.optionalKey(SsoJitInput),
  mapping: Schema.optionalKey(SsoMappingInput)
}

export const CreateSsoConnectionRequest = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("oidc"), ...connectionCommon, oidc: OidcSettingsInput }).annotate({
    identifier: "CreateOidcConnectionRequest",
    description: "An OpenID Connect connection.",
    examples: [{
      kind: "oidc",
      name: "Acme Okta",
      domains: [example.domain],
      oidc: { issuer: example.issuer, clientId: example.clientId, clientSecret: "Zt8q-provider-issued-secret" }
    }]
  }),
  Schema.Struct({ kind: Schema.Literal("saml"), ...connectionCommon, saml: SamlSettingsInput }).annotate({
    identifier: "CreateSamlConnectionRequest",
    description: "A SAML connection.",
    examples: [{ kind: "saml", name: "Acme ADFS", domains: [example.domain], saml: { source: "metadataUrl", url: example.saml.entityId } }]
  })
]).annotate({
  identifier: "CreateSsoConnectionRequest",
  examples: [{
    kind: "oidc",
    name: "Acme Okta",
    domains: [example.domain],
    oidc: { issuer: example.issuer, clientId: example.clientId, clientSecret: "Zt8q-provider-issued-secret" }
  }, {
    kind: "saml",
    name: "Acme ADFS",
    domains: [example.domain],
    saml: { source: "metadataUrl", url: `${example.saml.entityId}` }
  }]
})
export type CreateSsoConnectionRequest = typeof CreateSsoConnectionRequest.Type

export const UpdateSsoConnectionRequest = Schema.Struct({
  name: Schema.optionalKey(connectionCommon.name),
  domains: connectionCommon.domains,
  jit: connectionCommon.jit,
  mapping: connectionCommon.mapping,
  oidc: Schema.optionalKey(OidcSettingsPatch).annotateKey({ description: "OIDC connections only." }),
  saml: Schema.optionalKey(SamlSettingsInput).annotateKey({ description: "SAML connections only." })
}).check(
  Schema.makeFilter((patch) => Object.keys(patch).length > 0 || "must change something", { toJsonSchema: () => ({ minProperties: 1 }) })
).annotate({
  identifier: "UpdateSsoConnectionRequest",
  examples: [{ name: "Acme Okta (production)" }, { jit: { defaultRole: "member", enabled: true } }]
})
export type UpdateSsoConnectionRequest = typeof UpdateSsoConnectionRequest.Type

export const SsoConnectionPath = Schema.Struct({ connectionId: SsoConnectionId })
export const SsoTestPath = Schema.Struct({ connectionId: SsoConnectionId, testId: SsoIntentId })

export const StartedSsoTest = Schema.Struct({
  test: SsoTestReport,
  authorizationUrl: Schema.String.annotate({ description: "Open in a browser, signed in at the IdP as yourself." }),
  expiresAt: Timestamp
}).annotate({
  identifier: "StartedSsoTest",
  examples: [{
    test: exampleOf(SsoTestReport),
    authorizationUrl: "https://login.acme.example/authorize?client_id=orgplane&response_type=code",
    expiresAt: exampleTime(515)
  }]
})

// Domains --------------------------------------------------------------------------------------------------------------

export class DomainVerificationRecord extends Schema.Class<DomainVerificationRecord>("DomainVerificationRecord")(Schema.Struct({
  domain: Schema.String,
  recordType: Schema.Literal("TXT"),
  recordName: Schema.String.annotate({ description: "Where to publish the record: `_orgplane-verification.<domain>`." }),
  recordValue: Schema.String.annotate({ description: "The exact TXT value to publish (carries a random token)." }),
  expiresAt: Timestamp.annotate({ description: "Verify before this instant; afterwards request a new record." })
}).annotate({
  examples: [{
    domain: example.domain,
    recordType: "TXT",
    recordName: `_orgplane-verification.${example.domain}`,
    recordValue: `orgplane-verification=${exampleToken("opv")}`,
    expiresAt: exampleTime(490 + 24 * 60)
  }]
})) {}

export const DomainVerificationResponse = Schema.Struct({ verification: DomainVerificationRecord }).annotate({
  identifier: "DomainVerificationResponse"
})

export class SsoOrganizationDomain extends Schema.Class<SsoOrganizationDomain>("SsoOrganizationDomain")(Schema.Struct({
  domain: Schema.String,
  verified: Schema.Boolean,
  verifiedAt: Schema.NullOr(Timestamp),
  createdAt: Timestamp
}).annotate({ examples: [{ domain: example.domain, verified: true, verifiedAt: exampleTime(500), createdAt: exampleTime(470) }] })) {}

export const SsoDomainList = Schema.Struct({ domains: Schema.Array(SsoOrganizationDomain) }).annotate({ identifier: "SsoDomainList" })

export const VerifyDomainResponse = Schema.Struct({
  verified: Schema.Literal(true),
  domain: Schema.String,
  verifiedAt: Timestamp
}).annotate({
  identifier: "VerifyDomainResponse",
  description: "The domain is verified.",
  examples: [{ verified: true, domain: example.domain, verifiedAt: exampleTime(500) }]
})

// Enforcement -----------------------------------------------------------------------------------------------------

export class SsoPolicy extends Schema.Class<SsoPolicy>("SsoPolicy")(Schema.Struct({
  requireSso: Schema.Boolean.annotate({
    description:
      "SSO is required for the organization's domains an active connection serves: password sign-in for their emails is refused (403 `sso_required`), and the organization's routes refuse sessions its own connections did not authenticate (403 `sso_session_required`), except password sessions of members whose email is outside those domains and the owners' break-glass."
  }),
  ownersPasswordFallback: Schema.Boolean.annotate({
    description:
      "Break-glass: while SSO is required, the organization's owners may still sign in with their password (and act as owners), so a broken IdP cannot lock the organization out."
  }),
  updatedAt: Schema.NullOr(Timestamp).annotate({ description: "Null while the policy was never set (the defaults: not required, owners' fallback on)." })
}).annotate({ examples: [{ requireSso: true, ownersPasswordFallback: true, updatedAt: exampleTime(520) }] })) {}

export const SsoPolicyResponse = Schema.Struct({ policy: SsoPolicy }).annotate({ identifier: "SsoPolicyResponse" })

export const SetSsoPolicyRequest = Schema.Struct({
  requireSso: Schema.Boolean.annotate({ description: "Require SSO for the domains the organization's active connections serve." }),
  ownersPasswordFallback: Schema.optionalKey(Schema.Boolean).annotateKey({
    description: "Owners keep password sign-in while SSO is required (break-glass). Default: true."
  })
}).annotate({
  identifier: "SetSsoPolicyRequest",
  examples: [{ requireSso: true, ownersPasswordFallback: true }]
})
export type SetSsoPolicyRequest = typeof SetSsoPolicyRequest.Type

// Sign-in --------------------------------------------------------------------------------------------------------------

export const SsoDiscoverRequest = Schema.Struct({
  email: TrimmedText(3, 320, "The email of the person signing in")
}).annotate({ identifier: "SsoDiscoverRequest", examples: [{ email: ada.email }] })

export const SsoDiscovery = Schema.Struct({
  method: Schema.Literals(["sso", "password"]).annotate({
    description: "`sso`: sign in through `connectionId`; `password`: no active connection serves the email's domain."
  }),
  connectionId: Schema.NullOr(SsoConnectionId),
  required: Schema.Boolean.annotate({ description: "The organization refuses password sign-in for this domain (except its owners' break-glass)." })
}).annotate({
  identifier: "SsoDiscovery",
  description: "Depends on the email's domain only: the same answer whether or not the person has an account.",
  examples: [{ method: "sso", connectionId: exampleId("ssc"), required: true }]
})


export const SsoSignInRequest = Schema.Struct({
  email: TrimmedText(3, 320, "The email of the person signing in (its domain picks the connection; sent as `login_hint`)"),
  returnTo: Schema.optionalKey(
    UrlOf(
      RETURN_TO,
      "Where the callback sends the browser with `?code=<one-time code>`: a loopback URL, as the CLI uses, or a path on this server's origin (`/app/sso-done`). Without it the callback answers the code as JSON."
    )
  )
}).annotate({ identifier: "SsoSignInRequest", examples: [{ email: ada.email, returnTo: "http://127.0.0.1:53682/callback" }] })

export const StartedSsoSignIn = Schema.Struct({
  authorizationUrl: Schema.String,
  expiresAt: Timestamp
}).annotate({
  identifier: "StartedSsoSignIn",
  examples: [{ authorizationUrl: "https://login.acme.example/authorize?client_id=orgplane&response_type=code", expiresAt: exampleTime(515) }]
})

export const SsoCallbackQuery = Schema.Struct({
  state: TrimmedText(1, 2048, "The state orgplane sent"),
  code: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(4096))),
  iss: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2048))),
  error: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(255))),
  error_description: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(1024)))
}).annotate({
  // Every parameter shown at once, as the document wants one example per parameter: a provider sends `code`, or
  // `error` and `error_description` when the person declined.
  examples: [{
    state: `${acme.id}.${exampleId("ssi")}.c2lnbmF0dXJl`,
    code: "SplxlOBeZQQYbYS6WxSbIA",
    iss: example.issuer,
    error: "access_denied",
    error_description: "The person declined the sign-in."
  }]
})
export type SsoCallbackQuery = typeof SsoCallbackQuery.Type

export const SsoCallbackResult = Schema.Struct({
  purpose: Schema.Literals(["test", "sign_in"]),
  ok: Schema.Boolean,
  test: Schema.NullOr(SsoTestReport).annotate({ description: "The test's report (tests)." }),
  code: Schema.NullOr(Schema.String).annotate({
    description: "Sign-in without `returnTo`: the one-time code to exchange with `POST /v1/sso/sign-in/exchange` within 2 minutes."
  }),
  failure: Schema.NullOr(SsoFailure)
}).annotate({
  identifier: "SsoCallbackResult",
  examples: [{ purpose: "sign_in", ok: true, test: null, code: exampleToken("ssx"), failure: null }]
})

export const SsoExchangeRequest = Schema.Struct({
  code: TrimmedText(1, 256, "The one-time code the callback gave")
}).annotate({ identifier: "SsoExchangeRequest", examples: [{ code: exampleToken("ssx") }] })

/** Largest `SAMLResponse` the ACS reads (base64 characters): an IdP sending hundreds of groups stays well under it. */
export const SAML_RESPONSE_MAX_CHARS = 512 * 1024

/**
 * What the IdP's auto-posting form sends to a connection's ACS (the SAML HTTP-POST binding). Every bad member is
 * reported and members it does not know are ignored (an IdP may post more): Effect 4 reads parse options from the
 * API, so its endpoint sets `HttpApi.PayloadParseOptions` to `allErrors`, not the API's `requestBody`.
 */
export const SamlAcsForm = Schema.Struct({
  SAMLResponse: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(SAML_RESPONSE_MAX_CHARS)).annotate({
    description: `The base64 SAML Response, at most ${SAML_RESPONSE_MAX_CHARS / 1024} KiB.`
  }),
  RelayState: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2048))).annotateKey({
    description:
      "A sign-in orgplane started: the state it sent with the AuthnRequest. An IdP-initiated sign-in: a value of the connection's `relayStateAllowList` (where the browser goes next), or none."
  })
}).annotate({
  identifier: "SamlAcsForm",
  examples: [{ SAMLResponse: "PHNhbWxwOlJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM6bmFtZXM6dGM6U0FNTDoyLjA6cHJvdG9jb2wiIC8+", RelayState: `${acme.id}.${exampleId("ssi")}.c2lnbmF0dXJl` }]
})
export type SamlAcsForm = typeof SamlAcsForm.Type
