/** The built-in roles and what each may do, derived from the policy table. */
import * as Schema from "effect/Schema"
import { Role } from "./Organizations.js"
import { actionsOf, Policy, Roles } from "./Policy.js"

const summaries: Record<Role, string> = {
  member: "Works in the organization.",
  admin: "Runs the organization day to day. Everything a member may do, and:",
  owner: "Answers for the organization. Everything an admin may do, and:"
}

/** Rules that are not a single action's role. */
const notes: Partial<Record<Role, ReadonlyArray<string>>> = {
  owner: ["an organization always keeps at least one owner: the last one can be neither demoted nor removed"]
}

/** What each role may do, lowest first: served by `GET /v1/roles` and quoted in the OpenAPI descriptions. */
export const RoleCapabilities: ReadonlyArray<{
  readonly role: Role
  readonly description: string
  readonly capabilities: ReadonlyArray<string>
}> = Roles.map((role) => ({
  role,
  description: summaries[role],
  capabilities: [...actionsOf(role).map((action) => Policy[action].capability), ...(notes[role] ?? [])]
}))

const markdownRoles = RoleCapabilities.map(
  (entry) => `- \`${entry.role}\`: ${entry.description} ${entry.capabilities.join("; ")}.`
).join("\n")

/** The role model in prose, for OpenAPI descriptions. */
export const RolesDescription =
  `Roles are ordered \`owner\` > \`admin\` > \`member\`; a role may do everything the roles below it may.\n\n${markdownRoles}`

export class RoleInfo extends Schema.Class<RoleInfo>("RoleInfo")(Schema.Struct({
  role: Role,
  description: Schema.String,
  capabilities: Schema.Array(Schema.String)
}).annotate({ examples: [RoleCapabilities[0]!] })) {}

export const RoleList = Schema.Struct({ items: Schema.Array(RoleInfo) }).annotate({ identifier: "RoleList" })
