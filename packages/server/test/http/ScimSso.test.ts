/**
 * Directory provisioning and SSO agree, against a real OpenID Provider on loopback: a person the directory provisions
 * signs in through the organization's SSO connection as that very member; one it deactivates or deletes cannot, nor
 * come back by JIT, until it reactivates them; nor by having their account deleted (issue 45, item 2).
 */
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

const { del, get, post } = Http.verbs(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)
const USER = "urn:ietf:params:scim:schemas:core:2.0:User"
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

let subjects = 0
const account = (email: string) => {
  idp.addAccount(email, { sub: `sub-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
  return email
}

/** Signs `email` in through SSO: the exchange's answer, or the callback's refusal. */
const ssoSignIn = async (email: string) => {
  const started = await post("/v1/sso/sign-in", { body: { email } })
  expect(started.status, started.text).toBe(201)
  const callback = await idp.signIn(started.body.authorizationUrl, { as: email })
  const answered = await Http.request(callback.url, "GET", "")
  if (answered.status !== 200) return { refused: answered } as const
  const exchanged = await post("/v1/sso/sign-in/exchange", { body: { code: answered.body.code } })
  expect(exchanged.status, exchanged.text).toBe(200)
  return { session: exchanged.body.session.token as string } as const
}

/** An enterprise organization with a verified domain, an active OIDC connection serving it and a SCIM connection. */
const organization = async (directorySettings: Parameters<typeof Http.scimDirectory>[2] = {}) => {
  const domain = `corp-${unique()}.test`
  // The owner's email is of the domain: the connection's test must be completed by the admin who starts it.
  const ownerEmail = account(`admin@${domain}`)
  const signedUp = await post("/v1/auth/sign-up", { body: { email: ownerEmail, password: "correct horse battery", name: "Owner" } })
  const owner = { token: signedUp.body.session.token as string }
  expect((await post("/v1/organizations", { token: owner.token, body: { name: `Org ${domain}` } })).status).toBe(201)
  const created = await post("/v1/sso/connections", {
    token: owner.token,
    body: { kind: "oidc", name: "Loopback IdP", domains: [domain], oidc: { issuer: idp.issuer, clientId: "orgplane", clientSecret: SECRET } }
  })
  expect(created.status, created.text).toBe(201)
  const connectionId: string = created.body.connection.id
  const record = (await post(`/v1/sso/request-domain-verification?domain=${domain}`, { token: owner.token })).body.verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await post(`/v1/sso/verify-domain?domain=${domain}`, { token: owner.token })).status).toBe(200)
  const started = await post(`/v1/sso/connections/${connectionId}/tests`, { token: owner.token })
  const callback = await idp.signIn(started.body.authorizationUrl, { as: ownerEmail })
  expect((await Http.request(callback.url, "GET", "")).body.test.status).toBe("succeeded")
  expect((await post(`/v1/sso/connections/${connectionId}/activate`, { token: owner.token })).status).toBe(200)
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
    const memberId: string = provisioned.body.id

    const first = await ssoSignIn(email)
    expect(first.session, JSON.stringify(first.refused?.body)).toBeDefined()
    const me = Http.expectStatus<any>("me", await get("/v1/me", { token: first.session! }), 200)
    expect(me.membership).toMatchObject({ id: memberId, role: "member" })
    const members = Http.expectStatus<any>("members", await get("/v1/members?limit=100", { token: org.owner.token }), 200).items
    expect(members.filter((member: any) => member.email === email).map((member: any) => member.id)).toEqual([memberId])

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
    expect(Http.expectStatus<any>("me", await get("/v1/me", { token: again.session! }), 200).membership.id).toBe(memberId)

    // Deleted: removed, and JIT does not bring them back.
    expect((await org.scim("DELETE", `/Users/${memberId}`)).status).toBe(204)
    const afterDelete = await ssoSignIn(email)
    expect(afterDelete.refused?.body).toMatchObject({ code: "identity_deprovisioned" })
    const listed = Http.expectStatus<any>("members", await get("/v1/members?includeRemoved=true&limit=100", { token: org.owner.token }), 200).items
    expect(listed.filter((member: any) => member.email === email).map((member: any) => member.id)).toEqual([memberId])
  })

  it("a deactivated person whose account is deleted is still refused by SSO, not made again by JIT; provisioned again, they are the new member", async () => {
    const operator = await Http.operator(server.url)
    const org = await organization()
    const email = account(`dana@${org.domain}`)
    const user = { schemas: [USER], userName: email, name: { givenName: "Dana", familyName: "Deleted" }, active: true }
    const provisioned = await org.scim("POST", "/Users", user)
    expect(provisioned.status, provisioned.text).toBe(201)
    expect((await ssoSignIn(email)).session).toBeDefined()
    const deactivate = { schemas: [PATCH_OP], Operations: [{ op: "replace", value: { active: false } }] }
    expect((await org.scim("PATCH", `/Users/${provisioned.body.id}`, deactivate)).status).toBe(200)
    const accountId = Http.expectStatus<any>("member", await get(`/v1/members/${provisioned.body.id}`, { token: org.owner.token }), 200).member.userId

    // The operator deletes the account: the directory's deactivation still holds for that identity (before the
    // deletion kept such links, this sign-in made a new account by JIT and a member of it).
    const deleted = await del(`/v1/admin/users/${accountId}`, { token: operator.token })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body.removed).toMatchObject({ ssoLinks: 0, scimUsers: 1 })
    const refused = await ssoSignIn(email)
    expect(refused.refused?.body).toMatchObject({ error: "sso_sign_in_failed", code: "identity_deprovisioned" })

    // The directory provisions them again (the deleted User answers 404 to it): a new account, which SSO signs in.
    expect((await org.scim("GET", `/Users/${provisioned.body.id}`)).status).toBe(404)
    const again = await org.scim("POST", "/Users", user)
    expect(again.status, again.text).toBe(201)
    const signedIn = await ssoSignIn(email)
    expect(signedIn.session, JSON.stringify(signedIn.refused?.body)).toBeDefined()
    const me = Http.expectStatus<any>("me", await get("/v1/me", { token: signedIn.session! }), 200)
    expect(me.membership.id).toBe(again.body.id)
    expect(me.user.id).not.toBe(accountId)
  })
})

describe("a directory provisions only its own people (issue 55, item 2)", { timeout: 60_000 }, () => {
  const user = (email: string) => ({ schemas: [USER], userName: email, emails: [{ value: email, type: "work", primary: true }], active: true })

  it("takes back an account an outsider made with a new hire's address of its verified domain: the outsider keeps no way in", async () => {
    const org = await organization({ defaultRole: "admin" })
    const hire = `hire-${unique()}@${org.domain}`
    const outsider = Http.expectStatus<any>("sign-up", await post("/v1/auth/sign-up", { body: { email: hire, password: "outsider chose this", name: "Outsider" } }), 201)
    const outsiderKey = Http.expectStatus<any>("org", await post("/v1/organizations", { token: outsider.session.token, body: { name: "Outsider's" } }), 201)
    const key = Http.expectStatus<any>("key", await post("/v1/api-keys", { token: outsider.session.token, body: { name: "kept" } }), 201).key as string
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
    expect(Http.expectStatus<any>("me", await get("/v1/me", { token: signedIn.session! }), 200).membership).toMatchObject({ id: provisioned.body.id, role: "admin" })
  })

  it("refuses to provision onto an unproven account of an address outside its verified domains (409 uniqueness), making nobody a member", async () => {
    const org = await organization({ defaultRole: "admin" })
    const contractor = `contractor-${unique()}@elsewhere.test`
    const outsider = Http.expectStatus<any>("sign-up", await post("/v1/auth/sign-up", { body: { email: contractor, password: "outsider chose this", name: "Outsider" } }), 201)
    const refused = await org.scim("POST", "/Users", user(contractor))
    expect([refused.status, refused.body.scimType]).toEqual([409, "uniqueness"])
    expect(refused.body.detail).toMatch(/has not proven/)
    // The outsider is a member of nothing, and their account is as it was.
    expect(Http.expectStatus<any>("orgs", await get("/v1/me/organizations", { token: outsider.session.token }), 200).items).toEqual([])
  })

  it("links an account whose email is proven, keeping its password", async () => {
    const org = await organization()
    const person = account(`proven-${unique()}@${org.domain}`)
    const invited = await post("/v1/invitations", { token: org.owner.token, body: { email: person, role: "member" } })
    const accepted = Http.expectStatus<any>("accept", await post("/v1/invitations/accept", { body: { token: invited.body.inviteToken, signUp: { name: "Proven", password: "proven own password" } } }), 200)
    // Proven to the whole instance by an SSO sign-in; the directory then provisions the person's existing membership.
    expect((await ssoSignIn(person)).session).toBeDefined()
    const provisioned = await org.scim("POST", "/Users", user(person))
    expect(provisioned.status, provisioned.text).toBe(201)
    expect(provisioned.body.id).toBe(accepted.membership.id)
    expect((await post("/v1/auth/sign-in", { body: { email: person, password: "proven own password" } })).status).toBe(200)
  })

  it("refuses an owner's password reset link for an account the directory made, which has no password of its own (409 account_without_password)", async () => {
    const org = await organization()
    const person = `directory-made-${unique()}@${org.domain}`
    const provisioned = await org.scim("POST", "/Users", user(person))
    expect(provisioned.status, provisioned.text).toBe(201)
    const refused = await post(`/v1/members/${provisioned.body.id}/password-reset`, { token: org.owner.token })
    expect([refused.status, refused.body.error]).toEqual([409, "account_without_password"])
  })
})
