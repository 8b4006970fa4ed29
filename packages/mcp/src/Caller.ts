/**
 * Who the MCP server acts for, as `GET /v1/me` says through the Transport (the person, the credential and the
 * membership by id, what a confirmation is bound to; the role in the active organization, the actions the credential
 * may take there, whether it was narrowed to reads), and which operations that caller may take: what the tool lists
 * show. The actions are the server's answer (`credential.actions`, @orgplane/schema's `credentialAllows`): no rule of
 * this package's own. The server checks every call again; the lists only keep an agent from offering what will be
 * refused.
 */
import { type Operation, Role } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { readOnlyHeader, Transport, TransportError } from "./Transport.js"

export interface Caller {
  /** The person's user id. */
  readonly userId: string
  /** The credential's id (a session's `ses_…`, an API key's `apk_…`), or null from a server that does not say it. */
  readonly credentialId: string | null
  /** The membership in the active organization (`om_…`), or null without one. */
  readonly membershipId: string | null
  /** The role in the active organization, or null without one. */
  readonly role: Role | null
  readonly credentialType: "session" | "api_key"
  /**
   * The actions of the policy table the credential may take in the active organization (`GET /v1/me`'s), or undefined
   * from a server that does not say (before 0.3): then every operation is shown, and the server refuses what it must.
   */
  readonly actions: ReadonlySet<string> | undefined
  /** The credential was narrowed to reads (`Orgplane-Read-Only: true`): only read-only operations. */
  readonly readOnly: boolean
}

/** What the tools read of `GET /v1/me`. */
const MeView = Schema.Struct({
  user: Schema.Struct({ id: Schema.String }),
  membership: Schema.NullOr(Schema.Struct({ id: Schema.String, role: Role })),
  credential: Schema.Struct({
    type: Schema.Literals(["session", "api_key"]),
    id: Schema.String,
    readOnly: Schema.Boolean,
    actions: Schema.optionalKey(Schema.Array(Schema.String))
  })
})

const decodeMe = Schema.decodeUnknownEffect(MeView)

/** The API refused to say who the caller is (an invalid or expired credential, say): its status and error body. */
export class CallerError extends Schema.TaggedError<CallerError>("@orgplane/mcp/CallerError")("CallerError", {
  message: Schema.String,
  status: Schema.Number,
  body: Schema.Unknown
}) {}

/** The caller behind the Transport's credential; `readOnly` sends `Orgplane-Read-Only: true` as every request does. */
export const read = Effect.fn("Caller.read")(function*(options: { readonly readOnly: boolean }) {
  const transport = yield* Transport
  const response = yield* transport.send({
    operation: "users.me",
    method: "GET",
    path: "/v1/me",
    query: {},
    headers: options.readOnly ? { [readOnlyHeader]: "true" } : {},
    body: undefined
  })
  if (response.status !== 200) {
    return yield* new CallerError({
      message: `GET /v1/me answered ${response.status}: the credential does not name a caller.`,
      status: response.status,
      body: response.body
    })
  }
  const me = yield* decodeMe(response.body).pipe(
    Effect.mapError(() => new TransportError({ message: "GET /v1/me answered a body the MCP server could not read." }))
  )
  return {
    userId: me.user.id,
    credentialId: me.credential.id,
    membershipId: me.membership?.id ?? null,
    role: me.membership?.role ?? null,
    credentialType: me.credential.type,
    actions: me.credential.actions === undefined ? undefined : new Set(me.credential.actions),
    readOnly: options.readOnly || me.credential.readOnly
  } satisfies Caller
})

/**
 * Whether the caller may take the operation: a read-only caller only reads; an API key takes no session-only
 * operation; an operation that checks actions is shown
 * when the credential may take at least one of them (`GET /v1/me`'s `credential.actions`). An endpoint's `requires`
 * lists every action it may check, some of them alternatives (`members.remove` checks `members.leave` for oneself,
 * `members.remove` for others, `members.manageOwners` for an owner): the server decides each call with the
 * arguments, so the lists leave out only what the caller can never take.
 */
export const mayTake = (caller: Caller, operation: Operation): boolean => {
  if (caller.readOnly && !operation.readOnly) return false
  // Only a person's session may call it (the operation's mark; the server refuses a key with 403 session_required).
  if (operation.sessionOnly && caller.credentialType === "api_key") return false
  if (operation.requires.length === 0) return true
  const actions = caller.actions
  return actions === undefined || operation.requires.some((action) => actions.has(action))
}
