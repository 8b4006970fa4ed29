/**
 * Admin metrics: the instance's usage numbers for its operator (owners and admins of the operator organization),
 * computed on each call from two set-based statements in one read-only, repeatable-read transaction, so every number
 * sees one state.
 */
import { AdminMetricsSummary, type MemberContext } from "@orgplane/schema"
import { Effect } from "effect"
import { Operator } from "../identity/Operator.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { MetricsRepository } from "./MetricsRepository.js"

export class Metrics extends Effect.Service<Metrics>()("@orgplane/server/admin/Metrics", {
  effect: Effect.gen(function*() {
    const operator = yield* Operator
    const repository = yield* MetricsRepository

    const summary = (caller: MemberContext) =>
      Effect.gen(function*() {
        yield* operator.require(caller, "admin.readMetrics")
        const generatedAt = yield* now
        // Operator.require passed: the caller's organization is the operator organization.
        const request = { now: generatedAt, operatorOrganizationId: caller.organization.id }
        const [counts, activity] = yield* transaction(
          Effect.zipRight(repository.snapshot, Effect.all([repository.counts(request), repository.activity(request)]))
        )
        const summary = new AdminMetricsSummary({
          ...counts,
          ...activity,
          usersWithoutWorkers: Math.max(0, counts.totalUsers - counts.usersWithWorkers),
          unpaidUsers: Math.max(0, counts.totalUsers - counts.paidUsers),
          billingUnavailableUsers: 0,
          billingLoaded: true
        }, true)
        return { summary, generatedAt }
      })

    return { summary } as const
  }),
  dependencies: [MetricsRepository.Default, Operator.Default]
}) {}

