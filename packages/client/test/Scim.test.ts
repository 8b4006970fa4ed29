/**
 * Directory provisioning through the Promise client: an admin's connection and token (`scimConnections`), then the
 * directory's own calls with that token (`scimUsers`, `scimGroups`), and SCIM errors as typed rejections.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Closable, createClient, OrgplaneError } from "../src/index.js"
import { password, rejection, uniqueEmail } from "./Helpers.js"
import * as RealServer from "./RealServer.js"

// The server (the CLI's `serve`), out of process, whose organizations have the plan that includes SCIM.
let server: RealServer.RealServer
const clients: Array<Closable> = []
beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise" })
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await server.close()
})

const client = (token?: string) => {
  const created = createClient({ baseUrl: server.url, ...(token === undefined ? {} : { token }) })
  clients.push(created)
  return created
}

describe("SCIM through the Promise client", () => {
  it("an admin sets up a connection and a token; the directory provisions a User and a Group with it", async () => {
    const { session } = await client().users.signUp({ payload: { email: uniqueEmail("owner"), password, name: "Owner" } })
    const admin = client(session.token)
    await admin.organizations.create({ payload: { name: "Acme" } })

    const { connection } = await admin.scimConnections.create({ payload: { name: "Okta", groupMappingMode: "create_teams" } })
    expect(connection).toMatchObject({ name: "Okta", groupMappingMode: "create_teams", baseUrl: `${server.url}/scim/v2/${connection.id}` })
    const issued = await admin.scimConnections.createToken({ path: { connectionId: connection.id }, payload: { name: "okta" } })
    expect(issued.token).toMatch(/^scim_/)
    expect(issued.scimToken.createdAt).toBeInstanceOf(Date)

    const directory = client(issued.token)
    const email = uniqueEmail("pat")
    const user = await directory.scimUsers.create({
      path: { connectionId: connection.id },
      payload: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, emails: [{ value: email, primary: true }], active: true }
    })
    expect(user).toMatchObject({ userName: email, active: true, meta: { resourceType: "User", version: 'W/"1"' } })
    const found = await directory.scimUsers.list({ path: { connectionId: connection.id }, urlParams: { filter: `userName eq "${email}"` } })
    expect(found.Resources.map((resource) => resource.id)).toEqual([user.id])
    const group = await directory.scimGroups.create({
      path: { connectionId: connection.id },
      payload: { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "Research", members: [{ value: user.id }] }
    })
    expect(group.members).toEqual([expect.objectContaining({ value: user.id, type: "User" })])

    const { items: teams } = await admin.teams.list()
    expect(teams).toEqual([expect.objectContaining({ name: "Research", memberIds: [user.id], scimConnectionId: connection.id })])
    const { items: events } = await admin.scimConnections.listEvents({ path: { connectionId: connection.id } })
    expect(events.map((event) => [event.method, event.resourceType, event.outcome])).toEqual([
      ["POST", "Group", "succeeded"],
      ["POST", "User", "succeeded"]
    ])

    // A SCIM refusal is a typed rejection with its status; a revoked token is refused at once.
    const duplicate = await rejection(directory.scimUsers.create({ path: { connectionId: connection.id }, payload: { userName: email } }))
    expect(duplicate).toBeInstanceOf(OrgplaneError)
    expect(duplicate).toMatchObject({ status: 409 })
    await admin.scimConnections.revokeToken({ path: { connectionId: connection.id, tokenId: issued.scimToken.id } })
    expect(await rejection(directory.scimUsers.list({ path: { connectionId: connection.id } }))).toMatchObject({ status: 401 })
  })
})
