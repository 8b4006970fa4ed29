/**
 * The provisioning event log of a connection (`scim_events`): one row per SCIM write, written in the write's own
 * transaction with the connection's health (`last_success_at` and the failure count reset); a refused or failed write
 * is recorded after its rollback, counting one more failure since the last success. Health is the directory's: a
 * reconcile an admin ran (no token) is logged without touching it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { makeId } from "../platform/Ids.js"
import { now } from "../platform/Time.js"
import type { ScimScope } from "./UsersRepository.js"

/** The request an event is about (no resource type: a reconcile). */
export interface ScimRequest {
  readonly method: string
  readonly path: string
  readonly resourceType: "User" | "Group" | null
}

const statusOf = (error: unknown): { status: number; scimType: string | null; detail: string | null } => {
  const body = error as { status?: unknown; scimType?: unknown; detail?: unknown }
  const status = typeof body.status === "string" ? Number(body.status) : 500
  return {
    status: Number.isInteger(status) ? status : 500,
    scimType: typeof body.scimType === "string" ? body.scimType : null,
    detail: typeof body.detail === "string" ? body.detail.slice(0, 1000) : null
  }
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insert = (
    caller: ScimScope & { readonly tokenId: string | null },
    request: ScimRequest,
    outcome: { readonly status: number; readonly resourceId: string | null; readonly scimType: string | null; readonly detail: string | null }
  ) =>
    Effect.gen(function*() {
      const id = yield* makeId("sce")
      const at = yield* now
      yield* sql`INSERT INTO scim_events (id, organization_id, connection_id, token_id, method, path, resource_type,
                     resource_id, status, scim_type, detail, created_at)
                   VALUES (${id}, ${caller.organizationId}, ${caller.connectionId}, ${caller.tokenId}, ${request.method},
                     ${request.path.slice(0, 2000)}, ${request.resourceType}, ${outcome.resourceId}, ${outcome.status},
                     ${outcome.scimType}, ${outcome.detail}, ${at})`
      if (caller.tokenId === null) return
      yield* outcome.status < 400
        ? sql`UPDATE scim_connections SET last_success_at = ${at}, failures_since_success = 0
                WHERE organization_id = ${caller.organizationId} AND id = ${caller.connectionId}`
        : sql`UPDATE scim_connections SET last_failure_at = ${at}, failures_since_success = failures_since_success + 1
                WHERE organization_id = ${caller.organizationId} AND id = ${caller.connectionId}`
    })

  /** A successful write's event, in its transaction. */
  const record = Effect.fn("DirectoryEvents.record")((
    caller: ScimScope & { readonly tokenId: string | null },
    request: ScimRequest,
    outcome: { readonly status: number; readonly resourceId: string | null }
  ) => insert(caller, request, { ...outcome, scimType: null, detail: null }))

  /** A refused or failed write's event, on its own after the rollback; a failure to record it is not the client's. */
  const recordFailure = Effect.fn("DirectoryEvents.recordFailure")((caller: ScimScope & { readonly tokenId: string | null }, request: ScimRequest, error: unknown) =>
    insert(caller, request, { ...statusOf(error), resourceId: null }).pipe(Effect.ignore))

  return { record, recordFailure } as const
})

export class DirectoryEvents extends Context.Service<DirectoryEvents>()("@orgplane/server/scim/DirectoryEvents", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
