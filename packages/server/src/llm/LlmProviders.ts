/**
 * LLM providers: registering (owners and admins), reading (what a grant reaches), managing (manager access: owners,
 * admins, the creator and members granted `manager`), the write-only credential, and the two operations that use
 * it: connect (the secret, to a caller a grant reaches, rate-limited and recorded) and test (the provider's model
 * list, through the outbound guard).
 */
import {
  type AccessListQuery,
  Conflict,
  type CreateAccessGrantRequest,
  type CreateLlmProviderRequest,
  InvalidRequest,
  DEFAULT_LIMIT,
  type LlmCatalogModel,
  type LlmCatalogProvider,
  type LlmCatalogQuery,
  type LlmConnection,
  type LlmCredentialInput,
  type LlmModel,
  type LlmModelInput,
  LlmProvider,
  type LlmProviderId,
  type LlmProviderListQuery,
  NotFound,
  RateLimited,
  type SetLlmCredentialRequest,
  type UpdateLlmProviderRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Access, insufficientAccess, LlmProviderKind } from "../access/Access.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { checkUserMember, Outbound } from "../platform/Outbound.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { LlmConfig } from "./LlmConfig.js"
import { LlmProvidersRepository, type LlmProviderView, type Reader } from "./LlmProvidersRepository.js"
import { listModels } from "./ProviderModels.js"

const catalogProviderNotFound = (id: string) =>
  new NotFound({ error: "llm_catalog_provider_not_found", message: `The LLM catalog has no provider "${id.slice(0, 64)}".` })

const noCredential = () =>
  new Conflict({ error: "llm_provider_no_credential", message: "The LLM provider has no credential yet: set one first (PUT .../credential)." })

/** The stored secret parts of a credential (the ciphertext's plaintext). */
const StoredCredential = Schema.fromJsonString(
  Schema.Struct({ apiKey: Schema.optional(Schema.String), accessToken: Schema.optional(Schema.String), refreshToken: Schema.optional(Schema.String) })
)
const StoredHeaders = Schema.fromJsonString(Schema.Record(Schema.String, Schema.String))

/** A provider's stored columns: a row, or a reader's view of one (which adds the reader's rank). */
type ProviderColumns = Omit<LlmProviderView, "accessRank" | "usable">

/**
 * The allow-list as stored: each model's figures, the override given, else the catalog's, else null; and the indexes
 * of the models a catalog provider does not have.
 */
export const modelsOf = (
  inputs: ReadonlyArray<LlmModelInput>,
  catalog: LlmCatalogProvider | undefined
): { readonly models: ReadonlyArray<LlmModel>; readonly unknown: ReadonlyArray<number> } => {
  const known = new Map(catalog?.models.map((model) => [model.id, model]))
  const unknown = catalog === undefined ? [] : inputs.flatMap((input, index) => known.has(input.id) ? [] : [index])
  const models = inputs.map((input) => {
    const entry = known.get(input.id)
    const cost = input.cost === undefined
      ? entry?.cost ?? null
      : { input: input.cost.input, output: input.cost.output, cacheRead: input.cost.cacheRead ?? null }
    return {
      id: input.id,
      name: input.name ?? entry?.name ?? input.id,
      contextWindow: input.contextWindow ?? entry?.contextWindow ?? null,
      maxOutputTokens: input.maxOutputTokens ?? entry?.maxOutputTokens ?? null,
      cost
    }
  })
  return { models, unknown }
}

/** Why a model is refused: not one of the catalog provider's. */
export const unknownModelMessage = (catalog: LlmCatalogProvider) =>
  `is not a model of the catalog provider "${catalog.id}" (GET /v1/llm-provider-catalog?provider=${catalog.id} lists them)`

/** The allow-list as stored (`modelsOf`), or 400 naming each model the catalog provider does not have. */
export const resolveModels = (
  inputs: ReadonlyArray<LlmModelInput>,
  catalog: LlmCatalogProvider | undefined
): Effect.Effect<ReadonlyArray<LlmModel>, InvalidRequest> => {
  const { models, unknown } = modelsOf(inputs, catalog)
  return catalog !== undefined && unknown.length > 0
    ? Effect.fail(new InvalidRequest({ details: unknown.map((index) => ({ path: ["models", index, "id"], message: unknownModelMessage(catalog) })) }))
    : Effect.succeed(models)
}

const toApi = (row: ProviderColumns, rank: number) =>
  new LlmProvider({
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    source: row.source,
    catalogProviderId: row.catalogProviderId,
    apiStyle: row.apiStyle,
    baseUrl: row.baseUrl,
    headerNames: row.headerNames,
    models: row.models,
    credential: row.credentialType === null || row.credentialUpdatedAt === null
      ? null
      : { type: row.credentialType, expiresAt: row.credentialExpiresAt, updatedAt: row.credentialUpdatedAt },
    canManage: rank >= 3,
    lastUsedAt: row.lastUsedAt,
    createdByOrgMembershipId: row.createdByMembershipId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  }, { disableChecks: true })

const viewToApi = (view: LlmProviderView) => toApi(view, view.accessRank)

/** A page of the catalog's models: its revision and the offset of the page's first model, opaque to clients. */
const catalogCursor = (revision: string, offset: number) => Buffer.from(`${revision}:${offset}`, "utf8").toString("base64url")

/** The offset a cursor of this catalog revision names, or undefined for any other string. */
const catalogOffset = (cursor: string, revision: string): number | undefined => {
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const separator = text.lastIndexOf(":")
  if (separator === -1 || text.slice(0, separator) !== revision) return undefined
  const offset = Number(text.slice(separator + 1))
  return Number.isSafeInteger(offset) && offset >= 0 && catalogCursor(revision, offset) === cursor ? offset : undefined
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repository = yield* LlmProvidersRepository
  const access = yield* Access
  const crypto = yield* Crypto
  const outbound = yield* Outbound
  const limiter = yield* RateLimiter
  const config = yield* ServerConfig
  const { catalog, connectPerMinute } = yield* LlmConfig

  const catalogProvider = (id: string) => catalog.providers.find((provider) => provider.id === id)

  /** The principal's rank on row `p` and whether a grant reaches them; lists show what `filter` lets through. */
  const reader = (principal: Principal): Reader => {
    const usable = access.usable(principal, LlmProviderKind, "p")
    return { rank: access.rank(principal, LlmProviderKind, "p"), usable, filter: usable }
  }

  /** Manager access on row `p`: every row for owners and admins, the ones they manage for members. */
  const manageable = (principal: Principal) => sql`${access.rank(principal, LlmProviderKind, "p")} >= 3`

  const secretsOf = (row: ProviderColumns) =>
    Effect.gen(function*() {
      if (row.credentialCiphertext === null || row.credentialType === null) return yield* Effect.fail(noCredential())
      const plain = yield* crypto.decrypt(row.credentialCiphertext, bind(SecretColumns.llmCredential, row.organizationId, row.id))
      const stored = yield* Schema.decodeEffect(StoredCredential)(plain).pipe(Effect.orDie)
      const headers = row.headersCiphertext === null
        ? {}
        : yield* Effect.flatMap(
          crypto.decrypt(row.headersCiphertext, bind(SecretColumns.llmHeaders, row.organizationId, row.id)),
          (text) => Effect.orDie(Schema.decodeEffect(StoredHeaders)(text))
        )
      const secret = row.credentialType === "api_key" ? stored.apiKey ?? "" : stored.accessToken ?? ""
      return { type: row.credentialType, secret, headers }
    })

  const encryptCredential = (organizationId: string, id: string, credential: LlmCredentialInput) =>
    Effect.gen(function*() {
      const plain = credential.type === "api_key"
        ? { apiKey: credential.apiKey }
        : { accessToken: credential.accessToken, ...(credential.refreshToken === undefined ? {} : { refreshToken: credential.refreshToken }) }
      return {
        credentialType: credential.type,
        credentialCiphertext: yield* Effect.orDie(crypto.encrypt(JSON.stringify(plain), bind(SecretColumns.llmCredential, organizationId, id))),
        credentialExpiresAt: credential.type === "oauth" ? credential.expiresAt ?? null : null
      }
    })

  const encryptHeaders = (organizationId: string, id: string, headers: Readonly<Record<string, string>>) =>
    Object.keys(headers).length === 0
      ? Effect.succeed(null)
      : Effect.orDie(crypto.encrypt(JSON.stringify(headers), bind(SecretColumns.llmHeaders, organizationId, id)))

  const checkUrl = (url: string) => checkUserMember(outbound, config.outboundAllowPrivate, ["baseUrl"], url)

  /**
   * The catalog's providers without their models, and a page of the models (of `provider`, matching `q`), in the
   * catalog's order. A cursor names the catalog's revision and the offset of the page's first model, so a cursor of
   * another catalog (a server restarted with another file) is refused, not read at a wrong offset.
   */
  const readCatalog = Effect.fn("LlmProviders.readCatalog")(function*(principal: Principal, query: LlmCatalogQuery) {
    yield* authorize(principal, "llmProviders.use")
    const chosen = query.provider === undefined ? catalog.providers : [catalogProvider(query.provider)]
    const providers = chosen.filter((provider) => provider !== undefined)
    if (query.provider !== undefined && providers.length === 0) return yield* Effect.fail(catalogProviderNotFound(query.provider))
    const needle = query.q?.toLowerCase()
    const selected = (model: LlmCatalogModel) =>
      needle === undefined || model.id.toLowerCase().includes(needle) || model.name.toLowerCase().includes(needle)
    const models = providers.flatMap((provider) => provider.models.filter(selected).map((model) => ({ providerId: provider.id, ...model })))
    const offset = query.cursor === undefined ? 0 : catalogOffset(query.cursor, catalog.revision)
    if (offset === undefined || offset > models.length) {
      return yield* Effect.fail(InvalidRequest.field(["cursor"], "is not a cursor of this catalog: send the nextCursor of its last answer, or none for the first page"))
    }
    const limit = query.limit ?? DEFAULT_LIMIT
    const end = offset + limit
    return {
      source: catalog.source,
      revision: catalog.revision,
      providers: providers.map(({ models: all, ...provider }) => ({ ...provider, modelCount: all.filter(selected).length })),
      models: models.slice(offset, end),
      nextCursor: end < models.length ? catalogCursor(catalog.revision, end) : null
    }
  })

  const create = Effect.fn("LlmProviders.create")(function*(principal: Principal, input: CreateLlmProviderRequest) {
    yield* authorize(principal, "llmProviders.create")
    const fromCatalog = input.catalogProviderId === undefined ? undefined : catalogProvider(input.catalogProviderId)
    if (input.catalogProviderId !== undefined && fromCatalog === undefined) {
      return yield* Effect.fail(InvalidRequest.field(["catalogProviderId"], `is not a provider of the LLM catalog (GET /v1/llm-provider-catalog lists them)`))
    }
    const apiStyle = input.apiStyle ?? fromCatalog?.apiStyle
    const baseUrl = input.baseUrl ?? fromCatalog?.baseUrl
    const missing = [
      ...(apiStyle === undefined ? [{ path: ["apiStyle"], message: "is required for a custom provider (without catalogProviderId)" }] : []),
      ...(baseUrl === undefined ? [{ path: ["baseUrl"], message: "is required for a custom provider (without catalogProviderId)" }] : [])
    ]
    if (missing.length > 0 || apiStyle === undefined || baseUrl === undefined) return yield* Effect.fail(new InvalidRequest({ details: missing }))
    const models = yield* resolveModels(input.models, fromCatalog)
    if (input.baseUrl !== undefined) yield* checkUrl(input.baseUrl)
    const id = yield* makeId("llp")
    const organizationId = principal.organization.id
    const headers = input.headers ?? {}
    const credential = input.apiKey === undefined ? undefined : yield* encryptCredential(organizationId, id, { type: "api_key", apiKey: input.apiKey })
    const headersCiphertext = yield* encryptHeaders(organizationId, id, headers)
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      yield* repository.insert({
        id,
        organizationId,
        name: input.name,
        source: fromCatalog === undefined ? "custom" : "catalog",
        catalogProviderId: fromCatalog?.id ?? null,
        apiStyle,
        baseUrl,
        headerNames: Object.keys(headers),
        headersCiphertext,
        models,
        credentialType: credential?.credentialType ?? null,
        credentialCiphertext: credential?.credentialCiphertext ?? null,
        credentialExpiresAt: credential?.credentialExpiresAt ?? null,
        credentialUpdatedAt: credential === undefined ? null : at,
        lastUsedAt: null,
        createdByMembershipId: actingMembershipId(principal),
        createdAt: at,
        updatedAt: at
      })
      yield* access.grantCreator(principal, LlmProviderKind, id, at)
      // Owners and admins see every provider: the row just written is there for them.
      return yield* Effect.catchTag(read(principal, id), "NotFound", Effect.die)
    }))
  })

  /** The provider as the principal sees it; 404 when missing, another organization's, or no grant reaches a member. */
  const read = (principal: Principal, id: LlmProviderId) =>
    Effect.flatMap(repository.view(principal.organization.id, id, reader(principal)), (found) =>
      Option.isNone(found) || found.value.accessRank < 1
        ? Effect.fail(LlmProviderKind.notFound())
        : Effect.succeed({ ok: true as const, item: viewToApi(found.value) }))

  const get = Effect.fn("LlmProviders.get")(function*(principal: Principal, id: LlmProviderId) {
    yield* authorize(principal, "llmProviders.use")
    return yield* orUnavailable(read(principal, id))
  })

  const list = Effect.fn("LlmProviders.list")(function*(principal: Principal, query: LlmProviderListQuery) {
    yield* authorize(principal, "llmProviders.use")
    const base = reader(principal)
    const filter = query.scope === "manageable" ? manageable(principal) : base.usable
    const page = yield* orUnavailable(repository.list(principal.organization.id, query, { ...base, filter }))
    return { items: page.items.map(viewToApi), nextCursor: page.nextCursor }
  })

  /**
   * The row as the principal may manage it: 404 when missing, another organization's, or no grant reaches a
   * member (as `get`); 403 `insufficient_access` without manager access. With `lock`, locked for the transaction.
   */
  const managed = (principal: Principal, id: LlmProviderId, options: { readonly lock: boolean }) =>
    Effect.gen(function*() {
      if (options.lock) yield* repository.lock(principal.organization.id, id)
      const found = yield* repository.view(principal.organization.id, id, reader(principal))
      if (Option.isNone(found) || found.value.accessRank < 1) return yield* Effect.fail(LlmProviderKind.notFound())
      if (found.value.accessRank < 3) return yield* Effect.fail(insufficientAccess(LlmProviderKind, "manager"))
      const row: ProviderColumns = found.value
      return row
    })
  const lockManaged = (principal: Principal, id: LlmProviderId) => managed(principal, id, { lock: true })

  const update = Effect.fn("LlmProviders.update")(function*(principal: Principal, id: LlmProviderId, input: UpdateLlmProviderRequest) {
    yield* authorize(principal, "llmProviders.use")
    if (input.baseUrl !== undefined) yield* checkUrl(input.baseUrl)
    const headersCiphertext = input.headers === undefined ? undefined : yield* encryptHeaders(principal.organization.id, id, input.headers)
    return yield* transaction(Effect.gen(function*() {
      const row = yield* lockManaged(principal, id)
      const before = yield* read(principal, id)
      const fromCatalog = row.catalogProviderId === null ? undefined : catalogProvider(row.catalogProviderId)
      if (row.catalogProviderId !== null && fromCatalog === undefined && input.models !== undefined) {
        return yield* Effect.fail(InvalidRequest.field(["models"], `cannot be checked: the LLM catalog no longer has the provider "${row.catalogProviderId}"`))
      }
      const models = input.models === undefined ? undefined : yield* resolveModels(input.models, fromCatalog)
      const at = yield* now
      yield* repository.update(principal.organization.id, id, {
        name: input.name,
        baseUrl: input.baseUrl,
        headerNames: input.headers === undefined ? undefined : Object.keys(input.headers),
        headersCiphertext,
        models
      }, at)
      const after = yield* read(principal, id)
      // Header values are secrets the provider never shows: a change of them is named, never stored.
      yield* describeChange(LlmProvider, before.item, after.item, { secrets: input.headers === undefined ? [] : ["headers"] })
      return after
    }))
  })

  const setCredential = Effect.fn("LlmProviders.setCredential")(function*(principal: Principal, id: LlmProviderId, input: SetLlmCredentialRequest) {
    yield* authorize(principal, "llmProviders.use")
    const credential = yield* encryptCredential(principal.organization.id, id, input)
    return yield* transaction(Effect.gen(function*() {
      yield* lockManaged(principal, id)
      const before = yield* read(principal, id)
      yield* repository.setCredential(principal.organization.id, id, credential, yield* now)
      const after = yield* read(principal, id)
      yield* describeChange(LlmProvider, before.item, after.item, { secrets: ["credential"] })
      return after
    }))
  })

  const remove = Effect.fn("LlmProviders.remove")(function*(principal: Principal, id: LlmProviderId) {
    yield* authorize(principal, "llmProviders.use")
    yield* transaction(Effect.gen(function*() {
      yield* lockManaged(principal, id)
      yield* repository.remove(principal.organization.id, id)
    }))
  })

  /**
   * The credential, to a caller a grant reaches. The hook for the audit log (issue 28): the one place a secret
   * leaves, with the principal, the provider and the time at hand.
   */
  const connect = Effect.fn("LlmProviders.connect")(function*(principal: Principal, id: LlmProviderId) {
    yield* authorize(principal, "llmProviders.use")
    const membershipId = actingMembershipId(principal)
    if (membershipId !== null) {
      const decision = yield* orUnavailable(limiter.hit(`llm-connect:${principal.organization.id}:${membershipId}`, connectPerMinute, "1 minute"))
      if (!decision.allowed) {
        return yield* Effect.fail(RateLimited.after(decision.retryAfterSeconds, `Too many connect reads: at most ${connectPerMinute} a minute. Retry in ${decision.retryAfterSeconds} seconds.`))
      }
    }
    yield* orUnavailable(access.requireUsable(principal, LlmProviderKind, id))
    const found = yield* orUnavailable(repository.view(principal.organization.id, id, reader(principal)))
    if (Option.isNone(found)) return yield* Effect.fail(LlmProviderKind.notFound())
    const row: ProviderColumns = found.value
    const secrets = yield* secretsOf(row)
    const at = yield* now
    yield* orUnavailable(repository.touch(principal.organization.id, id, at))
    const connection: LlmConnection = {
      llmProviderId: row.id,
      name: row.name,
      apiStyle: row.apiStyle,
      baseURL: row.baseUrl,
      apiKey: secrets.type === "api_key" ? secrets.secret : null,
      accessToken: secrets.type === "oauth" ? secrets.secret : null,
      expiresAt: row.credentialExpiresAt,
      headers: secrets.headers,
      models: row.models
    }
    return connection
  })

  const test = Effect.fn("LlmProviders.test")(function*(principal: Principal, id: LlmProviderId) {
    yield* authorize(principal, "llmProviders.use")
    const row = yield* orUnavailable(managed(principal, id, { lock: false }))
    const secrets = yield* secretsOf(row)
    const offered = new Set(yield* listModels(outbound, {
      apiStyle: row.apiStyle,
      baseUrl: row.baseUrl,
      credential: { type: secrets.type, secret: secrets.secret },
      headers: secrets.headers
    }))
    const present = row.models.filter((model) => offered.has(model.id)).map((model) => model.id)
    const missing = row.models.filter((model) => !offered.has(model.id)).map((model) => model.id)
    return { ok: missing.length === 0, present, missing, upstreamModelCount: offered.size }
  })

  const grant = Effect.fn("LlmProviders.grant")(function*(principal: Principal, id: LlmProviderId, input: CreateAccessGrantRequest) {
    yield* authorize(principal, "llmProviders.use")
    return yield* orUnavailable(access.grant(principal, LlmProviderKind, id, input))
  })
  const listGrants = Effect.fn("LlmProviders.listGrants")(function*(principal: Principal, id: LlmProviderId, query: AccessListQuery) {
    yield* authorize(principal, "llmProviders.use")
    return yield* access.listGrants(principal, LlmProviderKind, id, query)
  })
  const revoke = Effect.fn("LlmProviders.revoke")(function*(principal: Principal, id: LlmProviderId, grantId: string) {
    yield* authorize(principal, "llmProviders.use")
    return yield* orUnavailable(access.revoke(principal, LlmProviderKind, id, grantId))
  })

  return { readCatalog, create, list, get, update, setCredential, remove, connect, test, grant, listGrants, revoke } as const
})

export class LlmProviders extends Context.Service<LlmProviders>()("@orgplane/server/llm/LlmProviders", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      LlmProvidersRepository.layer,
      Access.layer,
      RateLimiter.layer
    ])
  )
}
