/**
 * SAML connections over HTTP, against the testkit's samlify IdP on loopback: the IdP's settings resolved at create and
 * update (metadata URL fetched, metadata XML parsed) with the certificates' expiry and the latest fetch shown, and
 * bad metadata refused with a 400 on its field, saving nothing. One server and one IdP for the file.
 */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
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

const { post } = Http.verbs(() => server.url)
const { sso } = calls(() => server.url)

describe("SAML connection settings", () => {
  it("by metadata URL: the IdP's entity id, SSO URL, binding and certificate with its expiry, and the fetch recorded", async () => {
    const org = await Http.owner(server.url)
    const created = ok(await sso.createConnection({ token: org.token, payload: { kind: "saml", name: "IdP", saml: { source: "metadataUrl", url: idp.metadataUrl } } }), 201)
    const certificate = new NodeCrypto.X509Certificate(idp.certificates()[0]!)
    expect(created.connection.saml).toMatchObject({
      source: "metadataUrl",
      metadataUrl: idp.metadataUrl,
      entityId: idp.entityId,
      ssoUrl: idp.ssoUrl,
      ssoBinding: "redirect",
      certificates: [{ subject: "CN=orgplane test IdP", notAfter: new Date(certificate.validTo).toISOString() }],
      metadataRefresh: { ok: true, message: null }
    })
    const connectionId = created.connection.id
    const id = connectionId
    expect(created.connection.sp).toMatchObject({ entityId: `${server.url}/v1/sso/saml/${id}/metadata`, acsUrl: `${server.url}/v1/sso/saml/${id}/acs` })
    expect(ok(await sso.getConnection({ token: org.token, path: { connectionId } }), 200).connection).toEqual(created.connection)

    // The same URL again is no settings change; the XML instead is (a new revision to test).
    const same = ok(await sso.updateConnection({ token: org.token, path: { connectionId }, payload: { saml: { source: "metadataUrl", url: idp.metadataUrl } } }), 200)
    expect(same.connection.configRevision).toBe(1)
    const byXml = ok(await sso.updateConnection({ token: org.token, path: { connectionId }, payload: { saml: { source: "metadataXml", xml: idp.metadata() } } }), 200)
    expect(byXml.connection).toMatchObject({ configRevision: 2, saml: { source: "metadataXml", entityId: idp.entityId, metadataRefresh: null } })
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
      const refused = invalid(answer)
      expect(refused.error).toBe("invalid_request")
      expect(refused.details[0]?.path).toEqual(path)
      expect(refused.details[0]?.message).toContain(code)
    }
    expect(ok(await sso.listConnections({ token: org.token }), 200).connections).toEqual([])
  })
})
