/**
 * Okta's SCIM 2.0 client as it provisions (its published test flow): look the user up by userName with
 * `startIndex=1&count=100`, POST, deactivate with a no-path `replace` of `{active:false}`, profile updates as a PUT
 * full replace that carries `password`; group push as POST /Groups, PATCH members add / remove, PUT on rename.
 * Okta never DELETEs a user; it deletes a group it stops pushing.
 */
import { random } from "./Check.js"
import { URN } from "./Client.js"
import type { Step } from "./Replay.js"

const patchOp = (...Operations: ReadonlyArray<unknown>) => ({ schemas: [URN.patchOp], Operations })

export const sequence = (mark: string = random()): ReadonlyArray<Step> => {
  const userName = `okta.${mark}@example.com`
  const lookup = `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`
  const user = (givenName: string, active: boolean) => ({
    schemas: [URN.user],
    userName,
    name: { givenName, familyName: "Okta" },
    emails: [{ primary: true, value: userName, type: "work" }],
    displayName: `${givenName} Okta`,
    externalId: `00u${mark}`,
    password: `Pw-${mark}-1!`,
    active
  })
  const groupName = `Okta Group ${mark}`
  return [
    { name: "look the user up by userName: none yet", method: "GET", path: lookup, status: 200, fields: { schemas: [URN.listResponse], totalResults: 0 } },
    {
      name: "create the user",
      method: "POST",
      path: "/Users",
      body: user("Ada", true),
      status: 201,
      fields: { userName, active: true, "name/givenName": "Ada", "emails/0/value": userName, password: { $absent: true } },
      capture: { user: "id" }
    },
    { name: "read the user back", method: "GET", path: "/Users/${user}", status: 200, fields: { id: "${user}", userName, externalId: `00u${mark}` } },
    { name: "look the user up by userName: found", method: "GET", path: lookup, status: 200, fields: { totalResults: 1, "Resources/0/id": "${user}", startIndex: 1 } },
    {
      name: "profile update: PUT full replace with password",
      method: "PUT",
      path: "/Users/${user}",
      body: { ...user("Grace", true), id: "${user}" },
      status: 200,
      fields: { id: "${user}", "name/givenName": "Grace", displayName: "Grace Okta", active: true, password: { $absent: true } }
    },
    {
      name: "deactivate: replace with value {active:false}",
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "replace", value: { active: false } }),
      status: [200, 204]
    },
    { name: "the user reads deactivated", method: "GET", path: "/Users/${user}", status: 200, fields: { active: false, userName } },
    {
      name: "reactivate: replace with value {active:true}",
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "replace", value: { active: true } }),
      status: [200, 204]
    },
    { name: "the user reads active", method: "GET", path: "/Users/${user}", status: 200, fields: { active: true } },
    {
      name: "group push: create the group",
      method: "POST",
      path: "/Groups",
      body: { schemas: [URN.group], displayName: groupName, members: [] },
      status: 201,
      fields: { displayName: groupName },
      capture: { group: "id" }
    },
    {
      name: "group push: add the member",
      method: "PATCH",
      path: "/Groups/${group}",
      body: patchOp({ op: "add", path: "members", value: [{ value: "${user}", display: userName }] }),
      status: [200, 204]
    },
    { name: "the group lists the member", method: "GET", path: "/Groups/${group}", status: 200, fields: { members: { $includes: { value: "${user}" } } } },
    {
      name: "group push: remove the member",
      method: "PATCH",
      path: "/Groups/${group}",
      body: patchOp({ op: "remove", path: 'members[value eq "${user}"]' }),
      status: [200, 204]
    },
    { name: "the group has no member", method: "GET", path: "/Groups/${group}", status: 200, fields: { members: { $absent: true } } },
    {
      name: "group push: rename by PUT",
      method: "PUT",
      path: "/Groups/${group}",
      body: { schemas: [URN.group], id: "${group}", displayName: `${groupName} renamed`, members: [{ value: "${user}", display: userName }] },
      status: 200,
      fields: { displayName: `${groupName} renamed`, members: { $includes: { value: "${user}" } } }
    },
    {
      name: "find the renamed group",
      method: "GET",
      path: `/Groups?filter=${encodeURIComponent(`displayName eq "${groupName} renamed"`)}&startIndex=1&count=100`,
      status: 200,
      fields: { totalResults: 1, "Resources/0/id": "${group}" }
    },
    { name: "stop pushing the group: delete it", method: "DELETE", path: "/Groups/${group}", status: 204 },
    { name: "the group is gone", method: "GET", path: "/Groups/${group}", status: 404, fields: { schemas: [URN.error], status: "404" } },
    {
      name: "unassign: deactivate the user (Okta never deletes)",
      method: "PATCH",
      path: "/Users/${user}",
      body: patchOp({ op: "replace", value: { active: false } }),
      status: [200, 204]
    },
    { name: "the user stays, deactivated", method: "GET", path: lookup, status: 200, fields: { totalResults: 1, "Resources/0/active": false } }
  ]
}
