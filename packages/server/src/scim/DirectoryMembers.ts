/**
 * What the directory does to a SCIM User's membership, in one place for the Users operations and reconcile:
 * suspend (identity's `Memberships.suspend`: not admitted, sessions of the organization and API keys revoked; and the
 * member's delegated MCP and mail/calendar credentials in the organization forgotten), restore, and remove (the
 * membership removed and kept suspended, so neither SSO JIT nor an invitation brings the person back). Each runs in
 * the caller's transaction and takes the membership lock first (taking it again in one transaction is free).
 */
import type { MembershipId, OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SuiteRepository } from "../capabilities/SuiteRepository.js"
import { Memberships } from "../identity/Memberships.js"
import { CredentialsRepository } from "../mcp/CredentialsRepository.js"

const make = Effect.gen(function*() {
  const memberships = yield* Memberships
  const mcpCredentials = yield* CredentialsRepository
  const suiteCredentials = yield* SuiteRepository
  const forget = (organizationId: OrganizationId, id: MembershipId) =>
    Effect.andThen(mcpCredentials.forgetMember(organizationId, id), suiteCredentials.forgetMember(organizationId, id))
  return {
    suspend: Effect.fn("DirectoryMembers.suspend")(function*(organizationId: OrganizationId, id: MembershipId) {
      yield* memberships.lock(organizationId)
      yield* memberships.suspend(organizationId, id)
      yield* forget(organizationId, id)
    }),
    restore: Effect.fn("DirectoryMembers.restore")(function*(organizationId: OrganizationId, id: MembershipId) {
      yield* memberships.lock(organizationId)
      return yield* Effect.asVoid(memberships.restore(organizationId, id))
    }),
    remove: Effect.fn("DirectoryMembers.remove")(function*(organizationId: OrganizationId, id: MembershipId) {
      yield* memberships.lock(organizationId)
      yield* memberships.removeByDirectory(organizationId, id)
      yield* forget(organizationId, id)
    })
  } as const
})

export class DirectoryMembers extends Context.Service<DirectoryMembers>()("@orgplane/server/scim/DirectoryMembers", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      Memberships.layer,
      CredentialsRepository.layer,
      SuiteRepository.layer
    ])
  )
}
