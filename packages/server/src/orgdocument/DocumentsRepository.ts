/**
 * Storage of each organization's last applied document (migration 0050), what drift is measured against, the
 * references its secrets were written from (migration 0051), and the audit log's last change of each resource a drift
 * names (its attribution).
 */
import type { OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

/** An organization's applied document as stored: the document's JSON text as the apply was given it. */
export interface AppliedRow {
  readonly organizationId: OrganizationId
  readonly document: string
  readonly planHash: string
  readonly appliedAt: Date
  readonly appliedByMembershipId: string | null
  readonly driftHash: string | null
}

/** The last change the audit log records of one resource, by one action. */
export interface ChangeRow {
  readonly targetId: string
  readonly id: string
  readonly action: string
  readonly occurredAt: Date
  readonly actorType: string
  readonly actorId: string
  readonly actorLabel: string | null
  readonly credentialId: string | null
}

/** The references an apply wrote a resource's secret field from, and the fingerprint of its ciphertext then. */
export interface SecretRow {
  readonly resourceId: string
  readonly field: string
  readonly refs: string
  readonly fingerprint: string
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Keeps `document` as the organization's applied one, in the apply's transaction. */
  const save = Effect.fn("DocumentsRepository.save")(function*(input: {
    readonly organizationId: OrganizationId
    readonly document: string
    readonly planHash: string
    readonly appliedAt: Date
    readonly appliedByMembershipId: string
  }) {
    yield* sql`INSERT INTO organization_documents (organization_id, document, plan_hash, applied_at, applied_by_membership_id)
        VALUES (${input.organizationId}, ${input.document}::jsonb, ${input.planHash}, ${input.appliedAt}, ${input.appliedByMembershipId})
        ON CONFLICT (organization_id) DO UPDATE SET document = EXCLUDED.document, plan_hash = EXCLUDED.plan_hash,
          applied_at = EXCLUDED.applied_at, applied_by_membership_id = EXCLUDED.applied_by_membership_id,
          drift = NULL, drift_hash = NULL, drift_checked_at = NULL`
  })

  const find = Effect.fn("DocumentsRepository.find")(function*(organizationId: OrganizationId) {
    const rows = yield* sql<AppliedRow>`
        SELECT organization_id, document::text AS document, plan_hash, applied_at, applied_by_membership_id, drift_hash
        FROM organization_documents WHERE organization_id = ${organizationId}`
    return rows[0]
  })

  /** Instance-wide, for the drift job: every organization with an applied document (deleted ones aside). */
  const applied = Effect.fn("DocumentsRepository.applied")(function*() {
    return yield* sql<{ readonly organizationId: OrganizationId }>`
        /* instance-wide: organizations whose drift the job checks (orgdocument/Drift.ts) */
        SELECT d.organization_id FROM organization_documents d JOIN organizations o ON o.id = d.organization_id
        WHERE o.deleted_at IS NULL ORDER BY d.organization_id`
  })

  /** Records the drift the job found (its changes as JSON and their hash; null for none) at `at`. */
  const setDrift = Effect.fn("DocumentsRepository.setDrift")(function*(
    organizationId: OrganizationId,
    drift: { readonly changes: string; readonly hash: string } | null,
    at: Date
  ) {
    yield* sql`UPDATE organization_documents SET drift = ${drift?.changes ?? null}::jsonb, drift_hash = ${drift?.hash ?? null}, drift_checked_at = ${at}
        WHERE organization_id = ${organizationId}`
  })

  /**
   * The last succeeded event of each (target, action) among `targetIds` since `since`, made outside any plan (an
   * apply's own changes name theirs): who changed what a drift names.
   */
  const lastChanges = Effect.fn("DocumentsRepository.lastChanges")(function*(
    organizationId: OrganizationId,
    since: Date,
    targetIds: ReadonlyArray<string>
  ) {
    if (targetIds.length === 0) return []
    return yield* sql<ChangeRow>`
        SELECT DISTINCT ON (t.target_id, e.action) t.target_id, e.id, e.action, e.occurred_at, e.actor_type, e.actor_id, e.actor_label, e.credential_id
        FROM audit_events e CROSS JOIN LATERAL unnest(e.target_ids) AS t(target_id)
        WHERE e.organization_id = ${organizationId} AND e.occurred_at >= ${since} AND e.outcome = 'succeeded'
          AND e.plan_hash IS NULL AND t.target_id IN ${sql.in(targetIds)}
        ORDER BY t.target_id, e.action, e.occurred_at DESC, e.id DESC`
  })

  /** The organization's document secrets (`refs` as JSON text). */
  const secrets = Effect.fn("DocumentsRepository.secrets")(function*(organizationId: OrganizationId) {
    return yield* sql<SecretRow>`
        SELECT resource_id, field, refs::text AS refs, fingerprint FROM organization_document_secrets
        WHERE organization_id = ${organizationId}`
  })

  /** Keeps what an apply wrote a secret field from (`refs`, JSON), beside its ciphertext's fingerprint. */
  const saveSecret = Effect.fn("DocumentsRepository.saveSecret")(function*(input: SecretRow & { readonly organizationId: OrganizationId }) {
    yield* sql`INSERT INTO organization_document_secrets (organization_id, resource_id, field, refs, fingerprint)
        VALUES (${input.organizationId}, ${input.resourceId}, ${input.field}, ${input.refs}::jsonb, ${input.fingerprint})
        ON CONFLICT (organization_id, resource_id, field) DO UPDATE SET refs = EXCLUDED.refs, fingerprint = EXCLUDED.fingerprint`
  })

  /** Forgets the secrets of resources that are gone (deleted by an apply or outside it). */
  const forgetSecrets = Effect.fn("DocumentsRepository.forgetSecrets")(function*(organizationId: OrganizationId, keep: ReadonlyArray<string>) {
    yield* keep.length === 0
      ? sql`DELETE FROM organization_document_secrets WHERE organization_id = ${organizationId}`
      : sql`DELETE FROM organization_document_secrets WHERE organization_id = ${organizationId} AND resource_id NOT IN ${sql.in(keep)}`
  })

  return { save, find, applied, setDrift, lastChanges, secrets, saveSecret, forgetSecrets } as const
})

export class DocumentsRepository extends Context.Service<DocumentsRepository>()("@orgplane/server/orgdocument/DocumentsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
