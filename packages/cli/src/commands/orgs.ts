/** `orgplane orgs list | create | switch`: organizations of the signed-in user. */
import { Me, MyOrganizationPage, OrganizationId, OrganizationName, OrganizationsApi, OrganizationWithMembership, UsersApi } from "@orgplane/schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

export const list = Commands.list("list", {
  summary: "List the organizations you belong to, with your role in each (needs a session).",
  noun: "organizations",
  inputs: {},
  call: (client, _, page) => client.users.listOrganizations({ urlParams: page }),
  output: MyOrganizationPage,
  columns: [
    ["id", ({ organization }) => organization.id],
    ["name", ({ organization }) => organization.name],
    ["role", ({ membership }) => membership.role],
    ["plan", ({ organization }) => organization.plan],
    ["joined", ({ membership }) => Output.date(membership.createdAt)]
  ]
})

export const create = Commands.endpoint("create", {
  summary: "Create an organization (you become its owner) and make it the active one.",
  inputs: { name: Inputs.argument("name", { schema: OrganizationName }) },
  call: (client, { name }) => client.organizations.create({ payload: { name } }),
  output: OrganizationWithMembership,
  human: ({ membership, organization }) =>
    `Created organization ${organization.name} (${organization.id}), plan ${organization.plan}; you are its ${membership.role} and it is now your active organization.`
})

export const switchTo = Commands.endpoint("switch", {
  summary: "Make another organization you belong to the session's active one.",
  inputs: {
    organizationId: Inputs.argument("organizationId", { schema: OrganizationId, description: "The organization (org_…), from 'orgs list'." })
  },
  call: (client, { organizationId }) => client.users.switchOrganization({ payload: { organizationId } }),
  output: Me,
  human: ({ membership, organization }, { organizationId }) =>
    `Switched to ${organization?.name ?? organizationId} (${organizationId}) as ${membership?.role ?? "member"}.`
})

export const orgs = Commands.group("orgs", "List, create and switch your organizations.", [list, create, switchTo], [OrganizationsApi, UsersApi])
