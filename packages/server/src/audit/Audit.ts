/**
 * Reading the audit log: owners and admins list, filter and get their organization's events, and the catalog of
 * actions. Events are written by `platform/AuditRecorder.ts`, in the transactions of the changes they record.
 */
import { AuditActions, type AuditEventsQuery, NotFound } from "@orgplane/schema"
import { Effect, Option } from "effect"
import { authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable } from "../platform/Sql.js"
import { AuditRepository } from "./AuditRepository.js"

const eventNotFound = () => new NotFound({ error: "audit_event_not_found", message: "Audit event not found." })

/** The catalog, in its declared order (by area). */
const eventTypes = {
  items: Object.entries(AuditActions).map(([action, rule]) => ({
    action: action as keyof typeof AuditActions,
    category: rule.category,
    description: rule.description
  }))
}

export class Audit extends Effect.Service<Audit>()("@orgplane/server/audit/Audit", {
  effect: Effect.gen(function*() {
    const events = yield* AuditRepository

    const list = (principal: Principal, query: AuditEventsQuery) =>
      Effect.zipRight(authorize(principal, "audit.read"), orUnavailable(events.list(principal.organization.id, query)))

    const get = (principal: Principal, id: string) =>
      Effect.zipRight(
        authorize(principal, "audit.read"),
        orUnavailable(events.get({ organizationId: principal.organization.id, id })).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(eventNotFound()), onSome: (event) => Effect.succeed({ event }) }))
        )
      )

    const types = (principal: Principal) => Effect.as(authorize(principal, "audit.read"), eventTypes)

    return { list, get, types } as const
  }),
  dependencies: [AuditRepository.Default]
}) {}
