/**
 * A write's authority, checked where it commits. A request is authorized as it starts (the middleware resolves its
 * credential, the service checks the role with `authorize`), and its caller may lose that authority before the write
 * commits: removed, suspended or demoted, its session or API key revoked, its account disabled by the instance's
 * operator, its SCIM or worker token revoked. At READ COMMITTED nothing stops such a write from committing after the
 * change that took the authority away. So each operation that is not a read (HttpErrors.group) takes part in its
 * outermost transactions (Sql.ts `TransactionParty`): last before COMMIT, the caller's credential and membership are
 * read again, taking the row locks that revoking, removing, suspending or demoting them takes too (FOR SHARE, FOR KEY
 * SHARE for a key, whose revocation deletes it), and every action the member was allowed during the request
 * (Principal.ts `recordGrants`) is checked against the role as it is now. Either the write commits first and that
 * change waits for it, or the change committed first and the write is refused, with the answer a new request would get:
 * 401 `unauthorized` (a credential that no longer works), 403 `membership_removed` (removed or suspended), 403
 * `insufficient_role`.
 *
 * A write that changed its caller's own authority (leaving, demoting oneself, handing over ownership, revoking the
 * key it is made with) decided that under the lock its change took; it says so with `changedHere`, and the check
 * leaves that part alone. Reads take no part: a GET costs nothing more.
 *
 * The statements belong to the areas whose tables they read, each provided beside the middleware that resolved the
 * credential: `MemberStanding` (identity), `ScimTokenStanding` (scim), `WorkerTokenStanding` (workers).
 *
 * HttpErrors.group passes every handler of an endpoint whose method is not GET through `around`, inside the audit
 * recorder's `around` (so a refusal at commit is recorded as a denied event) and inside idempotency's. The attempt's
 * own changes are a `Context.Reference` provided by the party's `around` (Sql.ts); a missing `*Standing` beside a
 * caller is a defect that says so; a refusal's errors are typed (`Refusal`); a SCIM refusal's `WWW-Authenticate` is
 * set through `HttpEffect.appendPreResponseHandlerUnsafe` (nothing outside a request).
 */
import {
  type Action,
  allows,
  type ApiKeyId,
  CurrentMember,
  CurrentScimClient,
  CurrentWorker,
  Forbidden,
  type MemberContext,
  type MembershipId,
  type Role,
  scimChallenge,
  type ScimClient,
  ScimUnauthorized,
  Unauthorized,
  type WorkerCaller
} from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { SqlError } from "effect/sql/SqlError"
import { insufficientRole, recordGrants } from "./Principal.js"
import { type TransactionParty, withTransactionParty } from "./Sql.js"
import { now } from "./Time.js"

/** A member's standing as it is now, read under the locks that change it. */
export interface Standing {
  /** The membership's role; null when it was removed or suspended. */
  readonly role: Role | null
  /** Whether the request's credential (its session or API key) still works: not revoked, not expired, its person's account neither disabled nor deleted. */
  readonly credential: boolean
}

/** Reads a member's standing again, inside the committing transaction, with the locks its changes take. */
export class MemberStanding extends Context.Service<
  MemberStanding,
  (caller: MemberContext, at: Date) => Effect.Effect<Standing, SqlError>
>()("@orgplane/server/platform/Authority/MemberStanding") {}

/** Whether a directory's SCIM token still works (not revoked, not expired), read with the lock its revocation takes. */
export class ScimTokenStanding extends Context.Service<
  ScimTokenStanding,
  (client: ScimClient, at: Date) => Effect.Effect<boolean, SqlError>
>()("@orgplane/server/platform/Authority/ScimTokenStanding") {}

/** Whether a worker token still works (not revoked, its worker not deleted), read with the locks those changes take. */
export class WorkerTokenStanding extends Context.Service<
  WorkerTokenStanding,
  (worker: WorkerCaller, at: Date) => Effect.Effect<boolean, SqlError>
>()("@orgplane/server/platform/Authority/WorkerTokenStanding") {}

/** What the committing transaction itself changed of memberships and API keys (see the module comment). */
interface OwnChanges {
  /** `ended`: removed or suspended (its API keys deleted with it); `changed`: its role. */
  readonly memberships: Map<MembershipId, "changed" | "ended">
  readonly apiKeys: Set<ApiKeyId>
}

/**
 * What the attempt of a checked transaction changed so far; undefined outside one. The party provides a fresh one
 * around each attempt (`TransactionParty.around`), which `changedHere` fills in the body and `beforeCommit` reads in
 * the same attempt: an attempt run again after a serialization failure starts from nothing, and the request's other
 * outermost transactions (which share its party) each have their own.
 */
const CurrentOwnChanges = Context.Reference<OwnChanges | undefined>("@orgplane/server/platform/Authority/CurrentOwnChanges", {
  defaultValue: () => undefined
})
const noOwnChanges = (): OwnChanges => ({ memberships: new Map(), apiKeys: new Set() })

/**
 * Says that the current transaction changed a membership (`ended`: removed or suspended) or revoked an API key: when
 * that is the caller's own, its check at commit leaves it alone (the change decided it under its own lock).
 */
export const changedHere = (
  change: { readonly membershipId: MembershipId; readonly ended: boolean } | { readonly apiKeyId: ApiKeyId }
): Effect.Effect<void> =>
  CurrentOwnChanges.useSync((own) => {
    if (own === undefined) return
    if ("apiKeyId" in change) own.apiKeys.add(change.apiKeyId)
    else if (change.ended || !own.memberships.has(change.membershipId)) own.memberships.set(change.membershipId, change.ended ? "ended" : "changed")
  })

/** What a write refused at commit answers: what a new request with the same credential would get. */
export type Refusal = Unauthorized | Forbidden | ScimUnauthorized

/** A refusal decided at commit: a defect inside the transaction (which rolls it back), the request's failure outside. */
class Refused {
  constructor(readonly answer: Effect.Effect<never, Refusal>) {}
}

const unauthorized = Effect.fail(Unauthorized.because("credential_revoked"))
const membershipRemoved = Effect.fail(
  new Forbidden({
    reason: "membership_removed",
    message: "You are no longer a member of this organization (removed or suspended while this request ran): nothing was changed."
  })
)
const scimUnauthorized = Effect.andThen(
  Effect.contextWith((context: Context.Context<never>) =>
    Effect.sync(() =>
      HttpEffect.appendPreResponseHandlerUnsafe(context, (_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", scimChallenge(true))))
    )
  ),
  Effect.fail(new ScimUnauthorized({ detail: "This SCIM token was revoked while the request ran: nothing was changed." }))
)

/** The member's refusal, if any: the credential first, then the membership, then each action allowed before. */
const judgeMember = (
  caller: MemberContext,
  granted: ReadonlySet<Action>,
  standing: Standing,
  own: OwnChanges
): Effect.Effect<never, Refusal> | undefined => {
  const mine = own.memberships.get(caller.membership.id)
  const key = caller.credential._tag === "ApiKey" ? caller.credential.apiKeyId : undefined
  const revokedHere = mine === "ended" || (key !== undefined && own.apiKeys.has(key))
  if (!standing.credential && !revokedHere) return unauthorized
  if (mine !== undefined) return undefined
  if (standing.role === null) return membershipRemoved
  for (const action of granted) if (!allows(standing.role, action)) return Effect.fail(insufficientRole(action))
  return undefined
}

const party = (
  judge: (own: OwnChanges, at: Date) => Effect.Effect<Effect.Effect<never, Refusal> | undefined, SqlError>
): TransactionParty => ({
  committedBefore: Option.none(),
  around: (attempt) => Effect.provideService(attempt, CurrentOwnChanges, noOwnChanges()),
  // Run by every write: plain steps rather than a generator, which costs the request path a few more.
  beforeCommit: () =>
    Effect.flatMap(Effect.service(CurrentOwnChanges), (own) =>
      Effect.flatMap(now, (at) =>
        Effect.flatMap(judge(own ?? noOwnChanges(), at), (refusal) => (refusal === undefined ? Effect.void : Effect.die(new Refused(refusal)))))),
  committed: Effect.succeed(Option.none()),
  settled: () => Effect.void
})

/** The statement provided beside a caller's middleware; a caller without it is the server's wiring bug. */
const standingOf = <I, S>(context: Context.Context<never>, key: Context.Key<I, S>): S => {
  const found = Context.getOption(context, key)
  if (Option.isNone(found)) throw new Error(`${key.key} is not provided beside the middleware that resolved the caller (Authority.ts)`)
  return found.value
}

/** The request's party, from the caller its middleware provided; none for a caller without organization authority. */
const enlist: Effect.Effect<TransactionParty | undefined> = Effect.contextWith((context: Context.Context<never>) =>
  Effect.sync(() => {
    const member = Context.getOption(context, CurrentMember)
    if (Option.isSome(member)) {
      const read = standingOf(context, MemberStanding)
      const caller = member.value
      const granted = recordGrants(caller)
      return party((own, at) => Effect.map(read(caller, at), (standing) => judgeMember(caller, granted, standing, own)))
    }
    const scim = Context.getOption(context, CurrentScimClient)
    if (Option.isSome(scim)) {
      const read = standingOf(context, ScimTokenStanding)
      return party((_, at) => Effect.map(read(scim.value, at), (live) => (live ? undefined : scimUnauthorized)))
    }
    const worker = Context.getOption(context, CurrentWorker)
    if (Option.isSome(worker)) {
      const read = standingOf(context, WorkerTokenStanding)
      return party((_, at) => Effect.map(read(worker.value, at), (live) => (live ? undefined : unauthorized)))
    }
    return undefined
  })
)

/** The refusal a cause carries as a defect, if any. */
const refusalOf = (cause: Cause.Cause<unknown>): Refused | undefined => {
  for (const reason of cause.reasons) if (reason._tag === "Die" && reason.defect instanceof Refused) return reason.defect
  return undefined
}

/** The handler of an operation that writes (HttpErrors.group): its outermost transactions check the caller's authority. */
export const around = <Request, A, E, R>(handler: (request: Request) => Effect.Effect<A, E, R>) =>
(request: Request): Effect.Effect<A, E | Refusal, R> =>
  Effect.flatMap(enlist, (checked) =>
    checked === undefined ? handler(request) : handler(request).pipe(
      withTransactionParty(Effect.succeed(checked)),
      Effect.catchCause((cause): Effect.Effect<never, E | Refusal> => {
        const refused = refusalOf(cause)
        return refused === undefined ? Effect.failCause(cause) : refused.answer
      })
    ))
