/**
 * The audit event's INSERT as the baseline runs it (baseline.ts's `PATCH /v1/teams/{id}`, scim-baseline.ts's writes):
 * orgplane's own statement, copied from packages/server/src/platform/AuditRecorder.ts, with the values orgplane
 * writes for the request (a time-ordered `aev_` id, the action's category, the actor, how it came in, the targets,
 * the request id), run last in the write's transaction, before COMMIT, as orgplane runs it. Imports no orgplane code.
 */
import { randomBytes, randomUUID } from "node:crypto"

/**
 * AuditRecorder's INSERT as it reaches the database, parameters in its order ($16 the plan's hash, null outside an
 * organization document's apply; $17 and $18 the targets' JSON, sent twice as orgplane sends it; $19 an update's
 * changes).
 */
export const insertAuditEvent = `INSERT INTO audit_events (organization_id, id, occurred_at, action, category, outcome, actor_type, actor_id,
              actor_membership_id, actor_label, credential_id, sso_connection_id, ip, user_agent, channel, plan_hash, targets, target_ids, changes, reason, request_id)
            VALUES ($1, $2, $3, $4, $5, $6,
              $7, $8, $9, $10, $11,
              $12, $13, $14, $15, $16, $17::jsonb,
              ARRAY(SELECT t ->> 'id' FROM jsonb_array_elements($18::jsonb) t),
              $19::jsonb, $20, $21)`

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

/** A time-ordered id as orgplane's `makeId("aev")`: 10 characters of milliseconds, 16 random. */
const eventId = () => {
  let time = Date.now()
  let head = ""
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head
    time = Math.floor(time / 32)
  }
  return `aev_${head}${Array.from(randomBytes(16), (byte) => ALPHABET[byte & 31]).join("")}`
}

export interface AuditFacts {
  readonly organizationId: string
  readonly action: string
  readonly category: "change" | "security" | "execution" | "access"
  readonly actor: {
    readonly type: "user" | "api_key" | "scim" | "worker" | "system"
    readonly id: string
    readonly membershipId: string | null
    readonly label: string | null
    readonly credentialId: string | null
  }
  readonly ip: string | null
  readonly userAgent: string | null
  readonly targets: ReadonlyArray<{ readonly type: string; readonly id: string }>
  /** An update's changed fields before and after, as orgplane records them. */
  readonly changes?: {
    readonly before: Record<string, unknown>
    readonly after: Record<string, unknown>
    readonly changedFields: ReadonlyArray<string>
  }
}

/** The INSERT's parameters for one event that succeeded now. */
export const auditParameters = (facts: AuditFacts): Array<unknown> => [
  facts.organizationId,
  eventId(),
  new Date(),
  facts.action,
  facts.category,
  "succeeded",
  facts.actor.type,
  facts.actor.id,
  facts.actor.membershipId,
  facts.actor.label,
  facts.actor.credentialId,
  null,
  facts.ip,
  facts.userAgent === null ? null : facts.userAgent.slice(0, 512),
  // The channel the request came through (Orgplane-Channel): the API's.
  "api",
  // No plan: the request is not an organization document's apply.
  null,
  JSON.stringify(facts.targets),
  JSON.stringify(facts.targets),
  facts.changes === undefined ? null : JSON.stringify(facts.changes),
  null,
  randomUUID()
]
