/**
 * Who may do what to one config object, plugin or marketplace, through HTTP: the access matrix (kind × grant kind ×
 * role) for a plain member, owners and admins without grants, revocation taking effect at once, the organization
 * boundary, and the viewer fallbacks (a plugin through a marketplace, a config object through a plugin). The cases
 * come from the tables below; each case works on a resource of its own, so no case depends on another.
 */
import {
  type AccessRole,
  AccessRoles,
  type ConfigObjectAccessGrantPage,
  type ConfigObjectAccessGrantResponse,
  type ConfigObjectPage,
  type ConfigObjectResponse,
  type MarketplaceAccessGrantPage,
  type MarketplaceAccessGrantResponse,
  type MarketplacePage,
  type MarketplaceResponse,
  type PluginAccessGrantPage,
  type PluginAccessGrantResponse,
  type PluginPage,
  type PluginResponse,
  type TeamResponse
} from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
type Org = Awaited<ReturnType<typeof Http.staffed>>
type Person = Org["member"]
/** The organization, a plain member (`alice`) in a team, and another organization with a plain member of its own. */
let org: Org
let alice: Person
let team: { readonly id: string }
let other: Org

beforeAll(async () => {
  server = await TestServer.start()
  ;[org, other] = await Promise.all([Http.staffed(server.url), Http.staffed(server.url, "Elsewhere")])
  alice = await Http.join(server.url, org.owner.token, "member", "Alice")
  team = ok<typeof TeamResponse.Encoded>("creating a team", await call("POST", "/v1/teams", org.owner, { name: `Team ${unique()}`, memberIds: [alice.membership.id] }), 201).team
})
afterAll(() => server.close())

type Method = "GET" | "POST" | "PATCH" | "DELETE"
const call = (method: Method, path: string, who: { readonly token: string }, body?: unknown) =>
  Http.request(server.url, method, path, { token: who.token, body })

const unique = () => Math.random().toString(36).slice(2, 10)

const ok = Http.expectStatus

/** What the three kinds answer alike, as sent: a page of them, a page of grants on one, a grant made. */
type ResourcePage = typeof ConfigObjectPage.Encoded | typeof PluginPage.Encoded | typeof MarketplacePage.Encoded
type GrantPage = typeof ConfigObjectAccessGrantPage.Encoded | typeof PluginAccessGrantPage.Encoded | typeof MarketplaceAccessGrantPage.Encoded
type GrantMade =
  | typeof ConfigObjectAccessGrantResponse.Encoded
  | typeof PluginAccessGrantResponse.Encoded
  | typeof MarketplaceAccessGrantResponse.Encoded

// The three kinds, each with how to make one and what its operations are ----------------------------------------

interface Request {
  readonly method: Method
  readonly path: string
  readonly body?: unknown
}

interface Kind {
  readonly name: "config object" | "plugin" | "marketplace"
  readonly base: string
  readonly notFound: string
  /** Whether plain members may create this kind (marketplaces need an admin). */
  readonly memberCreates: boolean
  /** Makes one whose name holds `word` (for the list's `q`), and answers its id. */
  readonly create: (who: Person, word: string) => Promise<string>
  /** The edit that needs editor access, and the status it answers. */
  readonly edit: (id: string) => Request
  readonly edited: number
  /** The lifecycle operation that needs manager access (it comes last: it changes the resource). */
  readonly retire: (id: string) => Request
}

const kinds: ReadonlyArray<Kind> = [
  {
    name: "config object",
    base: "/v1/config-objects",
    notFound: "config_object_not_found",
    memberCreates: true,
    create: async (who, word) =>
      ok<typeof ConfigObjectResponse.Encoded>(
        "creating a config object",
        await call("POST", "/v1/config-objects", who, { input: { objectType: "custom", rawSourceText: `Probe ${word}\nbody` } }),
        201
      ).item.id,
    edit: (id) => ({ method: "POST", path: `/v1/config-objects/${id}/versions`, body: { input: { rawSourceText: `Edited ${unique()}` } } }),
    edited: 201,
    retire: (id) => ({ method: "POST", path: `/v1/config-objects/${id}/archive` })
  },
  {
    name: "plugin",
    base: "/v1/plugins",
    notFound: "plugin_not_found",
    memberCreates: true,
    create: async (who, word) => ok<typeof PluginResponse.Encoded>("creating a plugin", await call("POST", "/v1/plugins", who, { name: `Plugin ${word} ${unique()}` }), 201).item.id,
    edit: (id) => ({ method: "PATCH", path: `/v1/plugins/${id}`, body: { description: `Edited ${unique()}` } }),
    edited: 200,
    retire: (id) => ({ method: "POST", path: `/v1/plugins/${id}/archive` })
  },
  {
    name: "marketplace",
    base: "/v1/marketplaces",
    notFound: "marketplace_not_found",
    memberCreates: false,
    create: async (who, word) =>
      ok<typeof MarketplaceResponse.Encoded>("creating a marketplace", await call("POST", "/v1/marketplaces", who, { name: `Market ${word} ${unique()}` }), 201).item.id,
    edit: (id) => ({ method: "PATCH", path: `/v1/marketplaces/${id}`, body: { description: `Edited ${unique()}` } }),
    edited: 200,
    retire: (id) => ({ method: "DELETE", path: `/v1/marketplaces/${id}` })
  }
]

/** The operations checked for each resource, in order, with the role each needs and the status it answers. */
interface Operation {
  readonly name: string
  readonly needs: AccessRole
  readonly request: (kind: Kind, id: string) => Request
  readonly success: (kind: Kind) => number
}

const operations: ReadonlyArray<Operation> = [
  { name: "read", needs: "viewer", request: (kind, id) => ({ method: "GET", path: `${kind.base}/${id}` }), success: () => 200 },
  { name: "edit", needs: "editor", request: (kind, id) => kind.edit(id), success: (kind) => kind.edited },
  { name: "list grants", needs: "manager", request: (kind, id) => ({ method: "GET", path: `${kind.base}/${id}/access` }), success: () => 200 },
  { name: "archive or delete", needs: "manager", request: (kind, id) => kind.retire(id), success: () => 200 }
]

const send = (who: { readonly token: string }, request: Request) => call(request.method, request.path, who, request.body)

const allows = (role: AccessRole | undefined, needs: AccessRole) =>
  role !== undefined && AccessRoles.indexOf(role) >= AccessRoles.indexOf(needs)

const insufficient = (kind: Kind, needs: AccessRole) => ({ reason: "insufficient_access", message: `Missing ${needs} access for ${kind.name}.` })

/** Runs every operation as `who` and expects each to succeed exactly when `role` allows it. */
const expectOutcomes = async (kind: Kind, id: string, who: Person, role: AccessRole | undefined) => {
  const outcomes = []
  const expected = []
  for (const operation of operations) {
    const response = await send(who, operation.request(kind, id))
    outcomes.push([operation.name, response.status, response.status < 300 ? undefined : response.body])
    expected.push(
      allows(role, operation.needs)
        ? [operation.name, operation.success(kind), undefined]
        : [operation.name, 403, insufficient(kind, operation.needs)]
    )
  }
  expect(outcomes).toEqual(expected)
}

/** Whether the kind's list, filtered to `word`, shows the resource to `who`. */
const listed = async (kind: Kind, who: Person, word: string, id: string) => {
  const page = ok<ResourcePage>(`listing ${kind.name}s`, await call("GET", `${kind.base}?q=${word}`, who), 200)
  return page.items.some((item) => item.id === id)
}

type GrantKind = "direct" | "team" | "org-wide"
const grantKinds: ReadonlyArray<GrantKind> = ["direct", "team", "org-wide"]

/** A grant for alice of each kind: to her, to her team, or to the whole organization. */
const target = (grantKind: GrantKind) =>
  grantKind === "direct" ? { orgMembershipId: alice.membership.id } : grantKind === "team" ? { teamId: team.id } : { orgWide: true }

const grant = async (kind: Kind, id: string, grantKind: GrantKind, role: AccessRole): Promise<string> =>
  ok<GrantMade>(`granting ${role} on a ${kind.name}`, await call("POST", `${kind.base}/${id}/access`, org.owner, { ...target(grantKind), role }), 201).item.id

// The matrix ------------------------------------------------------------------------------------------------------

const matrix: ReadonlyArray<{ readonly grantKind: GrantKind | "none"; readonly role: AccessRole | undefined; readonly label: string }> = [
  ...grantKinds.flatMap((grantKind) => AccessRoles.map((role) => ({ grantKind, role, label: `a ${grantKind} ${role} grant` }))),
  { grantKind: "none", role: undefined, label: "no grant" }
]

describe.each(kinds)("a plain member on a $name", (kind) => {
  // One resource per case, all made (and granted) up front, named after one word: one list read shows which are visible.
  const word = `w${unique()}`
  const ids = new Map<string, string>()
  const visible = new Set<string>()
  beforeAll(async () => {
    await Promise.all(matrix.map(async ({ grantKind, label, role }) => {
      const id = await kind.create(org.owner, word)
      if (grantKind !== "none" && role !== undefined) await grant(kind, id, grantKind, role)
      ids.set(label, id)
    }))
    const page = ok<ResourcePage>(`listing ${kind.name}s`, await call("GET", `${kind.base}?q=${word}&limit=100`, alice), 200)
    for (const item of page.items) visible.add(item.id)
  })

  it.each(matrix)("with $label: lists, reads, edits and manages exactly as the role allows", async ({ label, role }) => {
    const id = ids.get(label)!
    expect(visible.has(id)).toBe(role !== undefined)
    await expectOutcomes(kind, id, alice, role)
  })
})

describe.each(kinds)("owners and admins on a $name", (kind) => {
  it.each(["owner", "admin"] as const)("the %s manages it without any grant", async (actor) => {
    // Made by someone else, so that the actor holds no grant of their own on it.
    const creator = kind.memberCreates ? alice : actor === "owner" ? org.admin : org.owner
    const word = `w${unique()}`
    const id = await kind.create(creator, word)
    const grants = ok<GrantPage>("listing grants", await call("GET", `${kind.base}/${id}/access`, org[actor]), 200)
    expect(grants.items.map((g) => [g.orgMembershipId, g.role])).toEqual([[creator.membership.id, "manager"]])
    expect(await listed(kind, org[actor], word, id)).toBe(true)
    ok("granting", await call("POST", `${kind.base}/${id}/access`, org[actor], { teamId: team.id, role: "viewer" }), 201)
    await expectOutcomes(kind, id, org[actor], "manager")
  })
})

describe.each(kinds)("revoking a grant on a $name", (kind) => {
  it.each(grantKinds)("of kind %s stops it applying at once; the record stays", async (grantKind) => {
    const word = `w${unique()}`
    const id = await kind.create(org.owner, word)
    const grantId = await grant(kind, id, grantKind, "editor")
    expect((await send(alice, kind.edit(id))).status).toBe(kind.edited)
    expect((await call("DELETE", `${kind.base}/${id}/access/${grantId}`, org.owner)).status).toBe(204)
    const read = await call("GET", `${kind.base}/${id}`, alice)
    expect([read.status, read.body]).toEqual([403, insufficient(kind, "viewer")])
    expect(await listed(kind, alice, word, id)).toBe(false)
    expect((await call("DELETE", `${kind.base}/${id}/access/${grantId}`, org.owner)).status).toBe(204)
    const kept = ok<GrantPage>("listing revoked grants", await call("GET", `${kind.base}/${id}/access?includeRevoked=true`, org.owner), 200)
    expect(kept.items.find((g) => g.id === grantId)).toMatchObject({ role: "editor", removedAt: expect.any(String) })
  })
})

describe.each(kinds)("another organization's $name", (kind) => {
  it("answers 404 to that organization's owner and members, for every operation", async () => {
    const id = await kind.create(org.owner, `w${unique()}`)
    const grantId = await grant(kind, id, "direct", "viewer")
    const requests: ReadonlyArray<Request> = [
      ...operations.map((operation) => operation.request(kind, id)),
      { method: "POST", path: `${kind.base}/${id}/access`, body: { orgMembershipId: other.member.membership.id, role: "manager" } },
      { method: "DELETE", path: `${kind.base}/${id}/access/${grantId}` }
    ]
    for (const outsider of [other.owner, other.member]) {
      for (const request of requests) {
        const response = await send(outsider, request)
        expect([request.method, request.path, response.status, response.body])
          .toEqual([request.method, request.path, 404, expect.objectContaining({ error: kind.notFound })])
      }
    }
    // Nothing changed: the grant still applies.
    expect((await call("GET", `${kind.base}/${id}`, alice)).status).toBe(200)
  })
})

// The viewer fallbacks --------------------------------------------------------------------------------------------

const [configObjectKind, pluginKind, marketplaceKind] = kinds

describe("the marketplace fallback", () => {
  it.each(AccessRoles)("a %s of a marketplace views its plugins, and nothing more, while they are listed in it", async (role) => {
    const word = `w${unique()}`
    const pluginId = await pluginKind.create(org.owner, word)
    const marketplaceId = await marketplaceKind.create(org.owner, `w${unique()}`)
    ok("listing the plugin", await call("POST", `/v1/marketplaces/${marketplaceId}/plugins`, org.owner, { pluginId }), 201)
    await grant(marketplaceKind, marketplaceId, "team", role)
    expect(await listed(pluginKind, alice, word, pluginId)).toBe(true)
    await expectOutcomes(pluginKind, pluginId, alice, "viewer")

    // Taken out of the marketplace: no longer; listed again: again; the marketplace deleted: no longer.
    const read = () => call("GET", `/v1/plugins/${pluginId}`, alice).then((response) => response.status)
    expect((await call("DELETE", `/v1/marketplaces/${marketplaceId}/plugins/${pluginId}`, org.owner)).status).toBe(204)
    expect(await read()).toBe(403)
    expect(await listed(pluginKind, alice, word, pluginId)).toBe(false)
    ok("listing the plugin again", await call("POST", `/v1/marketplaces/${marketplaceId}/plugins`, org.owner, { pluginId }), 201)
    expect(await read()).toBe(200)
    ok("deleting the marketplace", await call("DELETE", `/v1/marketplaces/${marketplaceId}`, org.owner), 200)
    expect(await read()).toBe(403)
  })
})

describe("the plugin fallback", () => {
  it.each(AccessRoles)("a %s of a plugin views its config objects, and nothing more, while they are in it", async (role) => {
    const word = `w${unique()}`
    const configObjectId = await configObjectKind.create(org.owner, word)
    const pluginId = await pluginKind.create(org.owner, `w${unique()}`)
    ok("adding the object", await call("POST", `/v1/plugins/${pluginId}/config-objects`, org.owner, { configObjectId }), 201)
    await grant(pluginKind, pluginId, "direct", role)
    expect(await listed(configObjectKind, alice, word, configObjectId)).toBe(true)
    await expectOutcomes(configObjectKind, configObjectId, alice, "viewer")

    const read = () => call("GET", `/v1/config-objects/${configObjectId}`, alice).then((response) => response.status)
    expect((await call("DELETE", `/v1/plugins/${pluginId}/config-objects/${configObjectId}`, org.owner)).status).toBe(204)
    expect(await read()).toBe(403)
    ok("adding the object again", await call("POST", `/v1/plugins/${pluginId}/config-objects`, org.owner, { configObjectId }), 201)
    expect(await read()).toBe(200)
    ok("deleting the plugin", await call("DELETE", `/v1/plugins/${pluginId}`, org.owner), 200)
    expect(await read()).toBe(403)
  })

  it("reaches through a marketplace: a viewer of a marketplace views the config objects of its plugins", async () => {
    const configObjectId = await configObjectKind.create(org.owner, `w${unique()}`)
    const pluginId = await pluginKind.create(org.owner, `w${unique()}`)
    const marketplaceId = await marketplaceKind.create(org.owner, `w${unique()}`)
    ok("adding the object", await call("POST", `/v1/plugins/${pluginId}/config-objects`, org.owner, { configObjectId }), 201)
    ok("listing the plugin", await call("POST", `/v1/marketplaces/${marketplaceId}/plugins`, org.owner, { pluginId }), 201)
    expect((await call("GET", `/v1/config-objects/${configObjectId}`, alice)).status).toBe(403)
    await grant(marketplaceKind, marketplaceId, "org-wide", "viewer")
    await expectOutcomes(configObjectKind, configObjectId, alice, "viewer")
  })
})
