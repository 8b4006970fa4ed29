/**
 * SAML IdP metadata kept current: the metadata URL of each SAML connection that has one is fetched again (through
 * the outbound guard) when its latest fetch is older than `ORGPLANE_SAML_METADATA_REFRESH_INTERVAL`, by a job every
 * 5 minutes on the durable engine's cron (`ClusterCron`, so once per cluster), and on an administrator's request
 * (`POST /v1/sso/connections/{id}/refresh-metadata`). What a fetch changes is `applyRefresh`'s (SamlSettings.ts).
 */
import { Conflict, type OrganizationId, type ServiceUnavailable, type SsoConnectionId } from "@orgplane/schema"
import * as ClusterCron from "effect/cluster/ClusterCron"
import * as Context from "effect/Context"
import * as Cron from "effect/Cron"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Saml, type SamlService } from "./Saml.js"
import { applyRefresh } from "./SamlSettings.js"
import { SamlRefreshConfig } from "./SamlRefreshConfig.js"
import { connectionNotFound, Sso, toConnection } from "./Sso.js"
import { type SsoConnectionRow, SsoRepository } from "./SsoRepository.js"

/** One run takes at most this many connections; the next run (5 minutes later) takes the rest. */
export const REFRESH_BATCH = 50
/** Fetches in flight at once: 50 fetches of at most 10 seconds each end well within the 5 minutes between runs. */
export const REFRESH_CONCURRENCY = 5

const metadataUrlRequired = (row: SsoConnectionRow) =>
  new Conflict({
    error: "sso_metadata_url_required",
    message: row.saml === null
      ? "This is an OIDC connection: only a SAML connection whose IdP settings come from a metadata URL refreshes them."
      : `This SAML connection's settings come from ${
        row.saml.source === "metadataXml" ? "metadata XML" : "values given by hand"
      }: only a metadata URL can be refreshed (save its SAML settings with source metadataUrl to have them refreshed).`
  })

/**
 * Fetches the connection's metadata URL again and applies it: the fetch outside any transaction (it can take
 * seconds), then the change to the row as it is then, if it still names the same URL (an administrator may have
 * changed the settings meanwhile: then nothing is written), recorded as fetched `at`. The row as written, or as found when nothing applies;
 * None when the connection is gone.
 */
export const refreshConnection = Effect.fn("SamlRefresh.refreshConnection")(function*(
  saml: SamlService,
  scope: { readonly organizationId: OrganizationId; readonly id: SsoConnectionId },
  at: Date
): Effect.fn.Return<Option.Option<SsoConnectionRow>, SqlError | ServiceUnavailable, SqlClient.SqlClient | SsoRepository> {
  const repository = yield* SsoRepository
  const found = yield* repository.findConnection(scope)
  if (Option.isNone(found)) return found
  const url = found.value.saml?.source === "metadataUrl" ? found.value.saml.metadataUrl : null
  if (url === null) return found
  const fetched = yield* Effect.result(saml.fetchIdpMetadata(url))
  return yield* transaction(Effect.gen(function*() {
    const locked = yield* repository.lockConnection(scope)
    if (Option.isNone(locked)) return locked
    const row = locked.value
    if (row.saml === null || row.saml.source !== "metadataUrl" || row.saml.metadataUrl !== url) return locked
    const refreshed = applyRefresh(row.saml, fetched, at)
    // Neither the revision nor the state moves: a rotation published at the configured URL is no new configuration.
    const updated: SsoConnectionRow = { ...row, saml: refreshed.saml, updatedAt: refreshed.changed ? at : row.updatedAt }
    yield* repository.updateConnection(updated)
    return Option.some(updated)
  }))
})

/**
 * One run of the scheduled refresh at `now`: the connections whose latest fetch is at least `interval` old (the
 * longest unrefreshed first, at most `limit`, default `REFRESH_BATCH`), each fetched and applied on its own, so one IdP's failure is
 * recorded on its connection and stops nothing else. Answers how many it fetched. The tests call it directly.
 */
export const refreshDue = Effect.fn("SamlRefresh.refreshDue")(function*(
  options: { readonly now: Date; readonly interval: Duration.Input; readonly limit?: number | undefined }
): Effect.fn.Return<number, SqlError | ServiceUnavailable, SqlClient.SqlClient | Saml | SsoRepository> {
  const saml = yield* Saml
  const repository = yield* SsoRepository
  const before = new Date(options.now.getTime() - Duration.toMillis(options.interval))
  const due = yield* repository.dueForMetadataRefresh({ before: before.toISOString(), limit: options.limit ?? REFRESH_BATCH })
  yield* Effect.forEach(due, (scope) => refreshConnection(saml, scope, options.now), { concurrency: REFRESH_CONCURRENCY, discard: true })
  return due.length
}, Effect.provide(SsoRepository.layer))

/** Every 5 minutes: each connection is fetched within 5 minutes of its interval passing. */
export const schedule = Cron.parseUnsafe("*/5 * * * *", "UTC")

/** The refresh, once per cluster every 5 minutes. */
export const layer = ClusterCron.make({
  name: "saml-metadata-refresh",
  cron: schedule,
  // Its requirements (the database, the SAML engine, the settings) are the layer's, taken from where it is provided.
  execute: Effect.gen(function*() {
    const { interval } = yield* SamlRefreshConfig
    const fetched = yield* refreshDue({ now: yield* now, interval })
    if (fetched > 0) yield* Effect.logDebug(`Refreshed the IdP metadata of ${fetched} SAML connections`)
  })
})

const makeSamlRefresh = Effect.gen(function*() {
  const sso = yield* Sso
  const saml = yield* Saml
  const repository = yield* SsoRepository

  const refreshMetadata = Effect.fn("SamlRefresh.refreshMetadata")(function*(principal: Principal, id: SsoConnectionId, base: string) {
    yield* sso.allowed(principal)
    const scope = { organizationId: principal.organization.id, id }
    return yield* orUnavailable(Effect.gen(function*() {
      const found = yield* repository.findConnection(scope)
      if (Option.isNone(found)) return yield* connectionNotFound()
      if (found.value.saml?.source !== "metadataUrl") return yield* metadataUrlRequired(found.value)
      const refreshed = yield* refreshConnection(saml, scope, yield* now).pipe(Effect.provideService(SsoRepository, repository))
      if (Option.isNone(refreshed)) return yield* connectionNotFound()
      const domains = yield* repository.connectionDomains(scope.organizationId, [id])
      return { connection: toConnection(refreshed.value, domains, base) }
    }))
  })

  return { refreshMetadata } as const
})

/** The administrator's refresh of one connection (owners and admins, enterprise plan). */
export class SamlRefresh extends Context.Service<SamlRefresh>()("@orgplane/server/sso/SamlRefresh", { make: makeSamlRefresh }) {
  static readonly layer = Layer.effect(this, this.make)
}
