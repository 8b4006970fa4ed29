/** The built-in roles and what each may do. */
import { Schema } from "effect"
import { Role } from "./Organizations.js"

/** What each role may do: served by `GET /v1/roles` and quoted in the OpenAPI descriptions. */
export const RoleCapabilities: ReadonlyArray<{
  readonly role: Role
  readonly description: string
  readonly capabilities: ReadonlyArray<string>
}> = [
  {
    role: "member",
    description: "Works in the organization.",
    capabilities: [
      "read the organization's members, teams and roles",
      "update their own profile and password",
      "leave the organization"
    ]
  },
  {
    role: "admin",
    description: "Runs the organization day to day. Everything a member may do, and:",
    capabilities: [
      "change members' and admins' roles between member and admin",
      "remove members and admins",
      "create, change and delete teams",
      "invite members and admins, list and cancel invitations",
      "create, list and revoke API keys"
    ]
  },
  {
    role: "owner",
    description: "Answers for the organization. Everything an admin may do, and:",
    capabilities: [
      "make a member an owner, demote or remove another owner",
      "transfer ownership to an admin",
      "an organization always keeps at least one owner: the last one can be neither demoted nor removed"
    ]
  }
]

const markdownRoles = RoleCapabilities.map(
  (entry) => `- \`${entry.role}\`: ${entry.description} ${entry.capabilities.join("; ")}.`
).join("\n")

/** The role model in prose, for OpenAPI descriptions. */
export const RolesDescription =
  `Roles are ordered \`owner\` > \`admin\` > \`member\`; a role may do everything the roles below it may.\n\n${markdownRoles}`

export class RoleInfo extends Schema.Class<RoleInfo>("RoleInfo")({
  role: Role,
  description: Schema.String,
  capabilities: Schema.Array(Schema.String)
}) {}

export const RoleList = Schema.Struct({ items: Schema.Array(RoleInfo) }).annotations({ identifier: "RoleList" })
