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
  /** Errors the port added to a response an operation had: `[METHOD /path, status, component]`. */
  readonly errors?: ReadonlyArray<readonly [operation: string, status: string, component: string]>
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
  },
  {
    why:
      "issue 55, item 7: a deleted organization's invitation previews as a missing one, an invitation accepted with signUp counts as a sign-up, and the organizations a person owns are counted wherever they become an owner",
    responses: [["POST /v1/invitations/accept", "429"]],
    errors: [["POST /v1/bootstrap/claims/accept", "409", "Conflict"]],
    texts: [
      ["; 409 `organization_quota_reached` when an `owner` claim would make the caller own more organizations than the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`).", "."],
      [", `organization_quota_reached` when the target already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`).", "."],
      [", `organization_quota_reached` when a member made an owner already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`).", "."],
      [", `organization_quota_reached` when one of its owners already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`).", "."],
      ["; 429 `rate_limited` with `signUp` past the sign-ups the instance allows from the client's address (`ORGPLANE_SIGN_UPS_PER_HOUR`, counted with `POST /v1/auth/sign-up`'s), with `Retry-After`.", "."],
      ["; with `signUp` it counts as a sign-up from the client's address.", "."],
      [", or one of a deleted organization (the same answer for each)", " (the same answer for each)"],
      [", invitations accepted with `signUp` counted with them.", "."]
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
const errors = changes.flatMap((change) => change.errors ?? [])

/**
 * `value` (JSON data) as 0.1.0 had it: every change put back, at any depth; for an OpenAPI document, the responses
 * and errors the port added to its operations left out.
 */
export const as010 = <A>(value: A): A => withoutResponses(back(value)) as A

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The declared responses of the document's operation `METHOD /path`, if it has it. */
const responsesOf = (document: Record<string, unknown>, operation: string): Record<string, unknown> | undefined => {
  const [method = "", path = ""] = operation.split(" ")
  const paths = document["paths"]
  const item = isObject(paths) ? paths[path] : undefined
  const found = isObject(item) ? item[method.toLowerCase()] : undefined
  const declared = isObject(found) ? found["responses"] : undefined
  return isObject(declared) ? declared : undefined
}

const withoutResponses = (value: unknown): unknown => {
  if (!isObject(value) || !isObject(value["paths"])) return value
  for (const [operation, status] of responses) {
    const declared = responsesOf(value, operation)
    if (declared !== undefined) delete declared[status]
  }
  for (const [operation, status, component] of errors) {
    const response = responsesOf(value, operation)?.[status]
    const content = isObject(response) ? response["content"] : undefined
    for (const media of Object.values(isObject(content) ? content : {})) {
      const schema = isObject(media) ? media["schema"] : undefined
      const members = isObject(schema) ? schema["anyOf"] : undefined
      if (!isObject(media) || !isObject(schema) || !Array.isArray(members)) continue
      const kept = members.filter((member) => !(isObject(member) && typeof member["$ref"] === "string" && member["$ref"].endsWith(`/${component}`)))
      media["schema"] = kept.length === 1 && Object.keys(schema).length === 1 ? kept[0] : { ...schema, anyOf: kept }
    }
  }
  return value
}

const back = (value: unknown): unknown => {
  if (typeof value === "string") return texts.reduce((text, [port, published]) => text.split(port).join(published), value)
  if (Array.isArray(value)) return value.filter((item) => typeof item !== "string" || !added.has(item)).map(back)
  if (isObject(value)) return Object.fromEntries(Object.entries(value).filter(([key]) => !added.has(key)).map(([key, item]) => [key, back(item)]))
  return value
}
