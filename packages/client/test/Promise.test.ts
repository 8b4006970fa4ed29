import { type AddressInfo, createServer } from "node:net"
import { Conflict, NotFound, Unauthorized } from "@orgplane/schema"
import { TestServer } from "@orgplane/testkit"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import {
  type ClientOptions,
  createClient,
  type OrgplanePromiseClient,
  OrgplaneConnectionError,
  OrgplaneError,
  OrgplaneValidationError,
  paginate
} from "../src/index.js"
import { password, rejection, uniqueEmail } from "./Helpers.js"

let server: TestServer.RunningServer
const clients: Array<OrgplanePromiseClient> = []
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await server.close()
})

const client = (options: Partial<ClientOptions> = {}) => {
  const created = createClient({ baseUrl: server.url, ...options })
  clients.push(created)
  return created
}


const owner = async () => {
  const email = uniqueEmail("owner")
  const { session, user } = await client().users.signUp({ payload: { email, password, name: "Owner" } })
  const asOwner = client({ token: session.token })
  const { organization } = await asOwner.organizations.create({ payload: { name: "Acme" } })
  return { email, token: session.token, user, organization, asOwner }
}

describe("Promise client", () => {
  it("signs up, signs in, reads the caller and signs out", async () => {
    const email = uniqueEmail("grace")
    const signedUp = await client().users.signUp({ payload: { email, password, name: "Grace" } })
    expect(signedUp.user).toMatchObject({ email, name: "Grace" })

    const signedIn = await client().users.signIn({ payload: { email, password } })
    const asGrace = client({ token: signedIn.session.token })
    const me = await asGrace.users.me()
    expect(me.user.id).toBe(signedUp.user.id)
    expect(me.organization).toBeNull()

    await expect(asGrace.users.signOut()).resolves.toBeUndefined()
    const after = await rejection(asGrace.users.me())
    expect(after).toBeInstanceOf(OrgplaneError)
    expect(after).toMatchObject({ status: 401 })
  })

  it("creates an organization, then creates, lists and revokes API keys", async () => {
    const { asOwner, organization, user } = await owner()
    expect((await asOwner.users.me()).organization?.id).toBe(organization.id)

    const created = await asOwner.apiKeys.create({ payload: { name: "deploy" } })
    const listed = await asOwner.apiKeys.list({ urlParams: {} })
    expect(listed.items.map((key) => key.name)).toEqual(["deploy"])

    const asKey = client({ apiKey: created.key })
    const me = await asKey.users.me()
    expect(me.user.id).toBe(user.id)
    expect(me.organization?.id).toBe(organization.id)

    // Ids are plain strings here: no brand to satisfy.
    const id: string = created.apiKey.id
    await asOwner.apiKeys.revoke({ path: { apiKeyId: id } })
    expect((await asOwner.apiKeys.list({ urlParams: {} })).items).toEqual([])
    const revoked = await rejection(asKey.users.me())
    expect(revoked).toMatchObject({ status: 401, body: { error: "unauthorized" }, code: "unauthorized", tag: "Unauthorized" })
  })

  it("rejects with OrgplaneError carrying the status, the exact body and the code", async () => {
    const { asOwner, email } = await owner()

    const anonymous = await rejection(client().users.me())
    expect(anonymous).toBeInstanceOf(OrgplaneError)
    expect(anonymous).toBeInstanceOf(Error)
    expect(anonymous).toMatchObject({ status: 401, body: { error: "unauthorized" }, code: "unauthorized", tag: "Unauthorized" })
    expect((anonymous as OrgplaneError).cause).toBeInstanceOf(Unauthorized)

    const taken = (await rejection(client().users.signUp({ payload: { email, password, name: "Again" } }))) as OrgplaneError
    expect(taken.status).toBe(409)
    expect(taken.code).toBe("email_taken")
    expect(taken.tag).toBe("Conflict")
    expect(taken.body).toEqual({ error: "email_taken", message: expect.any(String) })
    expect(taken.cause).toBeInstanceOf(Conflict)

    const missing = (await rejection(
      asOwner.apiKeys.revoke({ path: { apiKeyId: "apk_01h2xcejqtf2nbrexx3vqjhp41" } })
    )) as OrgplaneError
    expect(missing).toMatchObject({ status: 404, code: "api_key_not_found", tag: "NotFound" })
    expect(Object.keys(missing.body as object).sort()).toEqual(["error", "message"])
    expect(missing.cause).toBeInstanceOf(NotFound)
    expect(missing.message).toContain("404 api_key_not_found")

    const { key } = await asOwner.apiKeys.create({ payload: { name: "script" } })
    const forbidden = (await rejection(client({ apiKey: key }).organizations.create({ payload: { name: "Other" } }))) as OrgplaneError
    expect(forbidden).toMatchObject({ status: 403, code: "session_required", tag: "Forbidden" })
    expect(forbidden.body).toEqual({ reason: "session_required", message: expect.any(String) })
  })

  it("rejects an invalid request before sending it", async () => {
    const error = await rejection(client().apiKeys.list({ urlParams: { limit: 1000 } }))
    expect(error).toBeInstanceOf(OrgplaneValidationError)
    expect((error as OrgplaneValidationError).issues[0]?.path).toEqual(["limit"])
  })

  it("rejects with OrgplaneConnectionError when nothing answers", async () => {
    // A port that was free a moment ago: the connection is refused.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const { port } = probe.address() as AddressInfo
    await new Promise((resolve) => probe.close(resolve))
    const error = await rejection(client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }).system.health())
    expect(error).toBeInstanceOf(OrgplaneConnectionError)
    expect(error).toMatchObject({ timedOut: false })
  })

  it("rejects calls once closed", async () => {
    const closing = createClient({ baseUrl: server.url })
    expect(await closing.system.health()).toMatchObject({ ok: true })
    await closing.close()
    const error = await rejection(closing.system.health())
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toContain("closed")
  })

  it("walks every page of a list", async () => {
    const { asOwner } = await owner()
    const names = ["a", "b", "c", "d", "e"]
    for (const name of names) await asOwner.apiKeys.create({ payload: { name } })

    const cursors: Array<string | undefined> = []
    const list: typeof asOwner.apiKeys.list = (request, options) => {
      cursors.push(request.urlParams.cursor)
      return asOwner.apiKeys.list(request, options)
    }
    const seen: Array<string> = []
    for await (const key of paginate(list, { urlParams: { limit: 2 } })) seen.push(key.name)
    expect(seen).toEqual(["e", "d", "c", "b", "a"])
    expect(cursors).toHaveLength(3)
    expect(cursors[0]).toBeUndefined()
    expect(new Set(cursors.slice(1)).size).toBe(2)

    // Stopping early fetches no further page.
    cursors.length = 0
    for await (const key of paginate(list, { urlParams: { limit: 2 } })) {
      if (key.name === "d") break
    }
    expect(cursors).toHaveLength(1)
  })

  it("is typed from the Effect client", () => {
    const typed = client()
    expectTypeOf(typed.apiKeys.list).parameter(0).toEqualTypeOf<{ readonly urlParams: { readonly cursor?: string; readonly limit?: number } }>()
    expectTypeOf(typed.users.me).returns.resolves.toHaveProperty("user")
    expectTypeOf(typed.apiKeys.revoke).returns.resolves.toEqualTypeOf<void>()
    // @ts-expect-error: not an endpoint of the API
    expect(typed.apiKeys.rotate).toBeUndefined()
    expect(Object.keys(typed).sort()).toEqual([
      "admin",
      "apiKeys",
      "bootstrap",
      "capabilities",
      "close",
      "configObjects",
      "connectorAccounts",
      "connectorInstances",
      "connectorMappings",
      "connectorSyncEvents",
      "connectorTargets",
      "desktopPolicies",
      "invitations",
      "marketplaces",
      "mcpAuthorization",
      "mcpConnections",
      "mcpDiscovery",
      "mcpTools",
      "members",
      "memory",
      "organizations",
      "plugins",
      "roles",
      "sso",
      "suiteClients",
      "suiteConnections",
      "system",
      "teams",
      "telemetry",
      "users",
      "webhooks",
      "workerRuntime",
      "workers"
    ])
  })

  it("staffs an organization: invitation, acceptance by sign-up, a team, a role change", async () => {
    const { asOwner, organization } = await owner()
    const email = uniqueEmail("ada")
    const invited = await asOwner.invitations.create({ payload: { email, role: "member" } })
    expect(invited.refreshed).toBe(false)
    const again = await asOwner.invitations.create({ payload: { email, role: "admin" } })
    expect(again.refreshed).toBe(true)
    expect(again.invitation.id).toBe(invited.invitation.id)

    const accepted = await client().invitations.accept({
      payload: { token: again.inviteToken, signUp: { name: "Ada", password } }
    })
    expect(accepted.organization.id).toBe(organization.id)
    expect(accepted.session?.token).toBeTypeOf("string")
    const asAda = client({ token: accepted.session!.token })

    const { team } = await asAda.teams.create({ payload: { name: "Analytics", memberIds: [accepted.membership.id] } })
    expect(team.memberIds).toEqual([accepted.membership.id])
    const duplicate = await rejection(asAda.teams.create({ payload: { name: "analytics" } }))
    expect(duplicate).toBeInstanceOf(OrgplaneError)
    expect(duplicate).toMatchObject({ status: 409, code: "team_exists" })

    const { member } = await asOwner.members.changeRole({ path: { memberId: accepted.membership.id }, payload: { role: "member" } })
    expect(member).toMatchObject({ name: "Ada", email, role: "member" })
    const forbidden = await rejection(asAda.teams.delete({ path: { teamId: team.id } }))
    expect(forbidden).toMatchObject({ status: 403, body: { reason: "insufficient_role" } })
    const names = []
    for await (const item of paginate(asAda.members.list, { urlParams: { limit: 1 } })) names.push(item.name)
    expect(names).toEqual(["Owner", "Ada"])
  })
})
