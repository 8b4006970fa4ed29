/**
 * SSO management (enterprise plan; owners and admins): the organization's domains and their verification by a TXT
 * record looked up through the Resolver, and its connections: create (draft), change (a settings change bumps the
 * revision and needs a new test; an active connection refuses it), activate (after a successful test of the current
 * revision, with its domains verified), deactivate, delete.
 */
import {
  Conflict,
  type CreateSsoConnectionRequest,
  DnsLookupFailed,
  DomainVerificationConflict,
  DomainVerificationFailed,
  DomainVerificationRecord,
  InvalidRequest,
  type MemberContext,
  NotFound,
  OidcSettings,
  type OrganizationId,
  SamlSettings,
  SsoConnection,
  type SsoConnectionId,
  type SsoConnectionKind,
  type SsoIntentId,
  type SsoJit,
  type SsoMapping,
  SsoOrganizationDomain,
  SsoTestReport,
  type UpdateSsoConnectionRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import { sessionOf } from "../identity/Authentication.js"
import { Resolver } from "../integrations/dns/Resolver.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { describe, describeChange } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { authorize, type Principal, requireEnterprise, requireRecentAuthentication } from "../platform/Principal.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { lockLimit, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Saml } from "./Saml.js"
import { refreshSucceededAt, sameSettings, storedSamlOf } from "./SamlSettings.js"
import {
  type ConnectionDomainRow,
  MAX_PER_ORGANIZATION,
  type SsoConnectionRow,
  SsoRepository,
  type StoredOidc,
  type StoredTest
} from "./SsoRepository.js"

/** How long a requested TXT record may take to be published and checked. */
export const verificationTtl = Duration.days(7)

export const recordNameOf = (domain: string) => `_orgplane-verification.${domain}`
export const recordValueOf = (token: string) => `orgplane-verification=${token}`

/** Where the OpenID Provider sends the browser back, for every OIDC connection of the server. */
export const oidcRedirectUrl = (base: string) => `${base}/v1/sso/oidc/callback`
/** SAML: the SP's URLs of one connection (the SAML engine serves them). */
export const samlUrls = (base: string, id: SsoConnectionId) => ({
  entityId: `${base}/v1/sso/saml/${id}/metadata`,
  acsUrl: `${base}/v1/sso/saml/${id}/acs`,
  metadataUrl: `${base}/v1/sso/saml/${id}/metadata`
})

export const DEFAULT_SCOPES = ["openid", "email", "profile"] as const

export const defaultMapping = (kind: SsoConnectionKind): SsoMapping =>
  kind === "oidc"
    ? { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: [] }
    : { email: "email", name: "displayName", givenName: "givenName", familyName: "surname", groups: "groups", groupRules: [] }

export const defaultJit: SsoJit = { enabled: true, defaultRole: "member", defaultTeamIds: [] }

export const connectionNotFound = () =>
  new NotFound({ error: "sso_connection_not_found", message: "No such SSO connection in this organization." })

const domainNotFound = (domain: string) =>
  new NotFound({ error: "sso_domain_not_found", message: `${domain} is not a domain of this organization.` })

/** A domain as the audit log names it: `DELETE /v1/sso/domains/{domain}` names it so from its path. */
const domainTarget = (domain: string) => ({ type: "domain", id: domain })

/** The query's `domain` names none of the organization's domains (verify-domain's spec has no 404 to say it). */
const notADomain = (domain: string) =>
  new InvalidRequest({ details: [{ path: ["domain"], message: `${domain} is not a domain of this organization.`, code: "sso_domain_not_found" }] })

const notRequested = (domain: string, expired: boolean) =>
  new DomainVerificationConflict({
    reason: "domain_verification_not_requested",
    message: expired
      ? `The verification request for ${domain} expired: request a new record with POST /v1/sso/request-domain-verification.`
      : `No verification of ${domain} was requested: request a record with POST /v1/sso/request-domain-verification first.`
  })

/** A PEM certificate's subject and expiry (node:crypto), or undefined when it does not parse. */
const readCertificate = (pem: string) => {
  try {
    const certificate = new NodeCrypto.X509Certificate(pem)
    return { pem, subject: certificate.subject.replace(/\n/g, ", "), notAfter: new Date(certificate.validTo) }
  } catch {
    return undefined
  }
}

/** A PEM certificate's subject and expiry (node:crypto); a certificate that does not parse is a 400 on `path`. */
export const parseCertificate = (pem: string, path: ReadonlyArray<string | number>) => {
  const certificate = readCertificate(pem)
  return certificate === undefined
    ? Effect.fail(InvalidRequest.field(path, "is not a certificate that parses (PEM, X.509)"))
    : Effect.succeed(certificate)
}

/** The certificates as answered: those that no longer parse (none should: they were checked) are left out. */
const answeredCertificates = (pems: ReadonlyArray<string>) => pems.flatMap((pem) => readCertificate(pem) ?? [])

export const toTestReport = (connectionId: SsoConnectionId, test: StoredTest) =>
  new SsoTestReport({
    id: test.id,
    connectionId,
    configRevision: test.configRevision,
    status: test.status,
    startedAt: new Date(test.startedAt),
    completedAt: test.completedAt === null ? null : new Date(test.completedAt),
    claims: test.claimsJson === null ? null : JSON.parse(test.claimsJson),
    profile: test.profile,
    failure: test.failure
  })

/** The API's view of a connection: settings without the secret, with its domains and the SP's URLs on `base`. */
export const toConnection = (row: SsoConnectionRow, domains: ReadonlyArray<ConnectionDomainRow>, base: string) =>
  new SsoConnection({
    id: row.id,
    organizationId: row.organizationId,
    kind: row.kind,
    name: row.name,
    state: row.state,
    domains: domains.filter((domain) => domain.connectionId === row.id).map(({ domain, verified }) => ({ domain, verified })),
    jit: row.jit,
    mapping: row.mapping,
    oidc: row.oidc === null ? null : new OidcSettings({
      issuer: row.oidc.issuer,
      endpoints: row.oidc.endpoints,
      clientId: row.oidc.clientId,
      clientSecretSet: row.oidcClientSecretCiphertext !== null,
      scopes: row.oidc.scopes,
      tokenEndpointAuthMethod: row.oidc.tokenEndpointAuthMethod
    }),
    saml: row.saml === null ? null : new SamlSettings({
      source: row.saml.source,
      metadataUrl: row.saml.metadataUrl,
      metadataXml: row.saml.metadataXml,
      entityId: row.saml.entityId,
      ssoUrl: row.saml.ssoUrl,
      certificates: answeredCertificates(row.saml.certificates),
      ssoBinding: row.saml.entityId === null ? null : row.saml.ssoBinding ?? "redirect",
      metadataRefresh: row.saml.metadataRefresh === undefined
        ? null
        : {
          at: new Date(row.saml.metadataRefresh.at),
          ok: row.saml.metadataRefresh.ok,
          message: row.saml.metadataRefresh.message,
          succeededAt: refreshSucceededAt(row.saml) === undefined ? null : new Date(refreshSucceededAt(row.saml)!)
        },
      allowIdpInitiated: row.saml.allowIdpInitiated,
      relayStateAllowList: row.saml.relayStateAllowList
    }),
    sp: row.kind === "oidc"
      ? { redirectUrl: oidcRedirectUrl(base), entityId: null, acsUrl: null, metadataUrl: null }
      : { redirectUrl: null, ...samlUrls(base, row.id) },
    configRevision: row.configRevision,
    lastTest: row.lastTest === null ? null : toTestReport(row.id, row.lastTest),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  })

/** OIDC settings as stored, from the request (scopes always include `openid`). */
const storedOidc = (input: {
  readonly issuer: string
  readonly endpoints?: { readonly authorization: string; readonly token: string; readonly jwks: string; readonly userinfo?: string }
  readonly clientId: string
  readonly scopes?: ReadonlyArray<string>
  readonly tokenEndpointAuthMethod?: "client_secret_basic" | "client_secret_post"
}): StoredOidc => {
  const scopes = input.scopes ?? DEFAULT_SCOPES
  return {
    issuer: input.issuer,
    endpoints: input.endpoints === undefined ? null : { ...input.endpoints, userinfo: input.endpoints.userinfo ?? null },
    clientId: input.clientId,
    scopes: [...new Set(["openid", ...scopes])],
    tokenEndpointAuthMethod: input.tokenEndpointAuthMethod ?? "client_secret_basic"
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

const make = Effect.gen(function*() {
  const repository = yield* SsoRepository
  const crypto = yield* Crypto
  const resolver = yield* Resolver
  const samlEngine = yield* Saml
  const settings = yield* ServerConfig

  /** The plan first (an organization without it learns that whoever asks), then the role. */
  const allowed = Effect.fn("Sso.allowed")(function*(principal: Principal) {
    yield* requireEnterprise(principal, "sso")
    return yield* authorize(principal, "sso.manage")
  })

  /** `allowed`, for a change of who signs in how: also a recent sign-in (Principal.ts `requireRecentAuthentication`). */
  const allowedToChange = Effect.fn("Sso.allowedToChange")(function*(principal: Principal) {
    yield* allowed(principal)
    return yield* requireRecentAuthentication(principal, settings.recentAuthentication)
  })

  /** 400 unless every team named by JIT and the group rules is the organization's. */
  const checkTeams = Effect.fn("Sso.checkTeams")(function*(organizationId: OrganizationId, jit: SsoJit | undefined, mapping: SsoMapping | undefined) {
      const named = [...(jit?.defaultTeamIds ?? []), ...(mapping?.groupRules ?? []).map((rule) => rule.teamId)]
      const existing = yield* repository.existingTeams(organizationId, named)
      const details = [
        ...(jit?.defaultTeamIds ?? []).flatMap((id, index) =>
          existing.has(id) ? [] : [{ path: ["jit", "defaultTeamIds", index], message: `${id} is not a team of this organization` }]
        ),
        ...(mapping?.groupRules ?? []).flatMap((rule, index) =>
          existing.has(rule.teamId) ? [] : [{ path: ["mapping", "groupRules", index, "teamId"], message: `${rule.teamId} is not a team of this organization` }]
        )
      ]
      if (details.length > 0) return yield* new InvalidRequest({ details })
  })

  const answer = (row: SsoConnectionRow, base: string) =>
    Effect.map(repository.connectionDomains(row.organizationId, [row.id]), (domains) => ({ connection: toConnection(row, domains, base) }))

  const tooMany = (what: string) => InvalidRequest.field([], `An organization has at most ${MAX_PER_ORGANIZATION} SSO ${what}.`)

  /**
   * The organization's changes that add connections or domains, one at a time until their transaction ends: taken
   * first, before the count, so two of them cannot both see room under the limits (`lockLimit`).
   */
  const lockLimits = (organizationId: OrganizationId) => lockLimit("sso_limits", organizationId)

  /**
   * A connection's domains, inside its transaction (which took `lockLimits`): new ones become the organization's
   * (capped), then they are its.
   */
  const replaceDomains = Effect.fn("Sso.replaceDomains")(function*(organizationId: OrganizationId, id: SsoConnectionId, domains: ReadonlyArray<string>, at: Date) {
    yield* repository.addDomains(organizationId, domains, at)
    if ((yield* repository.countDomains(organizationId)) > MAX_PER_ORGANIZATION) return yield* tooMany("domains")
    yield* repository.setConnectionDomains(organizationId, id, domains)
  })

  const createConnection = Effect.fn("Sso.createConnection")(function*(principal: Principal, input: CreateSsoConnectionRequest, base: string) {
    yield* allowedToChange(principal)
    const organizationId = principal.organization.id
    const jit: SsoJit = { ...defaultJit, ...input.jit }
    const mapping: SsoMapping = { ...defaultMapping(input.kind), ...input.mapping }
    const id = yield* makeId("ssc")
    const saml = input.kind === "saml" ? yield* storedSamlOf(samlEngine, input.saml, ["saml"], yield* now) : null
    // Encrypted outside the transaction: a retried transaction must not need it again.
    const secret = input.kind === "oidc"
      ? yield* Effect.orDie(crypto.encrypt(input.oidc.clientSecret, bind(SecretColumns.ssoClientSecret, organizationId, id)))
      : null
    const domains = [...new Set(input.domains ?? [])]
    return yield* transaction(Effect.gen(function*() {
      yield* lockLimits(organizationId)
      yield* checkTeams(organizationId, jit, mapping)
      if ((yield* repository.countConnections(organizationId)) >= MAX_PER_ORGANIZATION) return yield* tooMany("connections")
      const at = yield* now
      const row: SsoConnectionRow = {
        id,
        organizationId,
        kind: input.kind,
        name: input.name,
        state: "draft",
        jit,
        mapping,
        oidc: input.kind === "oidc" ? storedOidc(input.oidc) : null,
        oidcClientSecretCiphertext: secret,
        saml,
        configRevision: 1,
        lastTest: null,
        createdAt: at,
        updatedAt: at
      }
      yield* repository.insertConnection(row)
      yield* replaceDomains(organizationId, id, domains, at)
      return yield* answer(row, base)
    }))
  })

  const listConnections = Effect.fn("Sso.listConnections")(function*(principal: Principal, base: string) {
    yield* allowed(principal)
    const organizationId = principal.organization.id
    return yield* orUnavailable(Effect.gen(function*() {
      const rows = yield* repository.listConnections({ organizationId })
      const domains = yield* repository.connectionDomains(organizationId, rows.map((row) => row.id))
      return { connections: rows.map((row) => toConnection(row, domains, base)) }
    }))
  })

  const getConnection = Effect.fn("Sso.getConnection")(function*(principal: Principal, id: SsoConnectionId, base: string) {
    yield* allowed(principal)
    return yield* orUnavailable(Effect.gen(function*() {
      const row = yield* repository.findConnection({ organizationId: principal.organization.id, id })
      if (Option.isNone(row)) return yield* connectionNotFound()
      return yield* answer(row.value, base)
    }))
  })

  const updateConnection = Effect.fn("Sso.updateConnection")(function*(principal: Principal, id: SsoConnectionId, patch: UpdateSsoConnectionRequest, base: string) {
    yield* allowedToChange(principal)
    const organizationId = principal.organization.id
    const found = yield* orUnavailable(repository.findConnection({ organizationId, id }))
    if (Option.isNone(found)) return yield* connectionNotFound()
    const kind = found.value.kind
    if (patch.oidc !== undefined && kind !== "oidc") return yield* InvalidRequest.field(["oidc"], "is for OIDC connections; this one is SAML")
    if (patch.saml !== undefined && kind !== "saml") return yield* InvalidRequest.field(["saml"], "is for SAML connections; this one is OIDC")
    const saml = patch.saml === undefined ? undefined : yield* storedSamlOf(samlEngine, patch.saml, ["saml"], yield* now)
    const secret = patch.oidc?.clientSecret === undefined
      ? undefined
      : yield* Effect.orDie(crypto.encrypt(patch.oidc.clientSecret, bind(SecretColumns.ssoClientSecret, organizationId, id)))
    return yield* transaction(Effect.gen(function*() {
      // New domains count against the organization's limit: the limit's lock first, then the connection's.
      if (patch.domains !== undefined) yield* lockLimits(organizationId)
      const locked = yield* repository.lockConnection({ organizationId, id })
      if (Option.isNone(locked)) return yield* connectionNotFound()
      const row = locked.value
      const jit: SsoJit = { ...row.jit, ...patch.jit }
      const mapping: SsoMapping = { ...row.mapping, ...patch.mapping }
      yield* checkTeams(organizationId, patch.jit === undefined ? undefined : jit, patch.mapping === undefined ? undefined : mapping)
      const current = yield* repository.connectionDomains(organizationId, [id])
      const domains = patch.domains === undefined ? undefined : [...new Set(patch.domains)]
      const oidc = patch.oidc === undefined ? row.oidc : storedOidc(patch.oidc)
      const settingsChanged = (domains !== undefined && !sameJson([...domains].sort(), current.map((d) => d.domain).sort())) ||
        !sameJson(mapping, row.mapping) || !sameJson(oidc, row.oidc) || secret !== undefined ||
        (saml !== undefined && !sameSettings(saml, row.saml))
      if (settingsChanged && row.state === "active") {
        return yield* new Conflict({
          error: "sso_connection_active",
          message:
            "An active connection's settings (domains, mapping, IdP settings) cannot change: that would serve an untested configuration. Create a second connection with the new settings, test it, deactivate this one, activate the new one, then delete this one. Name and JIT settings can change here."
        })
      }
      const at = yield* now
      const updated: SsoConnectionRow = {
        ...row,
        name: patch.name ?? row.name,
        jit,
        mapping,
        oidc,
        oidcClientSecretCiphertext: secret ?? row.oidcClientSecretCiphertext,
        saml: saml ?? row.saml,
        configRevision: settingsChanged ? row.configRevision + 1 : row.configRevision,
        updatedAt: at
      }
      const before = yield* answer(row, base)
      yield* repository.updateConnection(updated)
      if (domains !== undefined) yield* replaceDomains(organizationId, id, domains, at)
      const after = yield* answer(updated, base)
      // The OIDC client's secret is never shown: a new one is named, not stored.
      yield* describeChange(SsoConnection, before.connection, after.connection, { secrets: secret === undefined ? [] : ["oidc.clientSecret"] })
      return after
    }))
  })

  const deleteConnection = Effect.fn("Sso.deleteConnection")(function*(principal: Principal, id: SsoConnectionId) {
    yield* allowedToChange(principal)
    if (!(yield* transaction(repository.removeConnection({ organizationId: principal.organization.id, id })))) {
      return yield* connectionNotFound()
    }
  })

  const activateConnection = Effect.fn("Sso.activateConnection")(function*(principal: Principal, id: SsoConnectionId, base: string) {
    yield* allowedToChange(principal)
    const organizationId = principal.organization.id
    return yield* transaction(Effect.gen(function*() {
      const locked = yield* repository.lockConnection({ organizationId, id })
      if (Option.isNone(locked)) return yield* connectionNotFound()
      const row = locked.value
      if (row.state === "active") return yield* answer(row, base)
      const test = row.lastTest
      if (test === null || test.status !== "succeeded" || test.configRevision !== row.configRevision) {
        return yield* new Conflict({
          error: "sso_connection_untested",
          message: test !== null && test.status === "succeeded"
            ? `The connection changed since its last successful test (revision ${test.configRevision}, now ${row.configRevision}): test it again (POST /v1/sso/connections/${id}/tests).`
            : `Activate a connection after a successful test of its current revision: POST /v1/sso/connections/${id}/tests.`
        })
      }
      const domains = yield* repository.connectionDomains(organizationId, [id])
      const unverified = domains.filter((domain) => !domain.verified).map((domain) => domain.domain)
      if (domains.length === 0 || unverified.length > 0) {
        return yield* new Conflict({
          error: "sso_domain_not_verified",
          message: domains.length === 0
            ? "The connection serves no domain: add its domains (PATCH) and verify them first."
            : `Verify ${unverified.join(", ")} first (POST /v1/sso/request-domain-verification, then /v1/sso/verify-domain).`
        })
      }
      yield* repository.activateDomains(organizationId, id)
      const updated: SsoConnectionRow = { ...row, state: "active", updatedAt: yield* now }
      yield* repository.updateConnection(updated)
      return { connection: toConnection(updated, domains, base) }
    }))
  })

  const deactivateConnection = Effect.fn("Sso.deactivateConnection")(function*(principal: Principal, id: SsoConnectionId, base: string) {
    yield* allowedToChange(principal)
    const organizationId = principal.organization.id
    return yield* transaction(Effect.gen(function*() {
      const locked = yield* repository.lockConnection({ organizationId, id })
      if (Option.isNone(locked)) return yield* connectionNotFound()
      const row = locked.value
      if (row.state !== "active") return yield* answer(row, base)
      yield* repository.deactivateDomains(organizationId, id)
      const updated: SsoConnectionRow = { ...row, state: "inactive", updatedAt: yield* now }
      yield* repository.updateConnection(updated)
      return yield* answer(updated, base)
    }))
  })

  const getTest = Effect.fn("Sso.getTest")(function*(principal: Principal, id: SsoConnectionId, testId: SsoIntentId) {
    yield* allowed(principal)
    const row = yield* orUnavailable(repository.findConnection({ organizationId: principal.organization.id, id }))
    if (Option.isNone(row)) return yield* connectionNotFound()
    const test = row.value.lastTest
    if (test === null || test.id !== testId) {
      return yield* new NotFound({ error: "sso_test_not_found", message: "No such test (only a connection's latest test is kept)." })
    }
    return { test: toTestReport(id, test) }
  })

  // Domains

  const listDomains = Effect.fn("Sso.listDomains")(function*(principal: Principal) {
    yield* allowed(principal)
    const rows = yield* orUnavailable(repository.listDomains({ organizationId: principal.organization.id }))
    return {
      domains: rows.map((row) =>
        new SsoOrganizationDomain({ domain: row.domain, verified: row.verifiedAt !== null, verifiedAt: row.verifiedAt, createdAt: row.createdAt })
      )
    }
  })

  /** The named domain, or the organization's only unverified one (the spec's body-less form). */
  const pickDomain = Effect.fn("Sso.pickDomain")(function*(organizationId: OrganizationId, named: string | undefined) {
      if (named !== undefined) return named
      const unverified = (yield* repository.listDomains({ organizationId })).filter((row) => row.verifiedAt === null)
      if (unverified.length !== 1) {
        // A request that does not say what it is about: a bad request, on the member that would have said it.
        return yield* new InvalidRequest({
          details: [{
            path: ["domain"],
            message: unverified.length === 0
              ? "is required: the organization has no unverified domain (name the domain to verify, or request verification of a new one)"
              : `is required: the organization has several unverified domains (${unverified.map((row) => row.domain).join(", ")}): name one`,
            code: "sso_domain_required"
          }]
        })
      }
      return unverified[0]!.domain
  })

  /** The pending record while it is valid, else a new one (a new random token, a new expiry). */
  const requestDomainVerification = Effect.fn("Sso.requestDomainVerification")(function*(principal: Principal, named: string | undefined) {
    yield* allowed(principal)
    const fresh = yield* crypto.newToken("opv")
    const organizationId = principal.organization.id
    return yield* transaction(Effect.gen(function*() {
      yield* lockLimits(organizationId)
      const domain = yield* pickDomain(organizationId, named)
      yield* describe({ targets: [domainTarget(domain)] })
      const at = yield* now
      yield* repository.addDomains(organizationId, [domain], at)
      if ((yield* repository.countDomains(organizationId)) > MAX_PER_ORGANIZATION) return yield* tooMany("domains")
      const row = Option.getOrThrow(yield* repository.lockDomain({ organizationId, domain }))
      let token = row.verificationToken
      let expiresAt = row.verificationExpiresAt
      if (token === null || expiresAt === null || expiresAt.getTime() <= at.getTime()) {
        token = fresh
        expiresAt = new Date(at.getTime() + Duration.toMillis(verificationTtl))
        yield* repository.setVerificationRequest({ organizationId, domain, token, expiresAt, at })
      }
      return {
        verification: new DomainVerificationRecord({
          domain,
          recordType: "TXT",
          recordName: recordNameOf(domain),
          recordValue: recordValueOf(token),
          expiresAt
        })
      }
    }))
  })

  /**
   * Looks the record up (outside any transaction: DNS can take seconds), then marks the domain verified if it
   * still has the token that was checked.
   */
  const verifyDomain = Effect.fn("Sso.verifyDomain")(function*(principal: MemberContext, named: string | undefined) {
    yield* allowed(principal)
    // The spec asks for a session here: an API key answers 403 `session_required` (after the plan and role).
    yield* sessionOf(principal)
    const organizationId = principal.organization.id
    const domain = named ?? (yield* orUnavailable(pickDomain(organizationId, undefined)))
    yield* describe({ targets: [domainTarget(domain)] })
    const found = yield* orUnavailable(repository.findDomain({ organizationId, domain }))
    if (Option.isNone(found)) return yield* notADomain(domain)
    const row = found.value
    if (row.verifiedAt !== null) return { verified: true as const, domain, verifiedAt: row.verifiedAt }
    const at = yield* now
    if (row.verificationToken === null || row.verificationExpiresAt === null) return yield* notRequested(domain, false)
    if (row.verificationExpiresAt.getTime() <= at.getTime()) return yield* notRequested(domain, true)
    const recordName = recordNameOf(domain)
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
    return yield* transaction(Effect.gen(function*() {
      const locked = yield* repository.lockDomain({ organizationId, domain })
      if (Option.isNone(locked)) return yield* notADomain(domain)
      const current = locked.value
      // Changed while we looked (a new request, say): what was checked no longer applies.
      if (current.verificationToken !== row.verificationToken) return yield* notRequested(domain, false)
      const verifiedAt = current.verifiedAt ?? (yield* now)
      if (current.verifiedAt === null) yield* repository.markVerified({ organizationId, domain, at: verifiedAt })
      return { verified: true as const, domain, verifiedAt }
    }))
  })

  const deleteDomain = Effect.fn("Sso.deleteDomain")(function*(principal: Principal, domain: string) {
    yield* allowed(principal)
    const organizationId = principal.organization.id
    return yield* transaction(Effect.gen(function*() {
      if (yield* repository.domainInUse({ organizationId, domain })) {
        return yield* new Conflict({
          error: "sso_domain_in_use",
          message: `An active connection serves ${domain}: deactivate it first.`
        })
      }
      if (!(yield* repository.removeDomain({ organizationId, domain }))) return yield* domainNotFound(domain)
    }))
  })

  return {
    allowed,
    allowedToChange,
    createConnection,
    listConnections,
    getConnection,
    updateConnection,
    deleteConnection,
    activateConnection,
    deactivateConnection,
    getTest,
    listDomains,
    requestDomainVerification,
    verifyDomain,
    deleteDomain
  } as const
})

export class Sso extends Context.Service<Sso>()("@orgplane/server/sso/Sso", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(SsoRepository.layer))
}
