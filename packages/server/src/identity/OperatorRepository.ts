/**
 * Storage of which organization operates the instance (`instance_settings`, once claimed) and of the one-time setup
 * tokens the server logs at start while none does (`instance_setup_tokens`, hashes only). Instance-wide by nature:
 * neither table belongs to an organization. And the roles people hold in the operator organization, which decide
 * what its members may do to their accounts (`Operator.requireReach`).
 */
import { OrganizationId, type Role, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The organization whose owner redeemed a setup token, if one did. */
  const claimed = sql<{ value: OrganizationId }>`
      SELECT value FROM instance_settings WHERE key = 'operator_organization_id'`.pipe(
    Effect.map((rows) => Option.fromNullishOr(rows[0]?.value))
  )

  /** Records the operator organization; false when one was recorded first (two claims at once: one wins). */
  const claim = (organizationId: OrganizationId) =>
    sql`INSERT INTO instance_settings (key, value) VALUES ('operator_organization_id', ${organizationId})
          ON CONFLICT (key) DO NOTHING RETURNING key`.pipe(Effect.map((rows) => rows.length > 0))

  /** Keeps a new setup token's hash, and forgets the expired ones. */
  const insertSetupToken = (input: { readonly tokenHash: string; readonly createdAt: Date; readonly expiresAt: Date }) =>
    Effect.andThen(
      sql`DELETE FROM instance_setup_tokens WHERE expires_at <= ${input.createdAt}`,
      sql`INSERT INTO instance_setup_tokens (token_hash, created_at, expires_at)
            VALUES (${input.tokenHash}, ${input.createdAt}, ${input.expiresAt})`
    )

  /** Whether a setup token with this hash is unexpired. */
  const isSetupToken = (tokenHash: string, at: Date) =>
    sql`SELECT 1 FROM instance_setup_tokens WHERE token_hash = ${tokenHash} AND expires_at > ${at}`.pipe(
      Effect.map((rows) => rows.length > 0)
    )

  /** Spends every setup token: one was redeemed. */
  const spendSetupTokens = sql`DELETE FROM instance_setup_tokens`

  /**
   * The roles the people have in the organization (the operator's), their memberships not removed (a suspended one
   * too), share-locked until the transaction ends: a role change of theirs there waits for it, or committed first.
   */
  const rolesIn = (organizationId: OrganizationId, userIds: ReadonlyArray<UserId>) =>
    sql<{ userId: UserId; role: Role }>`SELECT user_id, role FROM memberships
          WHERE organization_id = ${organizationId} AND user_id = ANY(${[...userIds]}::text[]) AND removed_at IS NULL
          FOR SHARE`

  return { claimed, claim, insertSetupToken, isSetupToken, spendSetupTokens, rolesIn } as const
})

export class OperatorRepository extends Context.Service<OperatorRepository>()("@orgplane/server/identity/OperatorRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
