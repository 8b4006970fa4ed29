/**
 * The API's dry authorization: a request asked only whether it would be authorized, answered without running it. Its
 * operation's handler stands aside (HttpErrors.group wraps every handler with `standIn`) for the check the operation
 * declares: after the request's own authentication (its credential, the member's suspension, SSO, the read-only
 * narrowing) and decoding (400 for an id the schema refuses), the caller's role and an API key's scopes against the
 * policy actions the operation checks (`requires(...)`), with the server's own `can` and `authorize`. An action the
 * policy table takes on the caller's own membership only (`members.leave`) counts when the path names it. A refusal is
 * the operation's own (403 `insufficient_role` or `insufficient_scope`), recorded in the audit log as its denial; a
 * pass answers 204 with `Orgplane-Authorization-Check: authorized`, and nothing else happens. What only the handler
 * knows (a resource's grants, an owner as the target, the operator's organization) is decided when the request is
 * sent. A request is checked only where the server says so (`Checking`, provided in process by the agents area's
 * `POST /v1/authorization-checks`): no header or value of a client's turns it on.
 */
import { type Action, type AuditAction, authorizationCheckHeader, CurrentMember, takenOnOneself } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Recorder from "./AuditRecorder.js"
import { authorize, can } from "./Principal.js"

/** Whether the request being answered is only checked: its handler runs nothing. */
export const Checking = Context.Reference<boolean>("@orgplane/server/platform/AuthorizationCheck", {
  defaultValue: () => false
})

/** What a checked request is answered when the operation's check passes. */
const authorized = () => HttpServerResponse.empty({ status: 204, headers: { [authorizationCheckHeader]: "authorized" } })

/** The check passed: a failure of its own, so the audit recorder (a success or a denial) records nothing for it. */
class Authorized extends Data.TaggedError("Authorized")<{}> {}

/** The path's decoded parameters, as HttpApi hands them to a handler. */
const paramsOf = (request: object): ReadonlyArray<unknown> =>
  "params" in request && typeof request.params === "object" && request.params !== null ? Object.values(request.params) : []

/**
 * The operation's declared check for the request's caller: passes (`Authorized`), or fails as `authorize` does with
 * the first action that applies. An operation without a member behind it (a person's own account) checks no action.
 */
const check = Effect.fn("AuthorizationCheck.check")(function*(requires: ReadonlyArray<Action>, request: object) {
  const member = yield* Effect.serviceOption(CurrentMember)
  if (Option.isSome(member) && requires.length > 0) {
    const own = paramsOf(request).includes(member.value.membership.id)
    const applying = requires.filter((action) => own || !takenOnOneself(action))
    const [first] = applying
    if (first !== undefined && !applying.some((action) => can(member.value, action))) yield* authorize(member.value, first)
  }
  return yield* new Authorized()
})

/** A handler as HttpApiBuilder registers it (HttpErrors.ts). */
type Handler = (request: object) => Effect.Effect<unknown, unknown, unknown>

/** `handler`, standing aside for the operation's check when the request is only checked. */
export const standIn = (
  handler: Handler,
  operation: { readonly requires: ReadonlyArray<Action>; readonly audit: AuditAction | undefined }
): Handler => {
  const declared = (request: object) => check(operation.requires, request)
  const checked = operation.audit === undefined ? declared : Recorder.around(operation.audit, declared)
  return (request) =>
    Effect.flatMap(Checking, (checking) =>
      checking ? checked(request).pipe(Effect.catchTag("Authorized", () => Effect.succeed(authorized()))) : handler(request))
}
