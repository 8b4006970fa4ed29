/**
 * The steps of the request path that `pnpm bench --layers` leaves out, one server at a time, to measure what each
 * costs (bench/layers.ts, the per-layer bill of bench/README.md). A server leaves out nothing: `LeftOut` is empty
 * unless a benchmark provides it around `ApiLayer`, and no setting, option or variable of the server's sets it.
 *
 * The request edge (HttpErrors.edge), outermost first:
 * - `trace`: the request's span (Tracing.requestSpan);
 * - `log`: the request id and the per-request log line (RequestLog.make);
 * - `databaseWait`: the bound on the request's waits for its database (DatabaseWait.watched);
 * - `headers`: the security headers and compression, a pre-response handler (HttpErrors.finished);
 * - `errors`: the answers to what fails, at the edge and in every endpoint's `ApiErrors` middleware;
 * - `guard`: the request guard (RequestGuard.make);
 * - `idempotencyEdge`: the idempotency keys' middleware around routing (Idempotency.middleware).
 * Each handler (HttpErrors.group), outermost first:
 * - `checkStandIn`: standing aside when a request is only checked (AuthorizationCheck.standIn);
 * - `idempotency`: the key's claim and kept answer (Idempotency.around);
 * - `audit`: the audit recorder (AuditRecorder.around);
 * - `authority`: the caller's authority checked at commit (Authority.around);
 * - `encoding`: the success encoded by its compiled encoder, without the schema's checks (ResponseEncoding.answering
 *   and encodingSuccess); left out, the builder's own encoding with them.
 */
import * as Context from "effect/Context"

export const steps = [
  "trace",
  "log",
  "databaseWait",
  "headers",
  "errors",
  "guard",
  "idempotencyEdge",
  "checkStandIn",
  "idempotency",
  "audit",
  "authority",
  "encoding"
] as const

export type Step = typeof steps[number]

/** The steps left out: none, unless a benchmark provides them. */
export const LeftOut = Context.Reference<ReadonlySet<Step>>("@orgplane/server/platform/Ablation", {
  defaultValue: () => new Set()
})
