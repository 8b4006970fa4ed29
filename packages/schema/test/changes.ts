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
      [
        "`apiKeys.manage`, `members.manageOwners`, `members.transferOwnership`, `members.changeRole`, `invitations.inviteAdmins`, `audit.manage`, `sso.manage`, `scim.manage`, `organizations.setPlan`, `admin.claimOperator`, `members.resetPassword`, `admin.resetPasswords`, `admin.manageUsers`, `organizations.delete` and `admin.deleteOrganizations`",
        "`apiKeys.manage`, `members.manageOwners`, `members.transferOwnership`, `audit.manage`, `sso.manage`, `scim.manage`, `organizations.setPlan`, `admin.claimOperator`, `members.resetPassword`, `admin.resetPasswords` and `admin.manageUsers`"
      ]
    ]
  }
]

const added = new Set(changes.flatMap((change) => change.added ?? []))
const texts = changes.flatMap((change) => change.texts ?? [])

/** `value` (JSON data) as 0.1.0 had it: every change put back, at any depth. */
export const as010 = <A>(value: A): A => back(value) as A

const back = (value: unknown): unknown => {
  if (typeof value === "string") return texts.reduce((text, [port, published]) => text.split(port).join(published), value)
  if (Array.isArray(value)) return value.filter((item) => typeof item !== "string" || !added.has(item)).map(back)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).filter(([key]) => !added.has(key)).map(([key, item]) => [key, back(item)]))
  }
  return value
}
