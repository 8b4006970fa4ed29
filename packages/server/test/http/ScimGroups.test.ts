/**
 * SCIM Groups through HTTP, as Okta and Entra send them: the three group mapping modes, the teams and roles that
 * follow, ETags, uniqueness, tenancy, hostile input and a 10,000-member PATCH.
 */
import { ScimBadRequestResponse, ScimConflictResponse, ScimGroupList, ScimGroupResponse, ScimNotFoundResponse, ScimPreconditionFailedResponse, ScimUnauthorizedResponse } from "@orgplane/schema"
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import { wireBody } from "../../../../packages/testkit/src/WireBody.js"
import * as Schema from "effect/Schema"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ defaultPlan: "enterprise" })
})
afterAll(async () => {
  await server?.close()
})

const { post } = Http.verbs(() => server.url)
const api = calls(() => server.url)
const patch = (path: string, options: Http.Options) => Http.request(server.url, "PATCH", path, options)

const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
const USER = "urn:ietf:params:scim:schemas:core:2.0:User"
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"

/** A Group, a ListResponse of Groups and a SCIM error as the server sends them. */
const asGroup = wireBody(ScimGroupResponse, "SCIM Group")
const asGroups = wireBody(ScimGroupList, "SCIM Group list")
const asScimError = wireBody(
  Schema.Union([ScimBadRequestResponse, ScimUnauthorizedResponse, ScimNotFoundResponse, ScimConflictResponse, ScimPreconditionFailedResponse]),
  "SCIM error"
)

type Mode = "metadata_only" | "create_teams" | "link_by_external_key"

/** An organization with a SCIM connection in `mode` and a token; `scim` speaks the protocol as a directory does. */
const directory = async (mode: Mode, roleRules: ReadonlyArray<{ group: string; role: "admin" | "member" }> = []) => {
  const owner = await Http.owner(server.url, `SCIM ${mode}`)
  const { base, connection, token } = await Http.scimDirectory(server.url, owner.token, { groupMappingMode: mode, roleRules })
  const scim = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    Http.request(server.url, method, `${base}${path}`, {
      token,
      headers: { "content-type": "application/scim+json", ...headers },
      ...(body === undefined ? {} : { body })
    })
  let users = 0
  const user = async (active = true) => {
    const email = `person${++users}.${Math.random().toString(36).slice(2, 8)}@corp.example`
    const response = await scim("POST", "/Users", {
      schemas: [USER],
      userName: email,
      externalId: `ext-${email}`,
      name: { givenName: "Person", familyName: `${users}` },
      emails: [{ value: email, type: "work", primary: true }],
      active
    })
    return Http.expectStatus<{ id: string }>("create user", response, 201).id
  }
  const team = async (teamId: string | undefined) => {
    if (teamId === undefined) throw new Error("no such team")
    return ok(await api.teams.get({ token: owner.token, path: { teamId } }), 200).team
  }
  const teams = async () => ok(await api.teams.list({ token: owner.token, query: { limit: "100" } }), 200).items
  const teamNamed = async (name: string) => (await teams()).find((team) => team.name === name)
  return { owner, connection, base, scim, user, team, teams, teamNamed }
}

/** A resource's `meta.version`, which every Group the server answers carries. */
const versionOf = (resource: { readonly meta: { readonly version?: string | undefined } }) => {
  if (resource.meta.version === undefined) throw new Error("the resource has no meta.version")
  return resource.meta.version
}

const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()
const memberValues = (group: typeof ScimGroupResponse.Encoded) => sorted((group.members ?? []).map((member) => member.value))

describe("SCIM Groups, create_teams (Okta group push)", () => {
  it("creates a team per group whose members follow the group: POST, PATCH add and remove, PUT rename, DELETE", async () => {
    const dir = await directory("create_teams")
    const [a, b, c] = [await dir.user(), await dir.user(), await dir.user()]

    const created = await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Engineering", externalId: "okta-eng", members: [{ value: a }] })
    expect(created.status).toBe(201)
    expect(created.headers.get("content-type")).toContain("application/scim+json")
    const group = asGroup(created)
    expect(group).toMatchObject({ schemas: [GROUP], displayName: "Engineering", externalId: "okta-eng", meta: { resourceType: "Group", version: 'W/"1"' } })
    expect(group.id).toMatch(/^scg_/)
    expect(group.members).toEqual([expect.objectContaining({ value: a })])
    const teamId = (await dir.teamNamed("Engineering"))?.id
    expect(teamId).toBeDefined()
    expect((await dir.team(teamId)).memberIds).toEqual([a])

    // Okta adds and removes members with PATCH.
    expect((await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "add", path: "members", value: [{ value: b }, { value: c }] }]
    })).status).toBe(200)
    expect(sorted((await dir.team(teamId)).memberIds)).toEqual(sorted([a, b, c]))
    const removed = await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "remove", path: `members[value eq "${a}"]` }]
    })
    expect(removed.status).toBe(200)
    expect(memberValues(asGroup(removed))).toEqual(sorted([b, c]))
    expect(sorted((await dir.team(teamId)).memberIds)).toEqual(sorted([b, c]))

    // A rename is a PUT: the created team is renamed with it, the members replaced.
    const renamed = await dir.scim("PUT", `/Groups/${group.id}`, {
      schemas: [GROUP],
      id: group.id,
      displayName: "Platform Engineering",
      externalId: "okta-eng",
      members: [{ value: c }]
    })
    expect(renamed.status).toBe(200)
    expect(asGroup(renamed).meta.version).toBe('W/"4"')
    expect(await dir.team(teamId)).toMatchObject({ name: "Platform Engineering", memberIds: [c] })

    // The team is the directory's: manual edits are refused.
    const manual = await api.teams.update({ token: dir.owner.token, path: { teamId }, payload: { name: "Mine" } })
    expect(manual.status).toBe(409)
    expect(refusal(manual, 409)).toMatchObject({ error: "team_managed_by_directory" })
    expect((await Http.request(server.url, "DELETE", `/v1/teams/${teamId}`, { token: dir.owner.token })).status).toBe(409)

    // DELETE releases the team as an ordinary team.
    expect((await dir.scim("DELETE", `/Groups/${group.id}`)).status).toBe(204)
    expect((await dir.scim("GET", `/Groups/${group.id}`)).status).toBe(404)
    expect(await dir.team(teamId)).toMatchObject({ name: "Platform Engineering", memberIds: [c] })
    expect((await patch(`/v1/teams/${teamId}`, { token: dir.owner.token, body: { name: "Mine now" } })).status).toBe(200)
  })

  it("names the team \"<name> (SCIM)\" when the organization has a team of that name", async () => {
    const dir = await directory("create_teams")
    Http.expectStatus("team", await post("/v1/teams", { token: dir.owner.token, body: { name: "Design" } }), 201)
    expect((await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Design" })).status).toBe(201)
    expect(await dir.teamNamed("Design (SCIM)")).toBeDefined()
  })
})

describe("SCIM Groups, members the directory suspends", () => {
  it("leave the directory's teams at once, come back when restored, and leave for good when deleted", async () => {
    const dir = await directory("create_teams")
    const [a, b] = [await dir.user(), await dir.user()]
    const group = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Research", members: [{ value: a }, { value: b }] }))
    const teamId = (await dir.teamNamed("Research"))?.id
    expect(sorted((await dir.team(teamId)).memberIds)).toEqual(sorted([a, b]))

    const active = (value: unknown) => ({ schemas: [PATCH_OP], Operations: [{ op: "Replace", path: "active", value }] })
    expect((await dir.scim("PATCH", `/Users/${a}`, active("False"))).status).toBe(200)
    expect((await dir.team(teamId)).memberIds).toEqual([b])
    // The group still lists them: it is the directory's record; the team holds its admitted members.
    expect(memberValues(asGroup(await dir.scim("GET", `/Groups/${group.id}`)))).toEqual(sorted([a, b]))

    expect((await dir.scim("PATCH", `/Users/${a}`, active(true))).status).toBe(200)
    expect(sorted((await dir.team(teamId)).memberIds)).toEqual(sorted([a, b]))

    expect((await dir.scim("DELETE", `/Users/${b}`)).status).toBe(204)
    expect((await dir.team(teamId)).memberIds).toEqual([a])
  })
})

describe("SCIM Groups, other modes", () => {
  it("metadata_only keeps groups without teams", async () => {
    const dir = await directory("metadata_only")
    const a = await dir.user()
    const before = (await dir.teams()).length
    const created = await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Everyone", members: [{ value: a }] })
    expect(created.status).toBe(201)
    expect(memberValues(asGroup(created))).toEqual([a])
    expect((await dir.teams()).length).toBe(before)
  })

  it("link_by_external_key maps a group onto the team with its externalId as key, none when there is none", async () => {
    const dir = await directory("link_by_external_key")
    const a = await dir.user()
    const key = `team-${Math.random().toString(36).slice(2, 8)}`
    const linked = ok(await api.teams.create({ token: dir.owner.token, payload: { name: "Sales", externalKey: key } }), 201).team
    expect((await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Sales group", externalId: key, members: [{ value: a }] })).status)
      .toBe(201)
    expect(await dir.team(linked.id)).toMatchObject({ name: "Sales", memberIds: [a] })
    const before = (await dir.teams()).length
    expect((await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Unlinked", externalId: "no-such-key" })).status).toBe(201)
    expect((await dir.teams()).length).toBe(before)
  })

  it("gives a role only through an explicit rule, and never demotes the owner", async () => {
    const dir = await directory("metadata_only", [{ group: "Platform Admins", role: "admin" }])
    const [a, b] = [await dir.user(), await dir.user()]
    const role = async (memberId: string) => ok(await api.members.get({ token: dir.owner.token, path: { memberId } }), 200).member.role
    await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Admins", members: [{ value: b }] })
    expect(await role(b)).toBe("member")
    const admins = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "platform admins", members: [{ value: a }] }))
    expect(await role(a)).toBe("admin")
    await dir.scim("PATCH", `/Groups/${admins.id}`, { schemas: [PATCH_OP], Operations: [{ op: "Remove", path: "members" }] })
    expect(await role(a)).toBe("member")
    expect(await role(dir.owner.membership.id)).toBe("owner")
  })
})

describe("SCIM Groups, Entra ID's sequence", () => {
  it("looks a group up by displayName, creates it, lists without members and patches with capitalised ops", async () => {
    const dir = await directory("create_teams")
    const [a, b] = [await dir.user(), await dir.user()]
    const absent = await dir.scim("GET", `/Groups?filter=${encodeURIComponent('displayName eq "Finance"')}`)
    expect(absent.status).toBe(200)
    expect(absent.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: 0, Resources: [] })
    const group = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Finance", externalId: "entra-fin" }), 201)
    const found = await dir.scim("GET", `/Groups?filter=${encodeURIComponent('displayName eq "finance"')}&excludedAttributes=members`)
    expect(asGroups(found).totalResults).toBe(1)
    expect(asGroups(found).Resources[0].id).toBe(group.id)
    expect(asGroups(found).Resources[0].members).toBeUndefined()

    const patched = await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: "Replace", path: "displayName", value: "Finance & Ops" },
        { op: "Add", path: "members", value: [{ value: a }, { value: b }] },
        { op: "Remove", path: `members[value eq "${a}"]` }
      ]
    })
    expect(patched.status).toBe(200)
    expect(asGroup(patched).displayName).toBe("Finance & Ops")
    expect(memberValues(asGroup(patched))).toEqual([b])
    const byMember = await dir.scim("GET", `/Groups?filter=${encodeURIComponent(`members[value eq "${b}"]`)}&attributes=displayName`)
    expect(asGroups(byMember).totalResults).toBe(1)
    // id, schemas and meta always come back; of the rest only what `attributes` names.
    expect(Object.keys(asGroups(byMember).Resources[0]).sort()).toEqual(["displayName", "id", "meta", "schemas"])
    expect(asGroups(byMember).Resources[0]).toMatchObject({ schemas: [GROUP], id: group.id, displayName: "Finance & Ops" })
    const byExternal = await dir.scim("POST", "/Groups/.search", { schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], filter: 'externalId eq "entra-fin"' })
    expect(asGroups(byExternal).totalResults).toBe(1)

    // A no-path replace with an object value (Okta's rename sends its id too).
    const renamed = await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", value: { id: group.id, displayName: "Finance" } }]
    })
    expect(asGroup(renamed).displayName).toBe("Finance")
    expect((await dir.teamNamed("Finance"))?.memberIds).toEqual([b])
  })

  it("pages with 1-based startIndex and count", async () => {
    const dir = await directory("metadata_only")
    for (const name of ["G1", "G2", "G3"]) await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: name })
    const page = await dir.scim("GET", "/Groups?startIndex=2&count=1")
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 })
    expect(asGroups(page).Resources.map((group) => group.displayName)).toEqual(["G2"])
  })
})

describe("SCIM Groups, refusals", () => {
  it("answers 409 uniqueness for a displayName (any case) or externalId the connection has", async () => {
    const dir = await directory("metadata_only")
    await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Ops", externalId: "x-1" })
    for (const body of [{ displayName: "OPS" }, { displayName: "Other", externalId: "x-1" }]) {
      const response = await dir.scim("POST", "/Groups", { schemas: [GROUP], ...body })
      expect(response.status).toBe(409)
      expect(asScimError(response)).toMatchObject({ schemas: [ERROR], status: "409", scimType: "uniqueness" })
    }
  })

  it("answers 412 when If-Match names another version", async () => {
    const dir = await directory("metadata_only")
    const group = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Versioned" }))
    const stale = await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "V2" }]
    }, { "if-match": 'W/"7"' })
    expect(stale.status).toBe(412)
    expect(asScimError(stale)).toMatchObject({ schemas: [ERROR], status: "412" })
    const fresh = await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "replace", path: "displayName", value: "V2" }]
    }, { "if-match": versionOf(group) })
    expect(fresh.status).toBe(200)
    expect(asGroup(fresh).meta.version).toBe('W/"2"')
  })

  it("answers If-None-Match naming the group's version with 304 and no body (RFC 7644 §3.14)", async () => {
    const dir = await directory("metadata_only")
    const group = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Cached" }))
    const same = await dir.scim("GET", `/Groups/${group.id}?excludedAttributes=members`, undefined, { "if-none-match": versionOf(group) })
    expect([same.status, same.text, same.headers.get("etag")]).toEqual([304, "", group.meta.version])
    await dir.scim("PATCH", `/Groups/${group.id}`, { schemas: [PATCH_OP], Operations: [{ op: "replace", path: "displayName", value: "Cached 2" }] })
    const changed = await dir.scim("GET", `/Groups/${group.id}`, undefined, { "if-none-match": versionOf(group) })
    expect([changed.status, asGroup(changed).displayName, changed.headers.get("etag")]).toEqual([200, "Cached 2", 'W/"2"'])
  })

  it("refuses a member that is not a User of the connection with 400 invalidValue, writing nothing", async () => {
    const dir = await directory("create_teams")
    const other = await directory("create_teams")
    const a = await dir.user()
    const foreign = await other.user()
    const group = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Careful", members: [{ value: a }] }))
    for (const value of [foreign, "om_00000000000000000000000000", "not an id"]) {
      const response = await dir.scim("PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "displayName", value: "Changed" }, { op: "add", path: "members", value: [{ value }] }]
      })
      expect(response.status).toBe(400)
      expect(asScimError(response)).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" })
    }
    const after = asGroup(await dir.scim("GET", `/Groups/${group.id}`))
    expect(after).toMatchObject({ displayName: "Careful", meta: { version: 'W/"1"' } })
    expect(memberValues(after)).toEqual([a])
  })

  it("handles a 10,000-member PATCH in one request: refused whole when one member is unknown", async () => {
    const dir = await directory("create_teams")
    const a = await dir.user()
    const group = asGroup(await dir.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Big" }))
    const values = Array.from({ length: 10_000 }, (_, i) => ({ value: i === 0 ? a : `om_${String(i).padStart(26, "0")}` }))
    const refused = await dir.scim("PATCH", `/Groups/${group.id}`, { schemas: [PATCH_OP], Operations: [{ op: "Add", path: "members", value: values }] })
    expect(refused.status).toBe(400)
    expect(asScimError(refused, 400).scimType).toBe("invalidValue")
    expect(asScimError(refused, 400).detail).toContain("9998 more")
    expect(memberValues(asGroup(await dir.scim("GET", `/Groups/${group.id}`)))).toEqual([])
    // The same request with every member a User of the connection (duplicates of one) goes through at once.
    const accepted = await dir.scim("PATCH", `/Groups/${group.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: "Add", path: "members", value: Array.from({ length: 10_000 }, () => ({ value: a })) }]
    })
    expect(accepted.status).toBe(200)
    expect(memberValues(asGroup(accepted))).toEqual([a])
  })
})

describe("SCIM Groups, tenancy", () => {
  it("never shows or changes another connection's or organization's groups", async () => {
    const a = await directory("create_teams")
    const b = await directory("create_teams")
    const group = asGroup(await a.scim("POST", "/Groups", { schemas: [GROUP], displayName: "Secret" }))
    // B's token on A's connection: 401, whatever the path.
    const foreignToken = await Http.request(server.url, "GET", `${a.base}/Groups/${group.id}`, {
      token: ok(await api.scimConnections.createToken({ token: b.owner.token, path: { connectionId: b.connection.id }, payload: { name: "x" } }), 201).token
    })
    expect(foreignToken.status).toBe(401)
    expect(asScimError(foreignToken)).toMatchObject({ schemas: [ERROR], status: "401" })
    // A's group id through B's own connection: 404, and B's list is empty.
    for (const [method, body] of [["GET"], ["PUT", { schemas: [GROUP], displayName: "Mine" }], ["PATCH", { schemas: [PATCH_OP], Operations: [{ op: "remove", path: "members" }] }], ["DELETE"]] as const) {
      const response = await b.scim(method, `/Groups/${group.id}`, body)
      expect(response.status, method).toBe(404)
      expect(asScimError(response)).toMatchObject({ schemas: [ERROR], status: "404" })
    }
    expect(asGroups(await b.scim("GET", "/Groups")).totalResults).toBe(0)
    expect(asGroup(await a.scim("GET", `/Groups/${group.id}`)).displayName).toBe("Secret")
  })
})
