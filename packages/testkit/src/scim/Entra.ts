/**
 * Microsoft Entra ID's SCIM client as it provisions (non-gallery app, default behaviour), then with the
 * `?aadOptscim062020` compliance flag: lookup by `userName eq` (an empty ListResponse when absent) then POST;
 * PATCH ops capitalised (`Replace`, `Add`, `Remove`), booleans as the strings `"False"`/`"True"`, a no-path replace
 * whose value has dotted keys, `emails[type eq "work"].value` paths, the enterprise manager by its URN path with the
 * id as a bare string; groups looked up with `excludedAttributes=members` and `displayName eq`, members added and
 * removed by `members` / `members[value eq "…"]` paths; soft delete (active false) then a hard DELETE.
 */
import { random } from "./Check.js"
import { URN } from "./Client.js"
import type { Step } from "./Replay.js"

const patchOp = (...Operations: ReadonlyArray<unknown>) => ({ schemas: [URN.patchOp], Operations })
const MANAGER = `${URN.enterpriseUser}:manager`

export const sequence = (mark: string = random()): ReadonlyArray<Step> => {
  const userName = `entra.${mark}@example.com`
  const managerName = `entra.manager.${mark}@example.com`
  const groupName = `Entra Group ${mark}`
  const byUserName = (name: string) => `/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`
  const user = (name: string, externalId: string, extra: Record<string, unknown> = {}) => ({
    schemas: [URN.user, URN.enterpriseUser],
    externalId,
    userName: name,
    active: true,
    displayName: `${name.split("@")[0]}`,
    emails: [{ primary: true, type: "work", value: name }],
    meta: { resourceType: "User" },
    name: { formatted: "Ada Lovelace", familyName: "Lovelace", givenName: "Ada" },
    ...extra
  })
  return [
    { name: "look the user up by userName: an empty ListResponse", method: "GET", path: byUserName(userName), status: 200, fields: { schemas: [URN.listResponse], totalResults: 0, Resources: { $length: 0 } } },
    {
      name: "create the user (core + enterprise extension)",
      method: "POST",
      path: "/Users",
      body: user(userName, `ext-${mark}`, { title: "Engineer", [URN.enterpriseUser]: { employeeNumber: `E${mark}`, department: "Research" } }),
      status: 201,
      fields: { userName, active: true, title: "Engineer", [`${URN.enterpriseUser}/department`]: "Research" },
      capture: { user: "id" }
    },
    { name: "look the user up by externalId", method: "GET", path: `/Users?filter=${encodeURIComponent(`externalId eq "ext-${mark}"`)}`, status: 200, fields: { totalResults: 1, "Resources/0/id": "${user}" } },
    { name: "look the manager up: none yet", method: "GET", path: byUserName(managerName), status: 200, fields: { totalResults: 0 } },
    { name: "create the manager", method: "POST", path: "/Users", body: user(managerName, `mgr-${mark}`), status: 201, capture: { manager: "id" } },
    {
      name: "capitalised ops: Replace displayName, Add title",
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "Replace", path: "displayName", value: "Ada L." }, { op: "Add", path: "title", value: "Principal Engineer" }),
      status: [200, 204]
    },
    { name: "displayName and title changed", method: "GET", path: "/Users/${user}", status: 200, fields: { displayName: "Ada L.", title: "Principal Engineer" } },
    {
      name: "no-path Replace with dotted keys",
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "Replace", value: { "name.givenName": "Augusta", "name.familyName": "King", 'emails[type eq "work"].value': `augusta.${mark}@example.com` } }),
      status: [200, 204]
    },
    {
      name: "the dotted keys landed",
      method: "GET",
      path: "/Users/${user}",
      status: 200,
      fields: { "name/givenName": "Augusta", "name/familyName": "King", "emails[type=work]/value": `augusta.${mark}@example.com` }
    },
    {
      name: 'Replace emails[type eq "work"].value',
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "Replace", path: 'emails[type eq "work"].value', value: userName }),
      status: [200, 204]
    },
    { name: "the work email changed", method: "GET", path: "/Users/${user}", status: 200, fields: { "emails[type=work]/value": userName } },
    {
      name: "Add the enterprise manager (the id as a bare string)",
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "Add", path: MANAGER, value: "${manager}" }),
      status: [200, 204]
    },
    { name: "the manager is set", method: "GET", path: "/Users/${user}", status: 200, fields: { [`${URN.enterpriseUser}/manager/value`]: "${manager}" } },
    {
      name: 'soft delete: Replace active with the string "False"',
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "Replace", path: "active", value: "False" }),
      status: [200, 204]
    },
    { name: "the user reads inactive", method: "GET", path: "/Users/${user}", status: 200, fields: { active: false } },
    {
      name: 'reactivate: Replace active with the string "True"',
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "Replace", path: "active", value: "True" }),
      status: [200, 204]
    },
    { name: "the user reads active", method: "GET", path: "/Users/${user}", status: 200, fields: { active: true } },
    {
      name: "look the group up without members: none yet",
      method: "GET",
      path: `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${groupName}"`)}`,
      status: 200,
      fields: { totalResults: 0 }
    },
    {
      name: "create the group",
      method: "POST",
      path: "/Groups",
      body: { schemas: [URN.group], externalId: `grp-${mark}`, displayName: groupName, meta: { resourceType: "Group" } },
      status: 201,
      fields: { displayName: groupName, externalId: `grp-${mark}` },
      capture: { group: "id" }
    },
    {
      name: "Add members by path",
      method: "PATCH",
      path: "/Groups/${group}",
      body: patchOp({ op: "Add", path: "members", value: [{ value: "${user}" }, { value: "${manager}" }] }),
      status: [200, 204]
    },
    { name: "the group has both members", method: "GET", path: "/Groups/${group}", status: 200, fields: { members: { $length: 2 } } },
    {
      name: "the group read with excludedAttributes=members",
      method: "GET",
      path: "/Groups/${group}?excludedAttributes=members",
      status: 200,
      fields: { id: "${group}", displayName: groupName, members: { $absent: true } }
    },
    {
      name: 'Remove members[value eq "<id>"]',
      method: "PATCH",
      path: "/Groups/${group}",
      body: patchOp({ op: "Remove", path: 'members[value eq "${manager}"]' }),
      status: [200, 204]
    },
    { name: "one member left", method: "GET", path: "/Groups/${group}", status: 200, fields: { members: [{ value: "${user}" }] } },
    {
      name: "Replace the group's displayName",
      method: "PATCH",
      path: "/Groups/${group}",
      body: patchOp({ op: "Replace", path: "displayName", value: `${groupName} renamed` }),
      status: [200, 204]
    },
    {
      name: "find the renamed group by displayName eq",
      method: "GET",
      path: `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${groupName} renamed"`)}`,
      status: 200,
      fields: { totalResults: 1, "Resources/0/id": "${group}", "Resources/0/members": { $absent: true } }
    },
    {
      name: "?aadOptscim062020: lowercase ops and a real boolean",
      method: "PATCH",
      path: "/Users/${user}?aadOptscim062020",
      body: patchOp({ op: "replace", path: "active", value: false }, { op: "add", path: MANAGER, value: { value: "${manager}" } }),
      status: [200, 204]
    },
    { name: "?aadOptscim062020: the user reads inactive", method: "GET", path: "/Users/${user}", status: 200, fields: { active: false, [`${URN.enterpriseUser}/manager/value`]: "${manager}" } },
    {
      name: "?aadOptscim062020: lowercase member remove",
      method: "PATCH",
      path: "/Groups/${group}?aadOptscim062020",
      body: patchOp({ op: "remove", path: 'members[value eq "${user}"]' }),
      status: [200, 204]
    },
    { name: "?aadOptscim062020: the group has no member", method: "GET", path: "/Groups/${group}", status: 200, fields: { members: { $absent: true } } },
    {
      name: "?aadOptscim062020: Remove the manager",
      method: "PATCH",
      path: "/Users/${user}?aadOptscim062020",
      body: patchOp({ op: "remove", path: MANAGER }),
      status: [200, 204]
    },
    { name: "the manager is unset", method: "GET", path: "/Users/${user}", status: 200, fields: { [`${URN.enterpriseUser}/manager`]: { $absent: true } } },
    { name: "delete the group", method: "DELETE", path: "/Groups/${group}", status: 204 },
    { name: "hard delete the user", method: "DELETE", path: "/Users/${user}", status: 204 },
    { name: "the user is gone", method: "GET", path: "/Users/${user}", status: 404, fields: { schemas: [URN.error], status: "404" } },
    { name: "look the user up by userName after delete: empty", method: "GET", path: byUserName(userName), status: 200, fields: { totalResults: 0 } },
    { name: "delete the manager", method: "DELETE", path: "/Users/${manager}", status: 204 }
  ]
}
