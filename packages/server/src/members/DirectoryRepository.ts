/**
 * Storage of what plain members see of each other: a column of the organization's row (migration 0035).
 */
import type { OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Whether the organization's plain members see each other's emails (false for an organization not found). */
  const emailsVisible = Effect.fn("DirectoryRepository.emailsVisible")(function*(organizationId: OrganizationId) {
    const rows = yield* sql<{ memberEmailsVisible: boolean }>`
        SELECT member_emails_visible FROM organizations WHERE id = ${organizationId}`
    return rows[0]?.memberEmailsVisible ?? false
  })

  /** Sets it, answering what it was. */
  const setEmailsVisible = Effect.fn("DirectoryRepository.setEmailsVisible")(function*(organizationId: OrganizationId, visible: boolean) {
    const rows = yield* sql<{ before: boolean }>`
        UPDATE organizations o SET member_emails_visible = ${visible}
        FROM (SELECT member_emails_visible FROM organizations WHERE id = ${organizationId} FOR UPDATE) AS previous
        WHERE o.id = ${organizationId}
        RETURNING previous.member_emails_visible AS before`
    return rows[0]?.before ?? false
  })

  return { emailsVisible, setEmailsVisible } as const
})

export class DirectoryRepository extends Context.Service<DirectoryRepository>()("@orgplane/server/members/DirectoryRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
