/**
 * The API's changes made on purpose since 0.1.0, whose document and Effect 3 recordings the differential tests hold
 * the port to: `as010` puts each back in what a test compares (the whole document in Api.test.ts, a group's
 * operations in `sameOperations`, a schema in `sameSchemas`, the role texts), so everything else is still held to
 * the recording. One list, each entry with the issue that made it; a change to the API adds its entry here.
 */

/** One change: texts the port says where 0.1.0 said others, and values (actions, capabilities) it added. */
export interface Change {
  /** The issue and item that made it, and what changed. */
  readonly why: string
  /** `[port, 0.1.0]`: a text of the port's strings and what 0.1.0 said in its place (in order: longer first). */
  readonly texts?: ReadonlyArray<readonly [port: string, published: string]>
  /** Strings the port added as array members or object keys (a new action, its capability): left out. */
  readonly added?: ReadonlyArray<string>
  /** Responses the port added to an operation: `[METHOD /path, status]`. */
  readonly responses?: ReadonlyArray<readonly [operation: string, status: string]>
}

export const changes: ReadonlyArray<Change> = [
  {
    why:
      "issue 55, item 5: inviting admins is an action of its own (`invitations.inviteAdmins`); it and role changes are taken by an API key only when a scope names them; a key's pending invitations are canceled with it",
    added: ["invitations.inviteAdmins", "invite admins (with invitations.manage)"],
    texts: [
      ["invite members, list and cancel invitations; invite admins (with invitations.manage)", "invite members and admins, list and cancel invitations"],
      ["invite members, list and cancel invitations", "invite members and admins, list and cancel invitations"],
      ["; `invitations.inviteAdmins`, owners and admins", ""],
      [
        "(201); inviting an admin also takes `invitations.inviteAdmins`, which an API key takes only when a scope names it (403 `insufficient_scope`). An invitation made with an API key is canceled, while pending, when that key is revoked, whichever way (its own revocation, the revocation of the key that made it, its maker's removal). ",
        "(201). "
      ],
      [" An API key takes either only when a scope names it (403 `insufficient_scope`).", ""],
      [" (and the invitations those keys made that are still pending canceled)", ""],
      [
        "without them it takes none of the actions that need a scope naming them, such as managing keys, owners and roles, or inviting admins",
        "without them it may not manage keys, owners or the audit log's retention"
      ],
      [", and the invitations they made that are still pending are canceled", ""],
      // The guarded actions as CreateApiKeyRequest lists them (item 6 added the operator's lists).
      [
        "`apiKeys.manage`, `members.manageOwners`, `members.transferOwnership`, `members.changeRole`, `invitations.inviteAdmins`, `audit.manage`, `sso.manage`, `scim.manage`, `organizations.setPlan`, `admin.claimOperator`, `members.resetPassword`, `admin.resetPasswords`, `admin.manageUsers`, `admin.readUsers`, `admin.readOrganizations`, `organizations.delete` and `admin.deleteOrganizations`",
        "`apiKeys.manage`, `members.manageOwners`, `members.transferOwnership`, `audit.manage`, `sso.manage`, `scim.manage`, `organizations.setPlan`, `admin.claimOperator`, `members.resetPassword`, `admin.resetPasswords` and `admin.manageUsers`"
      ]
    ]
  },
  {
    why:
      "issue 55, item 6: the operator's hierarchy over accounts, its lists taken by a key only when a scope names them, a plan change asking for a recent sign-in, the setup token throttled, and the operator's deletion restored by the operator only",
    responses: [["POST /v1/admin/operator", "429"]],
    texts: [
      [" Guesses are throttled: 10 attempts an hour from one client address, 100 from all.", ""],
      ["; 429 `rate_limited` past the attempts, with `Retry-After`.", "."],
      [
        " Needs a recent sign-in (`ORGPLANE_RECENT_AUTHENTICATION`) from a session; an API key needs the `organizations.setPlan` scope.\n\nErrors: 403 `recent_authentication_required` from a session older than that, `insufficient_scope`; 404",
        "\n\nErrors: 404"
      ],
      [" An API key needs the `admin.readUsers` scope. Changes nothing.\n\nErrors: 400 `invalid_request` for a cursor of other filters; 403 `insufficient_scope`.", " Changes nothing.\n\nErrors: 400 `invalid_request` for a cursor of other filters."],
      [" An API key needs the `admin.readOrganizations` scope.\n\nErrors: 400 `invalid_request` for a cursor of another list or of other filters; 403 `insufficient_scope`.", "\n\nErrors: 400 `invalid_request` for a cursor of another list or of other filters."],
      [" The operator organization's owners and admins are acted on by its owners only (not by its admins).", ""],
      [", `insufficient_role` for an admin of the operator organization acting on its owners or admins", ""],
      ["the operator (not its owners: the operator's deletion is the operator's to undo) may restore it", "its owners or the operator may restore it"],
      [
        ", `operator_only` when the instance's operator deleted it (or the system did, its last member's account deleted): only the operator restores it",
        ""
      ],
      ["an owner of, deleted by one of its owners less than", "an owner of, deleted less than"],
      [" that they may still restore (their owners deleted them: not the instance's operator)", " that may still be restored"]
    ]
  }
]

/**
 * Actions 0.1.0 gave a key made without scopes that it now takes only when a scope names them (issue 55: role
 * changes, item 5; the operator's lists of every account and organization, item 6).
 */
export const guardedSince010: ReadonlyArray<string> = ["members.changeRole", "admin.readUsers", "admin.readOrganizations"]

const added = new Set(changes.flatMap((change) => change.added ?? []))
const texts = changes.flatMap((change) => change.texts ?? [])

const responses = changes.flatMap((change) => change.responses ?? [])

/**
 * `value` (JSON data) as 0.1.0 had it: every change put back, at any depth; the responses added left out of an
 * OpenAPI document's operations, or of the one operation `operation` (`METHOD /path`) when `value` is its view.
 */
export const as010 = <A>(value: A, operation?: string): A => withoutResponses(back(value), operation) as A

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const withoutResponses = (value: unknown, operation: string | undefined): unknown => {
  if (!isObject(value)) return value
  const paths = value["paths"]
  for (const [at, status] of responses) {
    const [method = "", path = ""] = at.split(" ")
    const item = isObject(paths) ? paths[path] : undefined
    const target = operation === at ? value : isObject(item) ? item[method.toLowerCase()] : undefined
    const declared = isObject(target) ? target["responses"] : undefined
    if (isObject(declared)) delete declared[status]
  }
  return value
}

const back = (value: unknown): unknown => {
  if (typeof value === "string") return texts.reduce((text, [port, published]) => text.split(port).join(published), value)
  if (Array.isArray(value)) return value.filter((item) => typeof item !== "string" || !added.has(item)).map(back)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).filter(([key]) => !added.has(key)).map(([key, item]) => [key, back(item)]))
  }
  return value
}
