/**
 * Organizations: creation (the creator becomes owner), the active organization's profile (read by its members,
 * changed by owners and admins), and, for the instance's operator (identity/Operator.ts), plan changes and the list of
 * every organization. Deletion and restoration are OrganizationDeletion's.
 */
import {
  type AdminOrganizationListQuery,
  type MemberContext,
  NotFound,
  Organization,
  OrganizationDetails,
  type OrganizationId,
  OrganizationNotFound,
  type Plan,
  type Role,
  type SessionId,
  type UpdateOrganizationRequest,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerConfig } from "../platform/Config.js"
import { makeId } from "../platform/Ids.js"
import { authorize, requireRecentAuthentication } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { Memberships } from "./Memberships.js"
import { Operator } from "./Operator.js"
import { OwnershipQuota } from "./OwnershipQuota.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const organizations = yield* OrganizationsRepository
  const memberships = yield* Memberships
  const operator = yield* Operator
  const quota = yield* OwnershipQuota

  /** A new organization and its first member, in the caller's transaction. */
  const insertWithMember = Effect.fn("Organizations.insertWithMember")(function*(input: {
    readonly name: string
    readonly userId: UserId | null
    readonly role: Role
    readonly provisional: boolean
  }) {
    const createdAt = yield* now
    const organization = yield* organizations.insert({
      id: yield* makeId("org"),
      name: input.name,
      plan: settings.defaultPlan,
      provisional: input.provisional,
      createdAt,
      updatedAt: createdAt
    })
    const membership = yield* memberships.join({ organizationId: organization.id, userId: input.userId, role: input.role })
    return { organization, membership }
  })

  /** A new organization, its creator its owner, within the organizations they may own (OwnershipQuota). */
  const create = Effect.fn("Organizations.create")(function*(input: { readonly name: string; readonly userId: UserId; readonly sessionId: SessionId }) {
    return yield* transaction(
      Effect.gen(function*() {
        yield* quota.requireRoom(input.userId, "you")
        const created = yield* insertWithMember({ name: input.name, userId: input.userId, role: "owner", provisional: false })
        // Its creator's email is the one the organization knows them by (docs/security.md, "Account takeover").
        yield* memberships.markEmailVerified({ organizationId: created.organization.id, id: created.membership.id, at: created.organization.createdAt })
        yield* memberships.activate(input.sessionId, created.organization.id)
        // Recorded in the new organization's log, by its owner.
        yield* AuditRecorder.describe({ organizationId: created.organization.id, membershipId: created.membership.id })
        return created
      })
    )
  })

  /**
   * The operator's plan change, after a recent sign-in as the operator's other writes (a plan takes SSO, SCIM and
   * policies away). An organization that does not exist or is deleted is a 404 inside the transaction, so that
   * nothing (not its audit event) commits for it.
   */
  const setPlan = Effect.fn("Organizations.setPlan")(function*(caller: MemberContext, organizationId: OrganizationId, plan: Plan) {
    yield* operator.require(caller, "organizations.setPlan")
    yield* requireRecentAuthentication(caller, settings.recentAuthentication)
    return yield* transaction(Effect.gen(function*() {
      yield* organizations.lock(organizationId)
      const before = yield* organizations.find(organizationId)
      const after = yield* organizations.update(organizationId, { plan }, yield* now)
      if (Option.isNone(before) || Option.isNone(after)) {
        return yield* new NotFound({ error: "organization_not_found", message: "Organization not found." })
      }
      yield* AuditRecorder.describeChange(Organization, before.value, after.value)
      return after.value
    }))
  })

  /** `GET /v1/organization`: the organization the caller acts in, with its profile and member count. */
  const details = Effect.fn("Organizations.details")(function*(caller: MemberContext) {
    yield* authorize(caller, "organizations.read")
    const found = yield* orUnavailable(organizations.details(caller.organization.id))
    if (Option.isNone(found)) return yield* new OrganizationNotFound()
    return { organization: found.value }
  })

  /** `PATCH /v1/organization`: its name, logo or metadata (replaced whole), the change recorded with before and after. */
  const update = Effect.fn("Organizations.update")(function*(caller: MemberContext, changes: UpdateOrganizationRequest) {
    yield* authorize(caller, "organizations.update")
    const organizationId = caller.organization.id
    return yield* transaction(Effect.gen(function*() {
      yield* organizations.lock(organizationId)
      const before = yield* organizations.details(organizationId)
      if (Option.isNone(before)) return yield* new OrganizationNotFound()
      yield* organizations.update(organizationId, changes, yield* now)
      const after = Option.getOrThrow(yield* organizations.details(organizationId))
      yield* AuditRecorder.describeChange(OrganizationDetails, before.value, after)
      return { organization: after }
    }))
  })

  /** `GET /v1/admin/organizations`: every organization of the instance, for its operator. */
  const listForAdmin = Effect.fn("Organizations.listForAdmin")(function*(caller: MemberContext, query: AdminOrganizationListQuery) {
    yield* operator.require(caller, "admin.readOrganizations")
    return yield* orUnavailable(organizations.listForAdmin(query, Duration.toMillis(settings.provisionalWorkspaceLifetime)))
  })

  return { insertWithMember, create, find: organizations.find, setPlan, details, update, listForAdmin } as const
})

export class Organizations extends Context.Service<Organizations>()("@orgplane/server/identity/Organizations", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      OrganizationsRepository.layer,
      Memberships.layer,
      Operator.layer,
      OwnershipQuota.layer
    ])
  )
}
