/**
 * Storage of SSO: an organization's domains with their verification, its connections (settings as JSON, the OIDC
 * client secret encrypted in its own column) and the domains each serves, with the active flag the database keeps
 * unique per domain.
 */
import {
  Conflict,
  DomainVerificationConflict,
  OrganizationId,
  SsoConnectionId,
  SsoConnectionKind,
  SsoConnectionState,
  SsoFailure,
  SsoIntentId,
  SsoJit,
  SsoMapping,
  SsoProfile
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { catchUniqueViolation } from "../platform/Sql.js"
import { DateColumn, execute, findAll, findOne } from "../platform/Statements.js"

// Domains ------------------------------------------------------------------------------------------------------------

export const SsoDomainRow = Schema.Struct({
  organizationId: OrganizationId,
  domain: Schema.String,
  verificationToken: Schema.NullOr(Schema.String),
  verificationExpiresAt: Schema.NullOr(DateColumn),
  verifiedAt: Schema.NullOr(DateColumn),
  createdAt: DateColumn,
  updatedAt: DateColumn
})
export type SsoDomainRow = typeof SsoDomainRow.Type

// Connections --------------------------------------------------------------------------------------------------------

/** The OIDC settings as stored (the secret is in its own column). */
export const StoredOidc = Schema.Struct({
  issuer: Schema.String,
  endpoints: Schema.NullOr(Schema.Struct({
    authorization: Schema.String,
    token: Schema.String,
    jwks: Schema.String,
    userinfo: Schema.NullOr(Schema.String)
  })),
  clientId: Schema.String,
  scopes: Schema.Array(Schema.String),
  tokenEndpointAuthMethod: Schema.Literals(["client_secret_basic", "client_secret_post"])
})
export type StoredOidc = typeof StoredOidc.Type

/**
 * The SAML settings as stored. `certificates` are PEM (the manual ones, or those the SAML engine read from the
 * metadata); `entityId`/`ssoUrl` likewise. The SAML engine may add members (metadata fetched at, ...).
 */
export const StoredSaml = Schema.Struct({
  source: Schema.Literals(["metadataUrl", "metadataXml", "manual"]),
  metadataUrl: Schema.NullOr(Schema.String),
  metadataXml: Schema.NullOr(Schema.String),
  entityId: Schema.NullOr(Schema.String),
  ssoUrl: Schema.NullOr(Schema.String),
  certificates: Schema.Array(Schema.String),
  allowIdpInitiated: Schema.Boolean,
  relayStateAllowList: Schema.Array(Schema.String),
  /** Read from the metadata (HTTP-Redirect preferred); absent on rows from before the SAML engine: redirect. */
  ssoBinding: Schema.optionalKey(Schema.Literals(["redirect", "post"])),
  /** Metadata URL only: the latest fetch (ISO instant), and why it failed. */
  metadataRefresh: Schema.optionalKey(
    Schema.Struct({
      at: Schema.String,
      ok: Schema.Boolean,
      message: Schema.NullOr(Schema.String),
      /** When the settings were last taken from the metadata (ISO instant); absent on rows from before it was kept. */
      succeededAt: Schema.optionalKey(Schema.String)
    })
  )
})
export type StoredSaml = typeof StoredSaml.Type

/** A test as stored on its connection (the latest one) and answered by `getTest`. */
export const StoredTest = Schema.Struct({
  id: SsoIntentId,
  configRevision: Schema.Number,
  status: Schema.Literals(["pending", "succeeded", "failed"]),
  startedAt: Schema.String,
  completedAt: Schema.NullOr(Schema.String),
  /** The claims as JSON text: the SQL client camel-cases the keys of JSON objects it reads, and claims are kept as sent. */
  claimsJson: Schema.NullOr(Schema.String),
  profile: Schema.NullOr(SsoProfile),
  failure: Schema.NullOr(SsoFailure)
})
export type StoredTest = typeof StoredTest.Type

export const SsoConnectionRow = Schema.Struct({
  id: SsoConnectionId,
  organizationId: OrganizationId,
  kind: SsoConnectionKind,
  name: Schema.String,
  state: SsoConnectionState,
  jit: SsoJit,
  mapping: SsoMapping,
  oidc: Schema.NullOr(StoredOidc),
  oidcClientSecretCiphertext: Schema.NullOr(Schema.String),
  saml: Schema.NullOr(StoredSaml),
  configRevision: Schema.Number,
  lastTest: Schema.NullOr(StoredTest),
  createdAt: DateColumn,
  updatedAt: DateColumn
})
export type SsoConnectionRow = typeof SsoConnectionRow.Type

/** What a write gives: the JSON columns as text. */
const json = (value: unknown) => (value === null ? null : JSON.stringify(value))

const ConnectionDomainRow = Schema.Struct({
  connectionId: SsoConnectionId,
  domain: Schema.String,
  verified: Schema.Boolean
})
export type ConnectionDomainRow = typeof ConnectionDomainRow.Type

const Scoped = Schema.Struct({ organizationId: OrganizationId })
const ScopedDomain = Schema.Struct({ organizationId: OrganizationId, domain: Schema.String })
const ScopedConnection = Schema.Struct({ organizationId: OrganizationId, id: SsoConnectionId })

export const domainTaken = (domain: string) =>
  new DomainVerificationConflict({ reason: "sso_domain_taken", message: `Another organization has already verified ${domain}.` })

export const domainServed = () =>
  new Conflict({
    error: "sso_domain_served",
    message: "Another active connection serves one of this connection's domains: deactivate it first (one active connection per domain)."
  })

/**
 * Most domains and connections one organization may have (each addition takes the limit's lock, Sso.ts `lockLimits`),
 * so the lists, answered whole, stay short.
 */
export const MAX_PER_ORGANIZATION = 50

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // Domains

  const listDomains = findAll({
    Request: Scoped,
    Result: SsoDomainRow,
    execute: ({ organizationId }) =>
      sql`SELECT * FROM sso_domains WHERE organization_id = ${organizationId} ORDER BY created_at, domain`
  })

  const findDomain = findOne({
    Request: ScopedDomain,
    Result: SsoDomainRow,
    execute: ({ domain, organizationId }) => sql`SELECT * FROM sso_domains WHERE organization_id = ${organizationId} AND domain = ${domain}`
  })

  const lockDomain = findOne({
    Request: ScopedDomain,
    Result: SsoDomainRow,
    execute: ({ domain, organizationId }) =>
      sql`SELECT * FROM sso_domains WHERE organization_id = ${organizationId} AND domain = ${domain} FOR UPDATE`
  })

  /** Adds the domains the organization does not have yet (unverified). */
  const addDomains = Effect.fn("SsoRepository.addDomains")(function*(organizationId: OrganizationId, domains: ReadonlyArray<string>, at: Date) {
    const rows = domains.map((domain) => ({
      organizationId,
      domain,
      verificationToken: null,
      verificationExpiresAt: null,
      verifiedAt: null,
      createdAt: at,
      updatedAt: at
    }))
    if (!Arr.isArrayNonEmpty(rows)) return
    yield* sql`INSERT INTO sso_domains ${sql.insert(rows)} ON CONFLICT (organization_id, domain) DO NOTHING`
  })

  const countDomains = Effect.fn("SsoRepository.countDomains")(function*(organizationId: OrganizationId) {
    const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM sso_domains WHERE organization_id = ${organizationId}`
    return rows[0]?.count ?? 0
  })

  const setVerificationRequest = execute({
    Request: Schema.Struct({ ...ScopedDomain.fields, token: Schema.String, expiresAt: DateColumn, at: DateColumn }),
    execute: ({ at, domain, expiresAt, organizationId, token }) =>
      sql`UPDATE sso_domains SET verification_token = ${token}, verification_expires_at = ${expiresAt}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND domain = ${domain}`
  })

  const markVerifiedRow = execute({
    Request: Schema.Struct({ ...ScopedDomain.fields, at: DateColumn }),
    execute: ({ at, domain, organizationId }) =>
      sql`UPDATE sso_domains SET verified_at = ${at}, updated_at = ${at} WHERE organization_id = ${organizationId} AND domain = ${domain}`
  })
  const markVerified = Effect.fn("SsoRepository.markVerified")(function*(request: typeof ScopedDomain.Type & { readonly at: Date }) {
    yield* markVerifiedRow(request).pipe(catchUniqueViolation(() => domainTaken(request.domain)))
  })

  const removeDomain = Effect.fn("SsoRepository.removeDomain")(function*({ domain, organizationId }: typeof ScopedDomain.Type) {
    const rows = yield* sql`DELETE FROM sso_domains WHERE organization_id = ${organizationId} AND domain = ${domain} RETURNING domain`
    return rows.length > 0
  })

  /** Whether an active connection of the organization serves the domain. */
  const domainInUse = Effect.fn("SsoRepository.domainInUse")(function*({ domain, organizationId }: typeof ScopedDomain.Type) {
    const rows = yield* sql`SELECT 1 FROM sso_connection_domains WHERE organization_id = ${organizationId} AND domain = ${domain} AND active`
    return rows.length > 0
  })

  // Connections

  const listConnections = findAll({
    Request: Scoped,
    Result: SsoConnectionRow,
    execute: ({ organizationId }) =>
      sql`SELECT * FROM sso_connections WHERE organization_id = ${organizationId} ORDER BY id`
  })

  /**
   * A connection of the organization, none once the organization is deleted: sign-in reads connections here (an
   * OIDC callback, a test), and a deleted organization's sign-in stops at once.
   */
  const findConnection = findOne({
    Request: ScopedConnection,
    Result: SsoConnectionRow,
    execute: ({ id, organizationId }) =>
      sql`SELECT c.* FROM sso_connections c JOIN organizations o ON o.id = c.organization_id AND o.deleted_at IS NULL
            WHERE c.organization_id = ${organizationId} AND c.id = ${id}`
  })

  /**
   * A connection by its id alone, in whatever organization: the public SAML routes (ACS, SP metadata) name only
   * that. None once its organization is deleted.
   */
  const findConnectionById = findOne({
    Request: SsoConnectionId,
    Result: SsoConnectionRow,
    execute: (id) =>
      sql`SELECT c.* FROM sso_connections c JOIN organizations o ON o.id = c.organization_id AND o.deleted_at IS NULL
            WHERE c.id = ${id}`
  })

  const lockConnection = findOne({
    Request: ScopedConnection,
    Result: SsoConnectionRow,
    execute: ({ id, organizationId }) =>
      sql`SELECT * FROM sso_connections WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`
  })

  const countConnections = Effect.fn("SsoRepository.countConnections")(function*(organizationId: OrganizationId) {
    const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM sso_connections WHERE organization_id = ${organizationId}`
    return rows[0]?.count ?? 0
  })

  const insertConnection = Effect.fn("SsoRepository.insertConnection")(function*(row: SsoConnectionRow) {
    yield* sql`INSERT INTO sso_connections ${
      sql.insert({
        ...row,
        jit: json(row.jit),
        mapping: json(row.mapping),
        oidc: json(row.oidc),
        saml: json(row.saml),
        lastTest: json(row.lastTest)
      })
    }`
  })

  /** Writes every column of the row but its ids and creation time. */
  const updateConnection = Effect.fn("SsoRepository.updateConnection")(function*(row: SsoConnectionRow) {
    yield* sql`UPDATE sso_connections SET
            name = ${row.name}, state = ${row.state}, jit = ${json(row.jit)}, mapping = ${json(row.mapping)},
            oidc = ${json(row.oidc)}, oidc_client_secret_ciphertext = ${row.oidcClientSecretCiphertext}, saml = ${json(row.saml)},
            config_revision = ${row.configRevision}, last_test = ${json(row.lastTest)}, updated_at = ${row.updatedAt}
          WHERE organization_id = ${row.organizationId} AND id = ${row.id}`
  })

  /** Records a test on its connection, if it is still the latest one (a newer test replaced it otherwise). */
  const recordTest = Effect.fn("SsoRepository.recordTest")(function*(organizationId: OrganizationId, id: SsoConnectionId, test: StoredTest) {
    yield* sql`UPDATE sso_connections SET last_test = ${json(test)}
          WHERE organization_id = ${organizationId} AND id = ${id} AND last_test->>'id' = ${test.id}`
  })

  const removeConnection = Effect.fn("SsoRepository.removeConnection")(function*({ id, organizationId }: typeof ScopedConnection.Type) {
    const rows = yield* sql`DELETE FROM sso_connections WHERE organization_id = ${organizationId} AND id = ${id} RETURNING id`
    return rows.length > 0
  })

  const connectionDomainsStatement = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, ids: Schema.Array(SsoConnectionId) }),
    Result: ConnectionDomainRow,
    execute: (request) =>
      sql`SELECT cd.connection_id, cd.domain, (d.verified_at IS NOT NULL) AS verified
              FROM sso_connection_domains cd
              JOIN sso_domains d ON d.organization_id = cd.organization_id AND d.domain = cd.domain
              WHERE cd.organization_id = ${request.organizationId} AND cd.connection_id IN ${sql.in(request.ids)}
              ORDER BY cd.domain`
  })

  /** The domains each connection serves, with their verification. */
  const connectionDomains = Effect.fn("SsoRepository.connectionDomains")(function*(organizationId: OrganizationId, ids: ReadonlyArray<SsoConnectionId>) {
    if (ids.length === 0) return [] as ReadonlyArray<ConnectionDomainRow>
    return yield* connectionDomainsStatement({ organizationId, ids })
  })

  /** Makes the connection serve exactly these domains (inactive links; activation sets them). */
  const setConnectionDomains = Effect.fn("SsoRepository.setConnectionDomains")(function*(organizationId: OrganizationId, id: SsoConnectionId, domains: ReadonlyArray<string>) {
    yield* sql`DELETE FROM sso_connection_domains WHERE organization_id = ${organizationId} AND connection_id = ${id}`
    const rows = domains.map((domain) => ({ organizationId, connectionId: id, domain, active: false }))
    if (Arr.isArrayNonEmpty(rows)) {
      yield* sql`INSERT INTO sso_connection_domains ${sql.insert(rows)}`
    }
  })

  /** Marks the connection's domains active: at most one active connection per domain, or `sso_domain_served`. */
  const activateDomains = Effect.fn("SsoRepository.activateDomains")(function*(organizationId: OrganizationId, id: SsoConnectionId) {
    yield* sql`UPDATE sso_connection_domains SET active = true WHERE organization_id = ${organizationId} AND connection_id = ${id}`.pipe(
      catchUniqueViolation(domainServed)
    )
  })

  const deactivateDomains = Effect.fn("SsoRepository.deactivateDomains")(function*(organizationId: OrganizationId, id: SsoConnectionId) {
    yield* sql`UPDATE sso_connection_domains SET active = false WHERE organization_id = ${organizationId} AND connection_id = ${id}`
  })

  /** The active connection serving an email's domain, whatever its organization, unless it is deleted (home-realm discovery). */
  const activeForDomain = findOne({
    Request: Schema.String,
    Result: SsoConnectionRow,
    execute: (domain) =>
      sql`SELECT c.* FROM sso_connection_domains cd
            JOIN sso_connections c ON c.organization_id = cd.organization_id AND c.id = cd.connection_id
            JOIN organizations o ON o.id = cd.organization_id AND o.deleted_at IS NULL
            WHERE cd.domain = ${domain} AND cd.active`
  })

  /**
   * SAML connections by metadata URL whose latest fetch is at or before `before` (or that record none), the longest
   * unrefreshed first, at most `limit`: the scheduled refresh's work (sso/SamlRefresh.ts), in every organization.
   * `at` is an ISO-8601 UTC text, so its byte order is time order (the index of migration 0024).
   */
  const dueForMetadataRefresh = findAll({
    Request: Schema.Struct({ before: Schema.String, limit: Schema.Number }),
    Result: Schema.Struct({ organizationId: OrganizationId, id: SsoConnectionId }),
    execute: ({ before, limit }) =>
      sql`/* instance-wide: SAML metadata URLs due for a refresh (sso/SamlRefresh.ts) */
            SELECT organization_id, id FROM sso_connections c
            WHERE saml->>'source' = 'metadataUrl'
              AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = c.organization_id AND o.deleted_at IS NOT NULL)
              AND ((saml->'metadataRefresh'->>'at') COLLATE "C" IS NULL OR (saml->'metadataRefresh'->>'at') COLLATE "C" <= ${before})
            ORDER BY (saml->'metadataRefresh'->>'at') COLLATE "C" NULLS FIRST, id
            LIMIT ${limit}`
  })

  /** Which of these teams the organization has. */
  const existingTeams = Effect.fn("SsoRepository.existingTeams")(function*(organizationId: OrganizationId, ids: ReadonlyArray<string>) {
    if (ids.length === 0) return new Set<string>()
    const rows = yield* sql<{ id: string }>`SELECT id FROM teams WHERE organization_id = ${organizationId} AND id IN ${sql.in(ids)}`
    return new Set(rows.map((row) => row.id))
  })

  return {
    existingTeams,
    listDomains,
    findDomain,
    lockDomain,
    addDomains,
    countDomains,
    setVerificationRequest,
    markVerified,
    removeDomain,
    domainInUse,
    listConnections,
    findConnection,
    findConnectionById,
    lockConnection,
    countConnections,
    insertConnection,
    updateConnection,
    recordTest,
    removeConnection,
    connectionDomains,
    setConnectionDomains,
    activateDomains,
    deactivateDomains,
    activeForDomain,
    dueForMetadataRefresh
  } as const
})

export class SsoRepository extends Context.Service<SsoRepository>()("@orgplane/server/sso/SsoRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
