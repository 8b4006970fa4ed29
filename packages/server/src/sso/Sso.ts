/**
 * SSO connections (enterprise plan; owners and admins): their settings, with the OIDC client secret encrypted, and
 * the verification of their email domain by a TXT record looked up through the Resolver.
 */
import {
  Conflict,
  DnsLookupFailed,
  DomainVerificationFailed,
  DomainVerificationRecord,
  NotFound,
  OidcSettings,
  OrganizationNotFound,
  type MemberContext,
  type PutSsoConnectionRequest,
  SamlSettings,
  SsoConnection
} from "@orgplane/schema"
import { Duration, Effect, Option } from "effect"
import { sessionOf } from "../identity/Authentication.js"
import { Resolver } from "../integrations/dns/Resolver.js"
import { Crypto } from "../platform/Crypto.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { actingMembershipId, authorize, type Principal, requireEnterprise } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { type SsoConnectionRow, SsoRepository } from "./SsoRepository.js"

/** How long a requested TXT record may take to be published and checked. */
export const verificationTtl = Duration.days(7)

export const recordNameOf = (domain: string) => `_orgplane-verification.${domain}`
export const recordValueOf = (token: string) => `orgplane-verification=${token}`

const connectionNotFound = () =>
  new NotFound({ error: "sso_connection_not_found", message: "The organization has no SSO connection." })

const notRequested = (domain: string, expired: boolean) =>
  new Conflict({
    error: "domain_verification_not_requested",
    message: expired
      ? `The verification request for ${domain} expired: request a new record with POST /v1/sso/request-domain-verification.`
      : `No verification of ${domain} was requested: request a record with POST /v1/sso/request-domain-verification first.`
  })

/** The API's view of a row: settings without the secret. */
export const toConnection = (row: SsoConnectionRow) =>
  new SsoConnection({
    organizationId: row.organizationId,
    protocol: row.protocol,
    domain: row.domain,
    oidc: row.protocol === "oidc"
      ? new OidcSettings({ issuer: row.oidcIssuer ?? "", clientId: row.oidcClientId ?? "", clientSecretSet: true })
      : null,
    saml: row.protocol === "saml"
      ? new SamlSettings({ entityId: row.samlEntityId ?? "", ssoUrl: row.samlSsoUrl ?? "", certificate: row.samlCertificate ?? "" })
      : null,
    domainVerified: row.domainVerifiedAt !== null,
    domainVerifiedAt: row.domainVerifiedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  })

export class Sso extends Effect.Service<Sso>()("@orgplane/server/sso/Sso", {
  effect: Effect.gen(function*() {
    const repository = yield* SsoRepository
    const crypto = yield* Crypto
    const resolver = yield* Resolver

    /** The plan first (an organization without it learns that whoever asks), then the role. */
    const allowed = (principal: Principal) =>
      Effect.zipRight(requireEnterprise(principal, "sso"), authorize(principal, "sso.manage"))

    const put = (principal: Principal, input: PutSsoConnectionRequest) =>
      Effect.gen(function*() {
        yield* allowed(principal)
        // Encrypted outside the transaction: a retried transaction must not need it again.
        // The schema's union guarantees the settings of the protocol, and only those.
        const oidc = input.protocol === "oidc" ? input.oidc : undefined
        const saml = input.protocol === "saml" ? input.saml : undefined
        const secret = oidc !== undefined
          ? yield* Effect.orDie(crypto.encrypt(oidc.clientSecret, bind(SecretColumns.ssoClientSecret, principal.organization.id)))
          : null
        return yield* transaction(
          Effect.gen(function*() {
            const organizationId = principal.organization.id
            const at = yield* now
            yield* repository.upsert({
              organizationId,
              protocol: input.protocol,
              domain: input.domain,
              oidcIssuer: oidc?.issuer ?? null,
              oidcClientId: oidc?.clientId ?? null,
              oidcClientSecretCiphertext: secret,
              samlEntityId: saml?.entityId ?? null,
              samlSsoUrl: saml?.ssoUrl ?? null,
              samlCertificate: saml?.certificate ?? null,
              verificationToken: null,
              verificationExpiresAt: null,
              domainVerifiedAt: null,
              updatedByMembershipId: actingMembershipId(principal),
              createdAt: at,
              updatedAt: at
            })
            const row = yield* repository.find({ organizationId })
            return { ssoConnection: toConnection(Option.getOrThrow(row)) }
          })
        )
      })

    const get = (principal: Principal) =>
      Effect.gen(function*() {
        yield* allowed(principal)
        const row = yield* orUnavailable(repository.find({ organizationId: principal.organization.id }))
        if (Option.isNone(row)) return yield* connectionNotFound()
        return { ssoConnection: toConnection(row.value) }
      })

    const remove = (principal: Principal) =>
      Effect.gen(function*() {
        yield* allowed(principal)
        if (!(yield* orUnavailable(repository.remove({ organizationId: principal.organization.id })))) {
          return yield* connectionNotFound()
        }
      })

    /** The pending record while it is valid, else a new one (a new random token, a new expiry). */
    const requestDomainVerification = (principal: Principal) =>
      Effect.gen(function*() {
        yield* allowed(principal)
        const fresh = yield* crypto.newToken("opv")
        return yield* transaction(
          Effect.gen(function*() {
            const organizationId = principal.organization.id
            const locked = yield* repository.lock({ organizationId })
            if (Option.isNone(locked)) return yield* new OrganizationNotFound()
            const row = locked.value
            const at = yield* now
            let token = row.verificationToken
            let expiresAt = row.verificationExpiresAt
            if (token === null || expiresAt === null || expiresAt.getTime() <= at.getTime()) {
              token = fresh
              expiresAt = new Date(at.getTime() + Duration.toMillis(verificationTtl))
              yield* repository.setVerificationRequest({ organizationId, token, expiresAt, at })
            }
            return {
              verification: new DomainVerificationRecord({
                domain: row.domain,
                recordType: "TXT",
                recordName: recordNameOf(row.domain),
                recordValue: recordValueOf(token),
                expiresAt
              })
            }
          })
        )
      })

    /**
     * Looks the record up (outside any transaction: DNS can take seconds), then marks the domain verified if the
     * connection still has the domain and token that were checked.
     */
    const verifyDomain = (principal: MemberContext) =>
      Effect.gen(function*() {
        yield* allowed(principal)
        // The spec asks for a session here: an API key answers 403 `session_required` (after the plan and role).
        yield* sessionOf(principal)
        const organizationId = principal.organization.id
        const found = yield* orUnavailable(repository.find({ organizationId }))
        if (Option.isNone(found)) return yield* new OrganizationNotFound()
        const row = found.value
        if (row.domainVerifiedAt !== null) {
          return { verified: true as const, domain: row.domain, verifiedAt: row.domainVerifiedAt, ssoConnection: toConnection(row) }
        }
        const at = yield* now
        if (row.verificationToken === null || row.verificationExpiresAt === null) return yield* notRequested(row.domain, false)
        if (row.verificationExpiresAt.getTime() <= at.getTime()) return yield* notRequested(row.domain, true)
        const recordName = recordNameOf(row.domain)
        const expectedValue = recordValueOf(row.verificationToken)
        const values = yield* resolver.txt(recordName).pipe(
          Effect.catchTag("DnsLookupError", (error) => Effect.fail(new DnsLookupFailed({ message: error.message })))
        )
        if (!values.includes(expectedValue)) {
          return yield* new DomainVerificationFailed({
            message: values.length === 0
              ? `No TXT record found at ${recordName}: publish one with the value ${expectedValue}.`
              : `The TXT records at ${recordName} do not include the expected value ${expectedValue}.`,
            recordName,
            expectedValue,
            foundValues: values.slice(0, 20).map((value) => value.slice(0, 255))
          })
        }
        return yield* transaction(
          Effect.gen(function*() {
            const locked = yield* repository.lock({ organizationId })
            if (Option.isNone(locked)) return yield* new OrganizationNotFound()
            const current = locked.value
            // Changed while we looked (a new domain, say): what was checked no longer applies.
            if (current.domain !== row.domain || current.verificationToken !== row.verificationToken) {
              return yield* notRequested(current.domain, false)
            }
            const verifiedAt = current.domainVerifiedAt ?? (yield* now)
            if (current.domainVerifiedAt === null) yield* repository.markVerified({ organizationId, at: verifiedAt }, current.domain)
            const updated = Option.getOrThrow(yield* repository.find({ organizationId }))
            return { verified: true as const, domain: updated.domain, verifiedAt, ssoConnection: toConnection(updated) }
          })
        )
      })

    return { put, get, remove, requestDomainVerification, verifyDomain } as const
  }),
  dependencies: [SsoRepository.Default]
}) {}
