/** SCIM Users and discovery through HTTP, as Okta and Entra send them: members appear, change, are suspended and go. */
import {
  ScimBadRequestResponse,
  ScimConflictResponse,
  ScimForbiddenResponse,
  ScimIdempotencyKeyReusedResponse,
  ScimInternalErrorResponse,
  ScimMethodNotAllowedResponse,
  ScimNotFoundResponse,
  ScimPayloadTooLargeResponse,
  ScimPreconditionFailedResponse,
  ScimResourceTypeList,
  ScimResourceTypeResponse,
  ScimSchemaList,
  ScimSchemaResponse,
  ScimServiceProviderConfigResponse,
  ScimServiceUnavailableResponse,
  ScimUnauthorizedResponse,
  ScimUnsupportedMediaTypeResponse,
  ScimUriTooLongResponse,
  ScimUserList,
  ScimUserResponse
} from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import { wireBody } from "../../../../packages/testkit/src/WireBody.js"
import * as TestServer from "../support/HttpServer.js"
import { readFile } from "node:fs/promises"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ defaultPlan: "enterprise" })
})
afterAll(() => server?.close())

const api = calls(() => server.url)

/** The SCIM documents the server answers, read as their schemas put them on the wire. */
const asUser = wireBody(ScimUserResponse, "SCIM User")
const asUsers = wireBody(ScimUserList, "SCIM User list")
const asSchema = wireBody(ScimSchemaResponse, "SCIM schema")
const asSchemas = wireBody(ScimSchemaList, "SCIM schema list")
const asResourceType = wireBody(ScimResourceTypeResponse, "SCIM resource type")
const asResourceTypes = wireBody(ScimResourceTypeList, "SCIM resource type list")
const asServiceProviderConfig = wireBody(ScimServiceProviderConfigResponse, "SCIM service provider configuration")
const asScimError = wireBody(
  Schema.Union([
    ScimBadRequestResponse,
    ScimUnauthorizedResponse,
    ScimForbiddenResponse,
    ScimNotFoundResponse,
    ScimMethodNotAllowedResponse,
    ScimConflictResponse,
    ScimPreconditionFailedResponse,
    ScimPayloadTooLargeResponse,
    ScimUriTooLongResponse,
    ScimUnsupportedMediaTypeResponse,
    ScimIdempotencyKeyReusedResponse,
    ScimInternalErrorResponse,
    ScimServiceUnavailableResponse
  ]),
  "SCIM error"
)

/** A resource's `meta.version`, which every User the server answers carries. */
const versionOf = (resource: { readonly meta: { readonly version?: string | undefined } }) => {
  if (resource.meta.version === undefined) throw new Error("the resource has no meta.version")
  return resource.meta.version
}

const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
const scimJson = { "content-type": "application/scim+json" }

/** An organization with a SCIM connection and a token of it, made through the management API. */
const directory = async (defaultRole: "admin" | "member" = "member") => {
  const org = await Http.staffed(server.url)
  const { base, connection, token } = await Http.scimDirectory(server.url, org.owner.token, { defaultRole })
  const secret = token
  const call = (method: string, path: string, options: Http.Options = {}) =>
    Http.request(server.url, method, `${base}${path}`, {
      token: secret,
      ...options,
      headers: { ...(options.body === undefined ? {} : scimJson), ...options.headers }
    })
  return { org, connection, secret, base, call }
}

type Directory = Awaited<ReturnType<typeof directory>>

let people = 0
const newUser = (overrides: Record<string, unknown> = {}) => {
  const email = `person${++people}.${Math.random().toString(36).slice(2, 8)}@corp.example`
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName: email,
    name: { givenName: "Pat", familyName: `Person${people}` },
    emails: [{ value: email, type: "work", primary: true }],
    active: true,
    ...overrides
  }
}

const createUser = async (scim: Directory, overrides: Record<string, unknown> = {}) =>
  asUser(await scim.call("POST", "/Users", { body: newUser(overrides) }), 201)

const patchOp = (...Operations: ReadonlyArray<unknown>) => ({
  schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
  Operations
})

const expectScimError = (response: Http.RawResponse, status: number, scimType?: string) => {
  expect(response.status, response.text).toBe(status)
  expect(response.headers.get("content-type")).toContain("application/scim+json")
  expect(response.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status) })
  // Every refusal is a SCIM error body of the protocol's schemas, whatever its status.
  const error = asScimError(response)
  if (scimType !== undefined) expect(error.scimType).toBe(scimType)
}

const members = async (scim: Directory) =>
  ok(await api.members.list({ token: scim.org.owner.token, query: { limit: "100" } }), 200).items

describe("SCIM discovery", () => {
  it("advertises what works, generated from the attribute table", async () => {
    const scim = await directory()
    const config = await scim.call("GET", "/ServiceProviderConfig")
    expect(config.status).toBe(200)
    expect(config.headers.get("content-type")).toContain("application/scim+json")
    expect(config.body).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 1000 },
      changePassword: { supported: false },
      sort: { supported: false },
      etag: { supported: true },
      authenticationSchemes: [{ type: "oauthbearertoken" }]
    })
    const schemas = await scim.call("GET", "/Schemas")
    expect(asSchemas(schemas).Resources.map((schema) => schema.id)).toEqual([
      "urn:ietf:params:scim:schemas:core:2.0:User",
      enterprise,
      "urn:ietf:params:scim:schemas:core:2.0:Group"
    ])
    const user = await scim.call("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User")
    expect(asSchema(user).attributes.find((attribute) => attribute.name === "userName")).toMatchObject({
      required: true,
      uniqueness: "server",
      caseExact: false
    })
    expect(asSchema(user).attributes.map((attribute) => attribute.name)).not.toContain("password")
    expect(asSchema(user).meta.location).toBe(`${server.url}${scim.base}/Schemas/urn:ietf:params:scim:schemas:core:2.0:User`)
    const types = await scim.call("GET", "/ResourceTypes")
    expect(asResourceTypes(types).Resources.map((type) => [type.name, type.endpoint])).toEqual([["User", "/Users"], ["Group", "/Groups"]])
    expect(asResourceType(await scim.call("GET", "/ResourceTypes/User")).schemaExtensions).toEqual([{ schema: enterprise, required: false }])
    expectScimError(await scim.call("GET", "/Schemas/urn:example:nothing"), 404)
    expectScimError(await scim.call("GET", "/ResourceTypes/Device"), 404)
  })

  it("says that a User needs an email, in the User schema and on the page ServiceProviderConfig leads to", async () => {
    const scim = await directory()
    const user = asSchema(await scim.call("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User"), 200)
    const rule = /A User needs an email/
    expect(user.description).toMatch(rule)
    expect(user.attributes.find((attribute) => attribute.name === "emails")?.description).toMatch(rule)
    expect(user.attributes.find((attribute) => attribute.name === "userName")?.description).toMatch(/email/)
    const { documentationUri } = asServiceProviderConfig(await scim.call("GET", "/ServiceProviderConfig"), 200)
    if (documentationUri === undefined) throw new Error("the ServiceProviderConfig names no documentationUri")
    const [page, section] = documentationUri.replace("https://github.com/orgplane/orgplane/blob/main/", "").split("#")
    const text = await readFile(new URL(`../../../../${page}`, import.meta.url), "utf8")
    // The section the link names holds the rule (GitHub's anchor of a heading: lowercase, spaces as dashes).
    const heading = text.split("\n").find((line) => /^#+ /.test(line) && line.replace(/^#+ /, "").toLowerCase().replaceAll(" ", "-") === section)
    expect(heading, `no heading for #${section} in ${page}`).toBeDefined()
    expect(text.slice(text.indexOf(heading!)).split(/\n## /)[0]).toMatch(rule)
  })

  it("answers root-level /.search (RFC 7644 §3.4.3, optional, not served) with a SCIM 404, as its description says", async () => {
    const scim = await directory()
    expectScimError(await scim.call("POST", "/.search", { body: { schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"] } }), 404)
  })
})

describe("SCIM Users: HTTP around the protocol (RFC 7644 §2, §3.12, §3.14)", () => {
  it("answers If-None-Match naming the User's version with 304, no body and the ETag; another version with the User", async () => {
    const scim = await directory()
    const user = await createUser(scim)
    const same = await scim.call("GET", `/Users/${user.id}`, { headers: { "if-none-match": versionOf(user) } })
    expect([same.status, same.text, same.headers.get("etag")]).toEqual([304, "", user.meta.version])
    const strong = await scim.call("GET", `/Users/${user.id}`, { headers: { "if-none-match": `"x", ${versionOf(user).replace("W/", "")}` } })
    expect(strong.status).toBe(304)
    expect((await scim.call("GET", `/Users/${user.id}`, { headers: { "if-none-match": "*" } })).status).toBe(304)
    const other = await scim.call("GET", `/Users/${user.id}`, { headers: { "if-none-match": "W/\"99\"" } })
    expect([other.status, asUser(other).id, other.headers.get("etag")]).toEqual([200, user.id, user.meta.version])
    // A write changes the version: the old one no longer matches.
    await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "replace", path: "title", value: "Engineer" }) })
    expect(asUser(await scim.call("GET", `/Users/${user.id}`, { headers: { "if-none-match": versionOf(user) } })).title).toBe("Engineer")
  })

  it("a 401 carries the Bearer challenge, with invalid_token once a token was sent", async () => {
    const scim = await directory()
    const none = await Http.request(server.url, "GET", `${scim.base}/Users`)
    expectScimError(none, 401)
    expect(none.headers.get("www-authenticate")).toBe("Bearer realm=\"orgplane SCIM\"")
    const wrong = await Http.request(server.url, "GET", `${scim.base}/Users`, { token: "scim_not-a-token" })
    expectScimError(wrong, 401)
    expect(wrong.headers.get("www-authenticate")).toBe("Bearer realm=\"orgplane SCIM\", error=\"invalid_token\"")
  })

  it("a method a path does not take is a SCIM 405 with Allow", async () => {
    const scim = await directory()
    const response = await scim.call("DELETE", "/ServiceProviderConfig")
    expectScimError(response, 405)
    expect(response.headers.get("allow")).toBe("GET, HEAD")
    const users = await scim.call("PUT", "/Users", { body: newUser() })
    expectScimError(users, 405)
    expect(users.headers.get("allow")).toBe("GET, HEAD, POST")
  })
})

describe("SCIM Users: Okta", () => {
  it("filters by userName with startIndex/count, creates, deactivates with PATCH and replaces with PUT", async () => {
    const scim = await directory()
    const body = newUser({ externalId: "00u1okta" })
    const probe = await scim.call(
      "GET",
      `/Users?filter=${encodeURIComponent(`userName eq "${body.userName.toUpperCase()}"`)}&startIndex=1&count=100`
    )
    expect(probe.status).toBe(200)
    expect(probe.body).toEqual({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 0,
      startIndex: 1,
      itemsPerPage: 0,
      Resources: []
    })

    const created = await scim.call("POST", "/Users", { body: { ...body, password: "Secret-Passw0rd" } })
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("content-type")).toContain("application/scim+json")
    const user = asUser(created)
    expect(user.id).toMatch(/^om_/)
    expect(user).toMatchObject({ userName: body.userName, externalId: "00u1okta", active: true, name: body.name, emails: body.emails })
    expect(user).not.toHaveProperty("password")
    expect(user.meta).toMatchObject({ resourceType: "User", version: "W/\"1\"", location: `${server.url}${scim.base}/Users/${user.id}` })

    const member = (await members(scim)).find((entry) => entry.id === user.id)
    expect(member).toMatchObject({ role: "member", email: body.userName })
    // The audit log names the directory as the actor and whom it provisioned, found by the member's id.
    const provisioned = await api.audit.listEvents({ token: scim.org.owner.token, query: { action: "scim.user.provision", targetId: user.id } })
    expect(ok(provisioned, 200).items.map((event) => [event.actor.type, event.actor.id, event.targets.map((target) => target.type)])).toEqual([
      ["scim", scim.connection.id, ["scim_connection", "member", "user"]]
    ])

    const found = await scim.call("GET", `/Users?filter=${encodeURIComponent(`userName eq "${body.userName.toUpperCase()}"`)}&startIndex=1&count=100`)
    expect(asUsers(found).totalResults).toBe(1)
    expect(asUsers(found).Resources[0]?.id).toBe(user.id)

    const deactivated = await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "replace", value: { active: false } }) })
    expect(deactivated.status, deactivated.text).toBe(200)
    expect(asUser(deactivated).active).toBe(false)
    expect(asUser(deactivated).meta.version).toBe("W/\"2\"")

    const replaced = await scim.call("PUT", `/Users/${user.id}`, {
      body: {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        id: user.id,
        userName: body.userName,
        externalId: "00u1okta",
        name: { givenName: "Patricia", familyName: "Person" },
        emails: [{ value: body.userName, type: "work", primary: true }],
        active: true,
        password: "An0ther-Secret"
      }
    })
    expect(replaced.status, replaced.text).toBe(200)
    expect(replaced.body).toMatchObject({ active: true, name: { givenName: "Patricia", familyName: "Person" } })
    expect(replaced.body).not.toHaveProperty("password")
    expect(replaced.body).not.toHaveProperty("title")

    const read = await scim.call("GET", `/Users/${user.id}`)
    expect(read.body).toEqual(replaced.body)
  })

  it("pages with 1-based startIndex and count, totalResults counting every match", async () => {
    const scim = await directory()
    const ids: Array<string> = []
    for (let index = 0; index < 3; index++) ids.push((await createUser(scim)).id)
    const page = await scim.call("GET", "/Users?startIndex=2&count=1")
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 })
    expect(asUsers(page).Resources.map((user) => user.id)).toEqual([ids[1]])
    const counted = await scim.call("GET", "/Users?count=0")
    expect(counted.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, Resources: [] })
    const past = await scim.call("GET", "/Users?startIndex=10")
    expect(past.body).toMatchObject({ totalResults: 3, itemsPerPage: 0, startIndex: 10 })
    const lenient = await scim.call("GET", "/Users?startIndex=0&count=5000")
    expect(lenient.body).toMatchObject({ totalResults: 3, startIndex: 1, itemsPerPage: 3 })
    expectScimError(await scim.call("GET", "/Users?count=many"), 400, "invalidValue")

    const searched = await scim.call("POST", "/Users/.search", {
      body: { schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], filter: "active eq true", startIndex: 3, count: 10, attributes: ["userName"] }
    })
    expect(searched.status, searched.text).toBe(200)
    expect(asUsers(searched).Resources.map((user) => Object.keys(user).sort())).toEqual([["id", "meta", "schemas", "userName"]])
  })
})

describe("SCIM Users: Entra", () => {
  it("takes capitalised ops, \"False\" strings, dotted keys and the enterprise manager path", async () => {
    const scim = await directory()
    const manager = await createUser(scim)
    const body = newUser({ externalId: "7f3c-entra" })
    const probe = await scim.call("GET", `/Users?filter=${encodeURIComponent(`userName eq "${body.userName}"`)}`)
    expect(asUsers(probe).totalResults).toBe(0)
    const user = await createUser(scim, body)

    const patched = await scim.call("PATCH", `/Users/${user.id}`, {
      body: patchOp(
        { op: "Replace", path: "displayName", value: "Pat P." },
        { op: "Replace", value: { "name.givenName": "Patty", "emails[type eq \"work\"].value": body.userName.toUpperCase() } },
        { op: "Add", path: `${enterprise}:manager`, value: manager.id },
        { op: "Add", path: `${enterprise}:department`, value: "Research" },
        { op: "Replace", path: "active", value: "False" }
      )
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({
      displayName: "Pat P.",
      name: { givenName: "Patty", familyName: body.name.familyName },
      emails: [{ value: body.userName.toUpperCase(), type: "work", primary: true }],
      active: false,
      [enterprise]: { manager: { value: manager.id }, department: "Research" }
    })
    expect(asUser(patched).schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:User", enterprise])

    const byEmail = await scim.call("GET", `/Users?filter=${encodeURIComponent(`emails[type eq "work" and value co "${body.userName.slice(0, 9)}"]`)}`)
    expect(asUsers(byEmail).Resources.map((found) => found.id)).toEqual([user.id])
    const inactive = await scim.call("GET", `/Users?filter=${encodeURIComponent("active eq false and displayName sw \"pat\"")}`)
    expect(asUsers(inactive).Resources.map((found) => found.id)).toEqual([user.id])
    const byDepartment = await scim.call("GET", `/Users?filter=${encodeURIComponent(`${enterprise}:department eq "research"`)}`)
    expect(asUsers(byDepartment).totalResults).toBe(1)

    const restored = await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "Replace", path: "active", value: "True" }) })
    expect(asUser(restored).active).toBe(true)
  })
})

describe("SCIM Users: projection, ETags, uniqueness and deletion", () => {
  it("projects by attributes and excludedAttributes; id, schemas and meta always", async () => {
    const scim = await directory()
    const user = await createUser(scim, { externalId: "proj-1" })
    const only = await scim.call("GET", `/Users/${user.id}?attributes=userName,name.givenName`)
    expect(only.body).toEqual({ schemas: user.schemas, id: user.id, userName: user.userName, name: { givenName: "Pat" }, meta: user.meta })
    const without = await scim.call("GET", `/Users/${user.id}?excludedAttributes=emails,name,meta`)
    expect(without.body).not.toHaveProperty("emails")
    expect(without.body).not.toHaveProperty("name")
    expect(asUser(without).meta).toEqual(user.meta)
    const listed = await scim.call("GET", "/Users?attributes=externalId")
    expect(asUsers(listed).Resources).toEqual([{ schemas: user.schemas, id: user.id, externalId: "proj-1", meta: user.meta }])
  })

  it("If-Match with another version is 412; the current one or * passes", async () => {
    const scim = await directory()
    const user = await createUser(scim)
    const first = await scim.call("PATCH", `/Users/${user.id}`, {
      body: patchOp({ op: "replace", path: "title", value: "Engineer" }),
      headers: { "if-match": "W/\"1\"" }
    })
    expect(first.status, first.text).toBe(200)
    expect(asUser(first).meta.version).toBe("W/\"2\"")
    expectScimError(
      await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "replace", path: "title", value: "Boss" }), headers: { "if-match": "W/\"1\"" } }),
      412
    )
    expectScimError(await scim.call("PUT", `/Users/${user.id}`, { body: newUser(), headers: { "if-match": "\"7\"" } }), 412)
    expectScimError(await scim.call("DELETE", `/Users/${user.id}`, { headers: { "if-match": "W/\"1\"" } }), 412)
    const star = await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "remove", path: "title" }), headers: { "if-match": "*" } })
    expect(star.status).toBe(200)
    expect(star.body).not.toHaveProperty("title")
  })

  it("a duplicate userName (any case) or externalId is 409 uniqueness", async () => {
    const scim = await directory()
    const user = await createUser(scim, { externalId: "dup-1" })
    expectScimError(await scim.call("POST", "/Users", { body: newUser({ userName: user.userName?.toUpperCase() }) }), 409, "uniqueness")
    expectScimError(await scim.call("POST", "/Users", { body: newUser({ externalId: "dup-1" }) }), 409, "uniqueness")
    const other = await createUser(scim)
    expectScimError(
      await scim.call("PATCH", `/Users/${other.id}`, { body: patchOp({ op: "replace", path: "userName", value: user.userName }) }),
      409,
      "uniqueness"
    )
  })

  it("DELETE removes the membership, keeps the account, and the User is gone", async () => {
    const scim = await directory()
    const user = await createUser(scim)
    const deleted = await scim.call("DELETE", `/Users/${user.id}`)
    expect(deleted.status, deleted.text).toBe(204)
    expectScimError(await scim.call("GET", `/Users/${user.id}`), 404)
    expectScimError(await scim.call("DELETE", `/Users/${user.id}`), 404)
    expect((await members(scim)).map((member) => member.id)).not.toContain(user.id)
    expect(asUsers(await scim.call("GET", "/Users")).totalResults).toBe(0)
    // The directory provisions the person again: a new membership, the same account.
    const again = await scim.call("POST", "/Users", { body: newUser({ userName: user.userName, emails: user.emails }) })
    expect(again.status, again.text).toBe(201)
    expect(asUser(again).id).not.toBe(user.id)
  })

  it("links an existing member whose address the organization proved (its creator) instead of adding a second membership", async () => {
    const scim = await directory()
    const existing = scim.org.owner
    const email = existing.email
    const linked = await scim.call("POST", "/Users", { body: newUser({ userName: email, emails: [{ value: email, primary: true }] }) })
    expect(linked.status, linked.text).toBe(201)
    expect(asUser(linked).id).toBe(existing.membership.id)
  })

  it("refuses to link a member who joined by a shown invitation, whose address nobody proved, of no domain the organization verified (409 uniqueness)", async () => {
    const scim = await directory()
    const existing = scim.org.member
    const refused = await scim.call("POST", "/Users", { body: newUser({ userName: existing.email, emails: [{ value: existing.email, primary: true }] }) })
    expectScimError(refused, 409, "uniqueness")
    expect(asScimError(refused).detail).toMatch(/has not proven the address/)
    expect(asUsers(await scim.call("GET", "/Users")).totalResults).toBe(0)
  })
})

describe("SCIM Users: primary (RFC 7643 §2.4, RFC 7644 §3.5.2)", () => {
  const primaries = (user: typeof ScimUserResponse.Encoded) => (user.emails ?? []).filter((email) => email.primary === true).map((email) => email.value)

  it("refuses a User sent with two primary emails with 400 invalidValue, creating nothing", async () => {
    const scim = await directory()
    const body = newUser()
    const twice = { ...body, emails: [...body.emails, { value: `other.${body.userName}`, type: "home", primary: true }] }
    expectScimError(await scim.call("POST", "/Users", { body: twice }), 400, "invalidValue")
    expect(asUsers(await scim.call("GET", "/Users")).totalResults).toBe(0)
    const user = await createUser(scim)
    expectScimError(await scim.call("PUT", `/Users/${user.id}`, { body: { ...twice, userName: user.userName } }), 400, "invalidValue")
  })

  it("a PATCH that makes an email primary makes the other one not, in the answer, the read and the list", async () => {
    const scim = await directory()
    const body = newUser()
    const home = `home.${body.userName}`
    const user = await createUser(scim, { emails: [...body.emails, { value: home, type: "home" }] })
    const patched = await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "replace", path: "emails[type eq \"home\"].primary", value: true }) })
    expect(patched.status, patched.text).toBe(200)
    expect(primaries(asUser(patched))).toEqual([home])
    expect(primaries(asUser(await scim.call("GET", `/Users/${user.id}`)))).toEqual([home])
    const added = await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "add", path: "emails", value: [{ value: `third.${body.userName}`, primary: true }] }) })
    expect(primaries(asUser(added))).toEqual([`third.${body.userName}`])
    expect(asUsers(await scim.call("GET", "/Users")).Resources.map(primaries)).toEqual([[`third.${body.userName}`]])
  })

  it("a User stored with two primary emails (before they were refused) reads with the first one primary", async () => {
    const scim = await directory()
    const user = await createUser(scim)
    const second = { value: `second.${user.userName}`, type: "home", primary: true }
    const emails = JSON.stringify([...(user.emails ?? []), second])
    await server.sql((sql) => sql`UPDATE scim_users SET resource = jsonb_set(resource, '{emails}', ${emails}::jsonb)
                                   WHERE organization_id = ${scim.org.organizationId} AND membership_id = ${user.id}`)
    const read = asUser(await scim.call("GET", `/Users/${user.id}`))
    expect(read.emails).toEqual([user.emails?.[0], { ...second, primary: false }])
    expect(asUsers(await scim.call("GET", "/Users")).Resources[0]?.emails).toEqual(read.emails)
    // A PATCH of something else stores it so.
    const patched = await scim.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "replace", path: "title", value: "Engineer" }) })
    expect([patched.status, asUser(patched).emails]).toEqual([200, read.emails])
  })
})

describe("SCIM Users: bad input is a SCIM 400, never a 500", () => {
  it("malformed filters and filters on attributes the server does not filter on are invalidFilter", async () => {
    const scim = await directory()
    for (const filter of ["userName eq", "userName eq \"a\" and", "((userName eq \"a\")", "nickName eq \"x\"", "active eq \"yes\"", "meta.lastModified gt \"soon\"", "emails[type eq \"work\""]) {
      expectScimError(await scim.call("GET", `/Users?filter=${encodeURIComponent(filter)}`), 400, "invalidFilter")
    }
    expectScimError(await scim.call("POST", "/Users/.search", { body: { filter: "userName zz \"a\"" } }), 400, "invalidFilter")
    const percent = await scim.call("GET", `/Users?filter=${encodeURIComponent("userName co \"%\"")}`)
    expect(asUsers(percent).totalResults).toBe(0)
  })

  it("wrong types, unknown PATCH paths, read-only targets and removes that match nothing", async () => {
    const scim = await directory()
    expectScimError(await scim.call("POST", "/Users", { body: newUser({ active: "maybe" }) }), 400, "invalidValue")
    expectScimError(await scim.call("POST", "/Users", { body: newUser({ userName: 42 }) }), 400, "invalidValue")
    expectScimError(await scim.call("POST", "/Users", { body: { ...newUser(), userName: undefined } }), 400, "invalidValue")
    expectScimError(await scim.call("POST", "/Users", { body: newUser({ userName: "no-email", emails: [] }) }), 400, "invalidValue")
    const user = await createUser(scim)
    const patch = (...operations: ReadonlyArray<unknown>) => scim.call("PATCH", `/Users/${user.id}`, { body: patchOp(...operations) })
    expectScimError(await patch({ op: "add", path: "nickName", value: "x" }), 400, "invalidPath")
    expectScimError(await patch({ op: "replace", path: "id", value: "om_x" }), 400, "mutability")
    expectScimError(await patch({ op: "remove", path: "emails[type eq \"home\"]" }), 400, "noTarget")
    // A replace too (RFC 7644 §3.5.2.3): it adds no value.
    expectScimError(await patch({ op: "replace", path: "emails[type eq \"home\"].value", value: "home@corp.example" }), 400, "noTarget")
    expectScimError(await patch({ op: "replace", path: "active", value: 3 }), 400, "invalidValue")
    expectScimError(await patch({ op: "jump", path: "title", value: "x" }), 400, "invalidSyntax")
    // A refused PATCH changed nothing.
    expect(asUser(await scim.call("GET", `/Users/${user.id}`)).meta.version).toBe("W/\"1\"")
  })

  it("NUL characters, deeply nested JSON, bodies that are no JSON, too large or of another media type: SCIM errors", async () => {
    const scim = await directory()
    expectScimError(await scim.call("POST", "/Users", { body: newUser({ displayName: "a\u0000b" }) }), 400)
    expectScimError(await scim.call("POST", "/Users", { rawBody: `{"userName":${"[".repeat(10_000)}${"]".repeat(10_000)}}` }), 400, "invalidSyntax")
    expectScimError(await scim.call("GET", `/Users?filter=${encodeURIComponent("userName eq \"a\u0000\"")}`), 400)
    expectScimError(await scim.call("POST", "/Users", { rawBody: "{\"userName\": " }), 400, "invalidSyntax")
    expectScimError(await scim.call("POST", "/Users", { rawBody: JSON.stringify(newUser({ title: "x".repeat(2_000_000) })) }), 413)
    expectScimError(await scim.call("POST", "/Users", { rawBody: "userName=x", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415)
    // Nothing was created by any of them.
    expect(asUsers(await scim.call("GET", "/Users")).totalResults).toBe(0)
  })

  it("a malformed or unknown User id is 404", async () => {
    const scim = await directory()
    expectScimError(await scim.call("GET", "/Users/not-an-id"), 404)
    expectScimError(await scim.call("GET", "/Users/om_01jxxxxxxxxxxxxxxxxxxxxxxx"), 404)
    expectScimError(await scim.call("PATCH", "/Users/nope", { body: patchOp({ op: "replace", path: "title", value: "x" }) }), 404)
  })
})

describe("SCIM Users: tenancy", () => {
  it("a token of another organization or connection never reaches these Users", async () => {
    const a = await directory()
    const b = await directory()
    const user = await createUser(a)
    // B's token on A's connection: 401, whatever the path.
    const foreign = await Http.request(server.url, "GET", `${a.base}/Users/${user.id}`, { token: b.secret })
    expect(foreign.status).toBe(401)
    // B's token on B's connection, asking for A's member: 404, and A's Users are not listed.
    expectScimError(await b.call("GET", `/Users/${user.id}`), 404)
    expectScimError(await b.call("PATCH", `/Users/${user.id}`, { body: patchOp({ op: "replace", path: "active", value: false }) }), 404)
    expectScimError(await b.call("DELETE", `/Users/${user.id}`), 404)
    expect(asUsers(await b.call("GET", "/Users")).totalResults).toBe(0)
    expect(asUser(await a.call("GET", `/Users/${user.id}`)).active).toBe(true)
    const anonymous = await Http.request(server.url, "GET", `${a.base}/Users`)
    expect(anonymous.status).toBe(401)
  })
})
