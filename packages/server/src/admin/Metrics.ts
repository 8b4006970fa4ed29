/**
 * Admin metrics: the instance's usage numbers for its operator (owners and admins of the operator organization),
 * computed on each call from two set-based statements in one read-only, repeatable-read transaction, so every number
 * sees one state.
 */
import { AdminMetricsSummary, type MemberContext } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Operator } from "../identity/Operator.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { MetricsRepository } from "./MetricsRepository.js"

const make = Effect.gen(function*() {
  const operator = yield* Operator
  const repository = yield* MetricsRepository

  const summary = Effect.fn("Metrics.summary")(function*(caller: MemberContext) {
    yield* operator.require(caller, "admin.readMetrics")
    const generatedAt = yield* now
    // Operator.require passed: the caller's organization is the operator organization.
    const request = { now: generatedAt, operatorOrganizationId: caller.organization.id }
    const [counts, activity] = yield* transaction(
      Effect.andThen(repository.snapshot, Effect.all([repository.counts(request), repository.activity(request)]))
    )
    const summary = new AdminMetricsSummary({
      ...counts,
      ...activity,
      usersWithoutWorkers: Math.max(0, counts.totalUsers - counts.usersWithWorkers),
      unpaidUsers: Math.max(0, counts.totalUsers - counts.paidUsers),
      billingUnavailableUsers: 0,
      billingLoaded: true
    }, { disableChecks: true })
    return { summary, generatedAt }
  })

  return { summary } as const
})

export class Metrics extends Context.Service<Metrics>()("@orgplane/server/admin/Metrics", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide([MetricsRepository.layer, Operator.layer]))
}
