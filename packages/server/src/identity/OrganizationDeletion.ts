/**
 * An organization's deletion and restoration (docs/lifecycle.md). Deleting marks it deleted in one transaction under
 * its lock: from then on every credential and background job of it stops (their statements read the organization's
 * `deleted_at`), its sessions act elsewhere, and any request for it answers 404 `organization_not_found`. The
 * instance's operator may restore it until `purge_after` (`ORGPLANE_ORGANIZATION_DELETION_GRACE`), and so may its
 * owners when one of them deleted it (not the operator, nor the system); then identity/OrganizationPurge.ts removes
 * every row of it.
 *
 * Who asks: one of its members (an owner, with a recent sign-in for a session), the system on behalf of another
 * operation (an account deletion whose person was its last member: `Principal.system(job, organization)`), or the
 * instance's operator (`{ _tag: "Operator", caller }`). Restoring is also asked by a person from a session (the
 * organization is no longer anyone's active one), who must be one of its owners.
 */
import {
  type Actor,
  Conflict,
  Forbidden,
  InvalidRequest,
  type MemberContext,
  type MyOrganizationsQuery,
  NotFound,
  OrganizationNotFound,
  OrganizationDeletion as Deletion,
  type OrganizationId,
  type SessionId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AuditRecorder, describe } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { auditIdentity, authorize, type Principal, requireRecentAuthentication, type SystemPrincipal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Memberships } from "./Memberships.js"
import { toMembership } from "./MembershipsRepository.js"
import { Operator } from "./Operator.js"
import { OrganizationsRepository, ownersMayRestore, toOrganization } from "./OrganizationsRepository.js"
import { OwnershipQuota } from "./OwnershipQuota.js"
import { PurgeRepository } from "./PurgeRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"

/** The instance's operator acting on any organization (identity/Operator.ts decides who that is). */
export interface OperatorRequester {
  readonly _tag: "Operator"
  readonly caller: MemberContext
}

/** Who asks for an organization's deletion: one of its members, the system, or the instance's operator. */
export type Requester = Principal | OperatorRequester

/** A person with a session asking to restore an organization they own. */
export interface PersonRequester {
  readonly _tag: "Person"
  readonly actor: Actor
  readonly sessionId: SessionId
}

/**
 * Who asks for an organization's restoration: one of its owners from a session (no member context can act in a
 * deleted organization), the system, or the instance's operator.
 */
export type RestoreRequester = PersonRequester | SystemPrincipal | OperatorRequester

/** 404 `organization_not_found` as an operation that names an organization in its path answers it. */
export const organizationNotFound = () => new NotFound({ error: "organization_not_found", message: "Organization not found." })

/** The rows per table as one line: `memberships 3, teams 1` (largest first). */
export const describeRows = (rows: Readonly<Record<string, number>>): string =>
  Object.entries(rows).sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).map(([table, count]) => `${table} ${count}`).join(", ") || "none"

export const totalOf = (rows: Readonly<Record<string, number>>): number => Object.values(rows).reduce((sum, count) => sum + count, 0)

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const organizations = yield* OrganizationsRepository
  const sessions = yield* SessionsRepository
  const memberships = yield* Memberships
  const operator = yield* Operator
  const purge = yield* PurgeRepository
  const recorder = yield* AuditRecorder
  const quota = yield* OwnershipQuota

  /** Who deleted it, as the purge's record names them. */
  const deletedBy = (requester: Requester) =>
    requester._tag === "Operator" ? `operator:${requester.caller.membership.id}` : auditIdentity(requester)

  /** The operator's standing, or the member's role and recent sign-in in the organization they act in. */
  const allowed = (requester: Requester, organizationId: OrganizationId) =>
    Effect.gen(function*() {
      if (requester._tag === "Operator") {
        yield* operator.require(requester.caller, "admin.deleteOrganizations")
        return yield* requireRecentAuthentication(requester.caller, settings.recentAuthentication)
      }
      if (requester.organization.id !== organizationId) return yield* new OrganizationNotFound()
      yield* authorize(requester, "organizations.delete")
      yield* requireRecentAuthentication(requester, settings.recentAuthentication)
    })

  /**
   * Deletes the organization (see the module comment): `confirmName`, when given, must be its name. Answers what was
   * scheduled: when it may be restored until, and what the purge will remove, per table. Runs in the caller's
   * transaction when there is one (an account deletion), else in its own.
   */
  const schedule = Effect.fn("OrganizationDeletion.schedule")(function*(
    requester: Requester,
    organizationId: OrganizationId,
    options: { readonly confirmName?: string | undefined } = {}
  ) {
    yield* allowed(requester, organizationId)
    const operatorOrganization = yield* operator.organizationId
    return yield* transaction(Effect.gen(function*() {
      const found = yield* organizations.lockLifecycle(organizationId)
      if (Option.isNone(found) || found.value.deletedAt !== null) return yield* new OrganizationNotFound()
      const row = found.value
      if (Option.contains(operatorOrganization, organizationId)) {
        return yield* new Conflict({
          error: "organization_operates_instance",
          message:
            "This organization operates the instance: deleting it would leave nobody to operate it. Name another one first (ORGPLANE_OPERATOR_ORGANIZATION_ID)."
        })
      }
      if (options.confirmName !== undefined && options.confirmName.trim() !== row.name) {
        return yield* InvalidRequest.field(["confirmName"], "is not this organization's name: repeat it exactly as GET /v1/organization shows it")
      }
      const at = yield* now
      const purgeAfter = new Date(at.getTime() + Duration.toMillis(settings.organizationDeletionGrace))
      const rows = yield* purge.count(organizationId, yield* purge.tenantTables)
      yield* organizations.markDeleted({ id: organizationId, at, purgeAfter, deletedBy: deletedBy(requester) })
      yield* sessions.leaveOrganization(organizationId)
      const reason = `restorable until ${purgeAfter.toISOString()}; the purge will remove ${totalOf(rows)} rows (${describeRows(rows)})`
      if (requester._tag === "System") {
        // On behalf of another operation, whose own event this one does not replace: in the organization's own log.
        yield* recorder.recordSystem({ organizationId, job: requester.job, action: "organization.delete", targets: [organizationId], reason })
      } else {
        yield* describe({ targets: [organizationId], reason })
      }
      return new Deletion({ organization: toOrganization(row), deletedAt: at, purgeAfter, rows, totalRows: totalOf(rows) }, { disableChecks: true })
    }))
  })

  /**
   * Restores a deleted organization within its grace: it serves again as it was. A person restoring it must be one of
   * its owners (with a recent sign-in), and the deletion one its owners may undo (`ownersMayRestore`: not the
   * operator's); their session then acts in it. Each of its owners owns it again, within the organizations they may
   * own (OwnershipQuota). 404 once the grace is over.
   */
  const restore = Effect.fn("OrganizationDeletion.restore")(function*(requester: RestoreRequester, organizationId: OrganizationId) {
    if (requester._tag === "Operator") {
      yield* operator.require(requester.caller, "admin.deleteOrganizations")
      yield* requireRecentAuthentication(requester.caller, settings.recentAuthentication)
    } else if (requester._tag === "System" && requester.organization.id !== organizationId) {
      return yield* organizationNotFound()
    }
    return yield* transaction(Effect.gen(function*() {
      const found = yield* organizations.lockLifecycle(organizationId)
      if (Option.isNone(found)) return yield* organizationNotFound()
      const row = found.value
      const organization = toOrganization(row)
      let member: MemberContext | undefined
      if (requester._tag === "Person") {
        const membership = yield* memberships.findActive(organizationId, { userId: requester.actor.user.id })
        // A suspended membership counts as none, as it does for signing in.
        if (Option.isNone(membership) || (membership.value.suspendedAt ?? null) !== null) return yield* organizationNotFound()
        member = { ...requester.actor, _tag: "Member", organization, membership: toMembership({ ...membership.value, organizationId }) }
        // Recorded in the organization's own log, by its member (a refusal too).
        yield* describe({ organizationId, membershipId: member.membership.id, targets: [organizationId] })
      }
      if (row.deletedAt === null || row.purgeAfter === null) {
        return yield* new Conflict({ error: "organization_not_deleted", message: "This organization is not deleted." })
      }
      const at = yield* now
      if (row.purgeAfter.getTime() <= at.getTime()) return yield* organizationNotFound()
      if (member !== undefined) {
        yield* authorize(member, "organizations.delete")
        // Who deleted it decides who restores it: the operator's (and the system's) deletion is the operator's to undo.
        if (!ownersMayRestore(row.deletedBy)) {
          return yield* new Forbidden({
            reason: "operator_only",
            message: "The instance's operator deleted this organization: only the operator restores it (POST /v1/admin/organizations/{organizationId}/restore)."
          })
        }
        yield* requireRecentAuthentication(member, settings.recentAuthentication)
      }
      // Its owners own it again: each within the organizations they may own (in the order of their ids).
      for (const userId of yield* organizations.ownersOf(organizationId)) {
        yield* quota.requireRoom(userId, requester._tag === "Person" && requester.actor.user.id === userId ? "you" : "an owner of this organization")
      }
      yield* organizations.markRestored({ id: organizationId, at })
      const reason = `deleted by ${row.deletedBy ?? "unknown"} at ${row.deletedAt.toISOString()}`
      if (requester._tag === "Person") {
        yield* memberships.activate(requester.sessionId, organizationId)
        yield* describe({ reason })
      } else if (requester._tag === "System") {
        yield* recorder.recordSystem({ organizationId, job: requester.job, action: "organization.restore", targets: [organizationId], reason })
      } else {
        yield* describe({ targets: [organizationId], reason })
      }
      return { organization }
    }))
  })

  /** The deleted organizations the person owns and may still restore (`GET /v1/me/organizations?deleted=true`). */
  const listRestorable = Effect.fn("OrganizationDeletion.listRestorable")(function*(actor: Actor, query: MyOrganizationsQuery) {
    return yield* orUnavailable(memberships.listRestorable(actor.user.id, yield* now, query))
  })

  return { schedule, restore, listRestorable } as const
})

/** Needs ServerConfig, the audit recorder and the database. */
export class OrganizationDeletion extends Context.Service<OrganizationDeletion>()("@orgplane/server/identity/OrganizationDeletion", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([OrganizationsRepository.layer, SessionsRepository.layer, Memberships.layer, Operator.layer, PurgeRepository.layer, OwnershipQuota.layer])
  )
}
