/**
 * SAML connections over HTTP, against the testkit's samlify IdP on loopback: the IdP's settings resolved at create and
 * update (metadata URL fetched, metadata XML parsed) with the certificates' expiry and the latest fetch shown, and
 * bad metadata refused with a 400 on its field, saving nothing. One server and one IdP for the file.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as TestServer from "../support/HttpServer.js"
import * as NodeCrypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
let idp: IdpSaml.IdpSaml
beforeAll(async () => {
  server = await TestServer.start({ defaultPlan: "enterprise", outboundAllowPrivate: true })
  idp = await IdpSaml.start({ users: { ada: { email: "ada@acme.test" } } })
})
afterAll(async () => {
  await idp?.close()
  await server?.close()
})

const { get, post } = Http.verbs(() => server.url)
const patch = (path: string, options: Http.Options) => Http.request(server.url, "PATCH", path, options)

describe("SAML connection settings", () => {
  it("by metadata URL: the IdP's entity id, SSO URL, binding and certificate with its expiry, and the fetch recorded", async () => {
    const org = await Http.owner(server.url)
    const created = await post("/v1/sso/connections", { token: org.token, body: { kind: "saml", name: "IdP", saml: { source: "metadataUrl", url: idp.metadataUrl } } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const certificate = new NodeCrypto.X509Certificate(idp.certificates()[0]!)
    expect(created.body.connection.saml).toMatchObject({
      source: "metadataUrl",
      metadataUrl: idp.metadataUrl,
      entityId: idp.entityId,
      ssoUrl: idp.ssoUrl,
      ssoBinding: "redirect",
      certificates: [{ subject: "CN=orgplane test IdP", notAfter: new Date(certificate.validTo).toISOString() }],
      metadataRefresh: { ok: true, message: null }
    })
    const id = created.body.connection.id
    expect(created.body.connection.sp).toMatchObject({ entityId: `${server.url}/v1/sso/saml/${id}/metadata`, acsUrl: `${server.url}/v1/sso/saml/${id}/acs` })
    expect((await get(`/v1/sso/connections/${id}`, { token: org.token })).body.connection).toEqual(created.body.connection)

    // The same URL again is no settings change; the XML instead is (a new revision to test).
    const same = await patch(`/v1/sso/connections/${id}`, { token: org.token, body: { saml: { source: "metadataUrl", url: idp.metadataUrl } } })
    expect(same.body.connection.configRevision).toBe(1)
    const byXml = await patch(`/v1/sso/connections/${id}`, { token: org.token, body: { saml: { source: "metadataXml", xml: idp.metadata() } } })
    expect(byXml.status, JSON.stringify(byXml.body)).toBe(200)
    expect(byXml.body.connection).toMatchObject({ configRevision: 2, saml: { source: "metadataXml", entityId: idp.entityId, metadataRefresh: null } })
  })

  it("bad metadata is a 400 on its field, and nothing is saved", async () => {
    const org = await Http.owner(server.url)
    const attempt = (saml: unknown) => post("/v1/sso/connections", { token: org.token, body: { kind: "saml", name: "IdP", saml } })
    const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<string>, string]> = [
      [{ source: "metadataXml", xml: "<not-closed>" }, ["saml", "xml"], "(metadata_not_xml)"],
      [{ source: "metadataXml", xml: `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${idp.metadata()}` }, ["saml", "xml"], "(metadata_doctype)"],
      [{ source: "metadataXml", xml: idp.metadata().replace(/<ds:X509Certificate>[^<]{40}/, "<ds:X509Certificate>AAAA") }, ["saml", "xml"], "(certificate_invalid)"],
      [{ source: "metadataUrl", url: `${idp.url}/missing` }, ["saml", "url"], "(metadata_unreachable)"],
      [{ source: "metadataUrl", url: "http://127.0.0.1:1/metadata" }, ["saml", "url"], "(metadata_unreachable)"]
    ]
    for (const [saml, path, code] of cases) {
      const answer = await attempt(saml)
      expect(answer.status, JSON.stringify(answer.body)).toBe(400)
      expect(answer.body.error).toBe("invalid_request")
      expect(answer.body.details[0].path).toEqual(path)
      expect(answer.body.details[0].message).toContain(code)
    }
    expect((await get("/v1/sso/connections", { token: org.token })).body.connections).toEqual([])
  })
})
