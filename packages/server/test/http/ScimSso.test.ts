/**
 * Directory provisioning and SSO agree, against a real OpenID Provider on loopback: a person the directory provisions
 * signs in through the organization's SSO connection as that very member; one it deactivates or deletes cannot, nor
 * come back by JIT, until it reactivates them; nor by having their account deleted (issue 45, item 2).
 */
import type { ScimConflictResponse, ScimUserResponse, SsoCallbackResult } from "@orgplane/schema"
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "oidc-client-secret-value"
let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let idp: IdpOidc.IdpOidc
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

const { get, post } = Http.verbs(() => server.url)
const api = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)
const USER = "urn:ietf:params:scim:schemas:core:2.0:User"
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

/** A SCIM User the directory's request answered with `status` (fails the test on any other answer). */
const scimUser = (response: Http.RawResponse, status: number) => Http.expectStatus<typeof ScimUserResponse.Encoded>("SCIM User", response, status)

let subjects = 0
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/** Signs `email` in through SSO: the exchange's answer, or the callback's refusal. */
const ssoSignIn = async (email: string) => {
  const started = await api.ssoSignIn.start({ payload: { email } })
  expect(started.status, started.text).toBe(201)
  const callback = await idp.signIn(ok(started, 201).authorizationUrl, { as: email })
  const answered = await Http.request(callback.url, "GET", "")
  if (answered.status !== 200) return { refused: answered } as const
  const { code } = Http.expectStatus<typeof SsoCallbackResult.Encoded>("callback", answered, 200)
  if (code === null) throw new Error(`the callback answered no code: ${answered.text}`)
  const exchanged = await api.ssoSignIn.exchange({ payload: { code } })
  expect(exchanged.status, exchanged.text).toBe(200)
  return { session: ok(exchanged, 200).session.token } as const
}

/** An enterprise organization with a verified domain, an active OIDC connection serving it and a SCIM connection. */
const organization = async (directorySettings: Parameters<typeof Http.scimDirectory>[2] = {}) => {
  const domain = `corp-${unique()}.test`
  // The owner's email is of the domain: the connection's test must be completed by the admin who starts it.
  const ownerEmail = account(`admin@${domain}`)
  const signedUp = await api.users.signUp({ payload: { email: ownerEmail, password: "correct horse battery", name: "Owner" } })
  const owner = { token: ok(signedUp, 201).session.token }
  expect((await api.organizations.create({ token: owner.token, payload: { name: `Org ${domain}` } })).status).toBe(201)
  const created = await api.sso.createConnection({
    token: owner.token,
    payload: { kind: "oidc", name: "Loopback IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  })
  expect(created.status, created.text).toBe(201)
  const connectionId: string = ok(created, 201).connection.id
  const record = ok(await api.sso.requestDomainVerification({ token: owner.token, query: { domain } }), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await api.sso.verifyDomain({ token: owner.token, query: { domain } })).status).toBe(200)
  const started = ok(await api.sso.startTest({ token: owner.token, path: { connectionId } }), 201)
  const callback = await idp.signIn(started.authorizationUrl, { as: ownerEmail })
  expect(Http.expectStatus<typeof SsoCallbackResult.Encoded>("test callback", await Http.request(callback.url, "GET", ""), 200).test?.status).toBe("succeeded")
  expect((await api.sso.activateConnection({ token: owner.token, path: { connectionId } })).status).toBe(200)
  const directory = await Http.scimDirectory(server.url, owner.token, directorySettings)
  const scim = (method: string, path: string, body?: unknown) =>
    Http.request(server.url, method, `${directory.base}${path}`, {
      token: directory.token,
      headers: { "content-type": "application/scim+json" },
      ...(body === undefined ? {} : { body })
    })
  return { owner, domain, scim }
}

describe("SCIM and SSO", { timeout: 60_000 }, () => {
  it("a person the directory provisions signs in through SSO as that member; deactivated or deleted, they cannot, JIT included", async () => {
    const org = await organization()
    const email = account(`pat@${org.domain}`)
    const provisioned = await org.scim("POST", "/Users", {
      schemas: [USER],
      userName: email,
      externalId: "00u-pat",
      name: { givenName: "Pat", familyName: "Provisioned" },
      emails: [{ value: email, type: "work", primary: true }],
      active: true
    })
    expect(provisioned.status, provisioned.text).toBe(201)
    const memberId: string = scimUser(provisioned, 201).id

    const first = await ssoSignIn(email)
    expect(first.session, JSON.stringify(first.refused?.body)).toBeDefined()
    const me = ok(await api.users.me({ token: first.session! }), 200)
    expect(me.membership).toMatchObject({ id: memberId, role: "member" })
    const members = ok(await api.members.list({ token: org.owner.token, query: { limit: "100" } }), 200).items
    expect(members.filter((member) => member.email === email).map((member) => member.id)).toEqual([memberId])

    // Deactivated: the session stops at once, and signing in again is refused, not answered by JIT.
    const deactivate = { schemas: [PATCH_OP], Operations: [{ op: "replace", value: { active: false } }] }
    expect((await org.scim("PATCH", `/Users/${memberId}`, deactivate)).status).toBe(200)
    expect((await get("/v1/me", { token: first.session! })).status).toBe(401)
    const refused = await ssoSignIn(email)
    expect(refused.refused?.status).toBe(401)
    expect(refused.refused?.body).toMatchObject({ error: "sso_sign_in_failed", code: "identity_deprovisioned" })

    // Reactivated: the same member again.
    const reactivate = { schemas: [PATCH_OP], Operations: [{ op: "Replace", path: "active", value: "True" }] }
    expect((await org.scim("PATCH", `/Users/${memberId}`, reactivate)).status).toBe(200)
    const again = await ssoSignIn(email)
    expect(ok(await api.users.me({ token: again.session! }), 200).membership?.id).toBe(memberId)

    // Deleted: removed, and JIT does not bring them back.
    expect((await org.scim("DELETE", `/Users/${memberId}`)).status).toBe(204)
    const afterDelete = await ssoSignIn(email)
    expect(afterDelete.refused?.body).toMatchObject({ code: "identity_deprovisioned" })
    const listed = ok(await api.members.list({ token: org.owner.token, query: { includeRemoved: "true", limit: "100" } }), 200).items
    expect(listed.filter((member) => member.email === email).map((member) => member.id)).toEqual([memberId])
  })

  it("a deactivated person whose account is deleted is still refused by SSO, not made again by JIT; provisioned again, they are the new member", async () => {
    const operator = await Http.operator(server.url)
    const org = await organization()
    const email = account(`dana@${org.domain}`)
    const user = { schemas: [USER], userName: email, name: { givenName: "Dana", familyName: "Deleted" }, active: true }
    const provisioned = await org.scim("POST", "/Users", user)
    expect(provisioned.status, provisioned.text).toBe(201)
    const provisionedId = scimUser(provisioned, 201).id
    expect((await ssoSignIn(email)).session).toBeDefined()
    const deactivate = { schemas: [PATCH_OP], Operations: [{ op: "replace", value: { active: false } }] }
    expect((await org.scim("PATCH", `/Users/${provisionedId}`, deactivate)).status).toBe(200)
    const accountId = ok(await api.members.get({ token: org.owner.token, path: { memberId: provisionedId } }), 200).member.userId
    if (typeof accountId !== "string") throw new Error(`the provisioned member has no account: ${String(accountId)}`)

    // The operator deletes the account: the directory's deactivation still holds for that identity (before the
    // deletion kept such links, this sign-in made a new account by JIT and a member of it).
    const deleted = await api.admin.deleteUser({ token: operator.token, path: { userId: accountId } })
    expect(deleted.status, deleted.text).toBe(200)
    expect(ok(deleted, 200).removed).toMatchObject({ ssoLinks: 0, scimUsers: 1 })
    const refused = await ssoSignIn(email)
    expect(refused.refused?.body).toMatchObject({ error: "sso_sign_in_failed", code: "identity_deprovisioned" })

    // The directory provisions them again (the deleted User answers 404 to it): a new account, which SSO signs in.
    expect((await org.scim("GET", `/Users/${provisionedId}`)).status).toBe(404)
    const again = await org.scim("POST", "/Users", user)
    expect(again.status, again.text).toBe(201)
    const signedIn = await ssoSignIn(email)
    expect(signedIn.session, JSON.stringify(signedIn.refused?.body)).toBeDefined()
    const me = ok(await api.users.me({ token: signedIn.session! }), 200)
    expect(me.membership?.id).toBe(scimUser(again, 201).id)
    expect(me.user.id).not.toBe(accountId)
  })
})

describe("a directory provisions only its own people (issue 55, item 2)", { timeout: 60_000 }, () => {
  const user = (email: string) => ({ schemas: [USER], userName: email, emails: [{ value: email, type: "work", primary: true }], active: true })

  it("takes back an account an outsider made with a new hire's address of its verified domain: the outsider keeps no way in", async () => {
    const org = await organization({ defaultRole: "admin" })
    const hire = `hire-${unique()}@${org.domain}`
    const outsider = ok(await api.users.signUp({ payload: { email: hire, password: "outsider chose this", name: "Outsider" } }), 201)
    const outsiderKey = ok(await api.organizations.create({ token: outsider.session.token, payload: { name: "Outsider's" } }), 201)
    const key = ok(await api.apiKeys.create({ token: outsider.session.token, payload: { name: "kept" } }), 201).key
    expect(outsiderKey.organization.id).toBeDefined()

    const provisioned = await org.scim("POST", "/Users", user(hire))
    expect(provisioned.status, provisioned.text).toBe(201)
    // The outsider's session, key and password reach nothing: not the admin membership the directory made for the hire.
    expect((await get("/v1/me", { token: outsider.session.token })).status).toBe(401)
    expect((await get("/v1/me", { apiKey: key })).status).toBe(401)
    expect((await post("/v1/auth/sign-in", { body: { email: hire, password: "outsider chose this" } })).status).toBe(401)
    // The hire signs in through the organization's SSO as the member the directory made.
    account(hire)
    const signedIn = await ssoSignIn(hire)
    expect(ok(await api.users.me({ token: signedIn.session! }), 200).membership).toMatchObject({ id: scimUser(provisioned, 201).id, role: "admin" })
  })

  it("refuses to provision onto an unproven account of an address outside its verified domains (409 uniqueness), making nobody a member", async () => {
    const org = await organization({ defaultRole: "admin" })
    const contractor = `contractor-${unique()}@elsewhere.test`
    const outsider = ok(await api.users.signUp({ payload: { email: contractor, password: "outsider chose this", name: "Outsider" } }), 201)
    const refused = await org.scim("POST", "/Users", user(contractor))
    const error = Http.expectStatus<typeof ScimConflictResponse.Encoded>("provision", refused, 409)
    expect([refused.status, error.scimType]).toEqual([409, "uniqueness"])
    expect(error.detail).toMatch(/has not proven/)
    // The outsider is a member of nothing, and their account is as it was.
    expect(ok(await api.users.listOrganizations({ token: outsider.session.token }), 200).items).toEqual([])
  })

  it("refuses an owner's password reset link for an account the directory made, which has no password of its own (409 account_without_password)", async () => {
    const org = await organization()
    const person = `directory-made-${unique()}@${org.domain}`
    const provisioned = await org.scim("POST", "/Users", user(person))
    expect(provisioned.status, provisioned.text).toBe(201)
    const refused = await api.recovery.issueMemberPasswordReset({ token: org.owner.token, path: { memberId: scimUser(provisioned, 201).id } })
    expect(refused.status, refused.text).toBe(409)
    expect(refusal(refused, 409)).toMatchObject({ error: "account_without_password" })
  })
})
