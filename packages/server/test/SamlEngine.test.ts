/**
 * The SAML engine (`sso/Saml.ts`) against the real samlify IdP of the testkit on loopback: metadata by URL, XML and
 * by hand; the SP metadata the IdP registers us by; an SP-initiated sign-in read into a profile; and every refusal
 * with its code, each its own test: those node-saml makes (signatures, wrapping, times, audience, InResponseTo, IdP
 * errors) and those the engine adds (SHA-1, Destination, Recipient, Issuer, IdP-initiated, RelayState, replay).
 * One IdP for the file; the certificate rotation runs last (it changes the IdP's signing key).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeCrypto from "node:crypto"
import * as Zlib from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as IdpSaml from "../../../packages/testkit/src/IdpSaml.js"
import * as SamlTamper from "../../../packages/testkit/src/SamlTamper.js"
import * as AddressGuard from "../src/platform/AddressGuard.js"
import * as Outbound from "../src/platform/Outbound.js"
import { type Expected, Saml, type SamlService, type SpSettings } from "../src/sso/Saml.js"
import { type IdpSettings, manualSettings, maxMetadataBytes } from "../src/sso/SamlMetadata.js"

const SP_ENTITY = "https://orgplane.test/v1/sso/saml/ssc_test/metadata"
const ACS = "https://orgplane.test/v1/sso/saml/ssc_test/acs"
const sp: SpSettings = { entityId: SP_ENTITY, acsUrl: ACS, allowIdpInitiated: false, relayStateAllowList: [] }

const runtime = ManagedRuntime.make(
  Saml.layer.pipe(Layer.provide(Outbound.layer({ allowPrivate: true, timeout: "5 seconds" })), Layer.provide(AddressGuard.systemLayer))
)
const run = <A, E>(effect: Effect.Effect<A, E, Saml>) => runtime.runPromise(effect)
/** The failure's code and message (the test fails if the effect succeeds). */
const refusal = <A>(effect: Effect.Effect<A, { readonly code: string; readonly message: string }, Saml>) =>
  run(Effect.flip(effect)).then((error) => ({ code: error.code, message: error.message }))

let saml: SamlService
let idp: IdpSaml.IdpSaml
let settings: IdpSettings

beforeAll(async () => {
  saml = await run(Effect.service(Saml))
  idp = await IdpSaml.start({
    serviceProviders: [{ metadata: await Effect.runPromise(saml.spMetadata(sp)) }],
    users: {
      ada: { email: "ada@acme.test", name: "Ada Lovelace", givenName: "Ada", surname: "Lovelace", groups: ["engineering", "admins"] },
      mallory: { email: "mallory@acme.test", name: "Mallory" }
    }
  })
  settings = await run(saml.fetchIdpMetadata(idp.metadataUrl))
})
afterAll(async () => {
  await idp?.close()
  await runtime.dispose()
})

/** An SP-initiated sign-in through the IdP; `validate` posts what the browser would, expecting this request by default. */
const signIn = async (options: IdpSaml.ResponseOptions = {}, spSettings: SpSettings = sp, idpSettings: IdpSettings = settings) => {
  const start = await run(saml.startSignIn(idpSettings, spSettings, "relay-1"))
  if (start.binding !== "redirect") throw new Error("expected the HTTP-Redirect binding")
  const post = await idp.signIn(start.url, options)
  const expected: Expected = { requestId: start.requestId }
  return {
    start,
    post,
    validate: (expect: Expected = expected, form: IdpSaml.AcsPost["form"] = post.form) => run(saml.validateResponse(idpSettings, spSettings, form, expect)),
    refused: (expect: Expected = expected, form: IdpSaml.AcsPost["form"] = post.form) => refusal(saml.validateResponse(idpSettings, spSettings, form, expect))
  }
}

const form = (xml: string) => ({ SAMLResponse: Buffer.from(xml, "utf8").toString("base64") })

describe("IdP settings", () => {
  it("reads the IdP's metadata by URL: entity id, SSO URL (HTTP-Redirect preferred) and its certificate with expiry", async () => {
    expect(settings).toMatchObject({ entityId: idp.entityId, ssoUrl: idp.ssoUrl, ssoBinding: "redirect" })
    expect(settings.certificates).toHaveLength(1)
    const certificate = new NodeCrypto.X509Certificate(idp.certificates()[0]!)
    expect(settings.certificates[0]).toMatchObject({ notAfter: new Date(certificate.validTo), fingerprintSha256: certificate.fingerprint256 })
    expect(settings.certificates[0]!.notAfter.getTime()).toBeGreaterThan(Date.now())
    // The same from the XML, and by hand from the PEM.
    expect(await run(saml.parseIdpMetadata(idp.metadata()))).toEqual(settings)
    expect(await run(manualSettings({ entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: idp.certificates() }))).toEqual(settings)
  })

  it("HTTP-POST when the IdP offers no HTTP-Redirect endpoint", async () => {
    const postOnly = idp.metadata().replace(/<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"[^>]*><\/SingleSignOnService>/, "")
    expect(postOnly).not.toMatch(/SingleSignOnService Binding="[^"]*HTTP-Redirect/)
    const parsed = await run(saml.parseIdpMetadata(postOnly))
    expect(parsed.ssoBinding).toBe("post")
    const start = await run(saml.startSignIn(parsed, sp, "relay-post"))
    expect(start).toMatchObject({ binding: "post", url: idp.ssoUrl, form: { RelayState: "relay-post" } })
    if (start.binding !== "post") return
    const post = await idp.signIn({ SAMLRequest: start.form.SAMLRequest!, RelayState: start.form.RelayState! }, { as: "ada" })
    expect((await run(saml.validateResponse(parsed, sp, post.form, { requestId: start.requestId }))).email).toBe("ada@acme.test")
  })

  it("metadata that is not XML, has a DOCTYPE, describes no IdP, or is too large: refused with its code", async () => {
    expect(await refusal(saml.parseIdpMetadata("not xml at all"))).toMatchObject({ code: "metadata_not_xml" })
    expect(await refusal(saml.parseIdpMetadata("<a><b></a>"))).toMatchObject({ code: "metadata_not_xml" })
    const doctype = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${idp.metadata().replace(/^<\?xml[^>]*\?>/, "")}`
    expect(await refusal(saml.parseIdpMetadata(doctype))).toEqual({
      code: "metadata_doctype",
      message: "The metadata has a DOCTYPE, which is refused (entity expansion, XXE)."
    })
    const spOnly = await Effect.runPromise(saml.spMetadata(sp))
    expect(await refusal(saml.parseIdpMetadata(spOnly))).toMatchObject({ code: "metadata_no_idp" })
    expect(await refusal(saml.parseIdpMetadata("<root xmlns=\"urn:other\"/>"))).toMatchObject({ code: "metadata_no_idp" })
    expect(await refusal(saml.parseIdpMetadata(`<!-- ${"x".repeat(maxMetadataBytes)} -->${idp.metadata()}`))).toMatchObject({ code: "metadata_too_large" })
  })

  it("metadata with a certificate that does not parse: refused", async () => {
    const [certificate] = idp.metadata().match(/<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/)!.slice(1)
    const broken = idp.metadata().replace(certificate!, certificate!.slice(0, 40) + "AAAA" + certificate!.slice(80))
    expect(await refusal(saml.parseIdpMetadata(broken))).toEqual({ code: "certificate_invalid", message: "Certificate 1 does not parse as an X.509 certificate." })
    const notBase64 = idp.metadata().replace(certificate!, "this is not a certificate")
    expect(await refusal(saml.parseIdpMetadata(notBase64))).toMatchObject({ code: "certificate_invalid" })
  })

  it("manual settings: 1..n certificates, each must parse; the URL must be http(s)", async () => {
    expect(await refusal(manualSettings({ entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: [] }))).toMatchObject({ code: "metadata_invalid" })
    expect(await refusal(manualSettings({ entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: [idp.certificates()[0]!, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"] })))
      .toEqual({ code: "certificate_invalid", message: "Certificate 2 does not parse as an X.509 certificate." })
    expect(await refusal(manualSettings({ entityId: idp.entityId, ssoUrl: "javascript:alert(1)", certificates: idp.certificates() }))).toMatchObject({ code: "metadata_invalid" })
    expect(await refusal(manualSettings({ entityId: " ", ssoUrl: idp.ssoUrl, certificates: idp.certificates() }))).toMatchObject({ code: "metadata_invalid" })
  })

  it("a metadata URL that does not answer, answers an error, or answers something that is not metadata", async () => {
    expect(await refusal(saml.fetchIdpMetadata("http://127.0.0.1:1/metadata"))).toMatchObject({ code: "metadata_unreachable" })
    expect(await refusal(saml.fetchIdpMetadata(`${idp.url}/no-such-path`))).toMatchObject({ code: "metadata_unreachable" })
    expect(await refusal(saml.fetchIdpMetadata("ftp://127.0.0.1/metadata"))).toMatchObject({ code: "metadata_unreachable" })
  })

  it("the metadata URL is fetched through the outbound guard: a loopback IdP is refused outside private mode", async () => {
    const guarded = ManagedRuntime.make(Saml.layer.pipe(Layer.provide(Outbound.layer()), Layer.provide(AddressGuard.systemLayer)))
    try {
      const error = await guarded.runPromise(Effect.flip(Effect.flatMap(Effect.service(Saml), (engine) => engine.fetchIdpMetadata(idp.metadataUrl))))
      expect(error).toMatchObject({ code: "metadata_unreachable", message: expect.stringContaining(Outbound.notAllowed) })
    } finally {
      await guarded.dispose()
    }
  })
})

describe("SP metadata and the AuthnRequest", () => {
  it("publishes entity id, ACS URL (HTTP-POST), NameID format and signed assertions wanted", async () => {
    const xml = await Effect.runPromise(saml.spMetadata(sp))
    expect(xml).toContain(`entityID="${SP_ENTITY}"`)
    expect(xml).toContain(`Location="${ACS}"`)
    expect(xml).toContain("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST")
    expect(xml).toContain("<NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>")
    expect(xml).toContain(`WantAssertionsSigned="true"`)
  })

  it("startSignIn: the HTTP-Redirect URL to the IdP, carrying a request with a fresh id each time", async () => {
    const first = await run(saml.startSignIn(settings, sp, "relay-x"))
    const second = await run(saml.startSignIn(settings, sp, null))
    expect(first.requestId).not.toBe(second.requestId)
    expect(first.requestId).toMatch(/^_[0-9a-f]{40}$/)
    const url = new URL(first.url)
    expect(url.origin + url.pathname).toBe(idp.ssoUrl)
    expect(url.searchParams.get("RelayState")).toBe("relay-x")
    const request = Zlib.inflateRawSync(Buffer.from(url.searchParams.get("SAMLRequest")!, "base64")).toString("utf8")
    expect(request).toContain(`ID="${first.requestId}"`)
    expect(request).toContain(`AssertionConsumerServiceURL="${ACS}"`)
    expect(request).not.toContain("RequestedAuthnContext")
    expect(new URL(second.url).searchParams.has("RelayState")).toBe(false)
  })
})

describe("a valid Response", () => {
  it("SP-initiated: the profile with NameID, email (verified), names, groups and raw attributes", async () => {
    const { start, validate } = await signIn({ as: "ada" })
    const profile = await validate()
    expect(profile).toMatchObject({
      subject: "ada@acme.test",
      nameIdFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      email: "ada@acme.test",
      emailVerified: true,
      name: "Ada Lovelace",
      givenName: "Ada",
      familyName: "Lovelace",
      groups: ["engineering", "admins"],
      issuer: idp.entityId,
      inResponseTo: start.requestId,
      relayState: "relay-1"
    })
    expect(profile.attributes).toMatchObject({ email: ["ada@acme.test"], groups: ["engineering", "admins"] })
    expect(profile.assertionId).toMatch(/./)
    expect(profile.notOnOrAfter!.getTime()).toBeGreaterThan(Date.now())
  })

  it("a mapping names the attribute read first, the usual names after it", async () => {
    const mapped = await signIn({ as: "ada" }, { ...sp, mapping: { name: "givenName", groups: "nothing-here", email: "absent" } })
    expect(await mapped.validate()).toMatchObject({ name: "Ada", groups: ["engineering", "admins"], email: "ada@acme.test" })
    idp.addUser("bare", { email: "bare@acme.test" })
    const bare = await signIn({ as: "bare" }, { ...sp, mapping: { email: "absent" } })
    expect(await bare.validate()).toMatchObject({ email: "bare@acme.test", name: null, groups: [] })
  })
})

describe("refused Responses, each with its code", () => {
  it("unsigned assertion (every signature removed): signature_invalid", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "unsigned" } })).refused()).toMatchObject({ code: "signature_invalid" })
  })

  it("a signed Response around an unsigned assertion: signature_invalid (assertions must be signed)", async () => {
    expect(await (await signIn({ as: "ada", signAssertion: false })).refused()).toMatchObject({ code: "signature_invalid" })
  })

  it("content altered after signing: signature_invalid", async () => {
    expect(await (await signIn({ as: "mallory", tamper: { _tag: "alteredAfterSigning", email: "ada@acme.test" } })).refused()).toMatchObject({ code: "signature_invalid" })
  })

  it.each(SamlTamper.xswVariants)("signature wrapping %s (Mallory's signed assertion made to name Ada): signature_invalid", async (variant) => {
    const { refused } = await signIn({ as: "mallory", tamper: { _tag: "wrapping", variant, impersonate: "ada" } })
    expect(await refused()).toMatchObject({ code: "signature_invalid" })
  })

  it("signed by a key the IdP's settings do not list: signature_invalid", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "unknownKey" } })).refused()).toMatchObject({ code: "signature_invalid" })
  })

  it("SHA-1 signature and digests (node-saml accepts them): unsupported_algorithm", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "sha1" } })).refused()).toEqual({
      code: "unsupported_algorithm",
      message: "The Response uses the signature algorithm http://www.w3.org/2000/09/xmldsig#rsa-sha1: only SHA-256 or stronger is accepted (SHA-1 is refused)."
    })
  })

  it("expired: assertion_expired", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "expired" } })).refused()).toMatchObject({ code: "assertion_expired" })
  })

  it("not yet valid: assertion_not_yet_valid", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "notYetValid" } })).refused()).toMatchObject({ code: "assertion_not_yet_valid" })
  })

  it("wrong audience: audience_mismatch", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "wrongAudience", audience: "https://other-sp.test/saml" } })).refused()).toMatchObject({ code: "audience_mismatch" })
  })

  it("wrong Destination (node-saml accepts it): destination_mismatch", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "wrongDestination" } })).refused()).toEqual({
      code: "destination_mismatch",
      message: `The Response's Destination is not this connection's ACS URL ${ACS}.`
    })
  })

  it("wrong subject confirmation Recipient (node-saml accepts it): destination_mismatch", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "wrongRecipient", recipient: "https://other-sp.test/acs" } })).refused()).toEqual({
      code: "destination_mismatch",
      message: `The assertion's subject confirmation Recipient is not this connection's ACS URL ${ACS}.`
    })
  })

  it("wrong Issuer (node-saml accepts it): issuer_mismatch", async () => {
    expect(await (await signIn({ as: "ada", tamper: { _tag: "wrongIssuer" } })).refused()).toMatchObject({ code: "issuer_mismatch" })
  })

  it("replayed: the same Response posted again after its request was used: replayed", async () => {
    const { start, validate, refused } = await signIn({ as: "ada" })
    await validate()
    expect(await refused({ requestId: start.requestId, alreadyUsed: true })).toMatchObject({ code: "replayed" })
  })

  it("a Response answering another request: in_response_to_mismatch", async () => {
    const other = await run(saml.startSignIn(settings, sp, null))
    const { refused } = await signIn({ as: "ada", inResponseTo: other.requestId })
    expect(await refused()).toMatchObject({ code: "in_response_to_mismatch" })
    // Nor is an answer to a request taken for IdP-initiated when the caller knows no such request.
    const answered = await signIn({ as: "ada" })
    expect(await answered.refused({ requestId: null })).toMatchObject({ code: "in_response_to_mismatch" })
  })

  it("IdP-initiated while the connection does not allow it: idp_initiated_not_allowed", async () => {
    const post = await idp.signInIdpInitiated(SP_ENTITY, { as: "ada", relayState: "/dashboard" })
    expect(await refusal(saml.validateResponse(settings, sp, post.form, { requestId: null }))).toMatchObject({ code: "idp_initiated_not_allowed" })
    // Nor does it pass as an answer to a request the caller holds.
    const start = await run(saml.startSignIn(settings, sp, null))
    expect(await refusal(saml.validateResponse(settings, sp, post.form, { requestId: start.requestId }))).toMatchObject({ code: "in_response_to_mismatch" })
  })

  it("IdP-initiated when allowed: a RelayState outside the allow-list is refused, inside or absent accepted", async () => {
    const allowing: SpSettings = { ...sp, allowIdpInitiated: true, relayStateAllowList: ["/dashboard"] }
    const outside = await idp.signInIdpInitiated(SP_ENTITY, { as: "ada", relayState: "https://evil.test/" })
    expect(await refusal(saml.validateResponse(settings, allowing, outside.form, { requestId: null }))).toMatchObject({ code: "relay_state_not_allowed" })
    const inside = await idp.signInIdpInitiated(SP_ENTITY, { as: "ada", relayState: "/dashboard" })
    expect(await run(saml.validateResponse(settings, allowing, inside.form, { requestId: null }))).toMatchObject({ email: "ada@acme.test", inResponseTo: null, relayState: "/dashboard" })
    const none = await idp.signInIdpInitiated(SP_ENTITY, { as: "ada" })
    expect(await run(saml.validateResponse(settings, allowing, none.form, { requestId: null }))).toMatchObject({ email: "ada@acme.test", relayState: null })
    // Expired IdP-initiated Responses are still refused (node-saml checks the subject confirmation only with InResponseTo).
    const expired = await idp.signInIdpInitiated(SP_ENTITY, { as: "ada", tamper: { _tag: "expired" } })
    expect(await refusal(saml.validateResponse(settings, allowing, expired.form, { requestId: null }))).toMatchObject({ code: "assertion_expired" })
  })

  it("an IdP error status: idp_error with the IdP's message", async () => {
    const { refused } = await signIn({ as: "ada", tamper: { _tag: "status", message: "user is not assigned to the application" } })
    expect(await refused()).toEqual({ code: "idp_error", message: "The IdP refused the sign-in: Responder error: user is not assigned to the application" })
  })

  it("malformed: no SAMLResponse, not base64, not XML, a DOCTYPE, not a Response, oversize: response_invalid", async () => {
    const expected = { requestId: "_none" }
    const refuse = (f: { readonly SAMLResponse?: string }) => refusal(saml.validateResponse(settings, sp, f, expected))
    expect(await refuse({})).toEqual({ code: "response_invalid", message: "The form has no SAMLResponse." })
    expect(await refuse({ SAMLResponse: "%%%not base64%%%" })).toEqual({ code: "response_invalid", message: "The SAMLResponse is not base64." })
    expect(await refuse(form("this is not xml"))).toMatchObject({ code: "response_invalid" })
    expect(await refuse(form("<samlp:Response xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\"><unclosed></samlp:Response>"))).toMatchObject({ code: "response_invalid" })
    const { post } = await signIn({ as: "ada" })
    expect(await refuse(form(`<!DOCTYPE r [<!ENTITY e "x">]>${post.xml}`))).toEqual({ code: "response_invalid", message: "The SAMLResponse has a DOCTYPE, which is refused." })
    expect(await refuse(form("<samlp:AuthnRequest xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\"/>"))).toEqual({ code: "response_invalid", message: "The SAMLResponse is not a SAML 2.0 Response." })
    expect(await refuse({ SAMLResponse: "A".repeat(600 * 1024) })).toMatchObject({ code: "response_invalid" })
    expect(await refuse({ SAMLResponse: Buffer.from([0xff, 0xfe, 0x00]).toString("base64") })).toMatchObject({ code: "response_invalid" })
  })

  it("no email in the attributes and a NameID that is not an email: email_missing", async () => {
    idp.addUser("nomail", { email: "not-an-email" })
    const { refused } = await signIn({ as: "nomail" })
    expect(await refused()).toMatchObject({ code: "email_missing" })
  })
})

describe("certificate rotation (last: it changes the IdP's key)", () => {
  it("while both certificates are listed, Responses signed by the old and by the new key are accepted", async () => {
    const before = await signIn({ as: "ada" }) // signed by the old key, posted after the rotation
    const added = await idp.rotateSigningKey()
    const both = await run(saml.fetchIdpMetadata(idp.metadataUrl))
    expect(both.certificates.map((c) => c.pem.replace(/\s+/g, ""))).toEqual(idp.certificates().map((pem) => pem.replace(/\s+/g, "")))
    expect((await run(saml.validateResponse(both, sp, before.post.form, { requestId: before.start.requestId }))).email).toBe("ada@acme.test")
    expect((await (await signIn({ as: "ada" }, sp, both)).validate()).email).toBe("ada@acme.test")
    // Listed by hand, old then new: the same.
    const manual = await run(manualSettings({ entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: [settings.certificates[0]!.pem, added] }))
    expect((await (await signIn({ as: "ada" }, sp, manual)).validate()).email).toBe("ada@acme.test")
    // Only the old one listed: the new key's signature is refused.
    expect(await (await signIn({ as: "ada" }, sp, settings)).refused()).toMatchObject({ code: "signature_invalid" })
  })
})
