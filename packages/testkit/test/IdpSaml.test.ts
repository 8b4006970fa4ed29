/**
 * IdpSaml against the service-provider library the server uses, `@node-saml/node-saml` 5: metadata, an
 * SP-initiated sign-in by HTTP-Redirect and HTTP-POST, an IdP-initiated one, key rotation; then every tampered
 * Response, each refused by node-saml with its own error, or accepted where node-saml leaves the check to its
 * caller (said in the test's name). One IdP for the file.
 */
import * as NodeCrypto from "node:crypto"
import * as Zlib from "node:zlib"
import { SAML, ValidateInResponseTo } from "@node-saml/node-saml"
import type { SamlConfig } from "@node-saml/node-saml"
import { DOMParser, XMLSerializer } from "@xmldom/xmldom"
import type { Element } from "@xmldom/xmldom"
import { SignedXml } from "xml-crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IdpSaml, SamlTamper } from "../src/index.js"

const SP_ENTITY = "https://orgplane.test/sso/saml/ssc_test"
const ACS = "https://orgplane.test/sso/saml/ssc_test/acs"

let idp: IdpSaml.IdpSaml
let startupMs = 0

beforeAll(async () => {
  const started = performance.now()
  idp = await IdpSaml.start({
    serviceProviders: [{ entityId: SP_ENTITY, acsUrls: [ACS] }],
    users: {
      ada: { email: "ada@acme.test", name: "Ada Lovelace", givenName: "Ada", surname: "Lovelace", groups: ["engineering", "admins"] },
      mallory: { email: "mallory@acme.test", name: "Mallory" }
    }
  })
  startupMs = performance.now() - started
})
afterAll(() => idp?.close())

/** The service provider as the server will configure node-saml: signed assertions, InResponseTo checked. */
const serviceProvider = (overrides: Partial<SamlConfig> = {}) =>
  new SAML({
    callbackUrl: ACS,
    issuer: SP_ENTITY,
    audience: SP_ENTITY,
    entryPoint: idp.ssoUrl,
    idpCert: [...idp.certificates()],
    idpIssuer: idp.entityId,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.always,
    acceptedClockSkewMs: 0,
    ...overrides
  })

/** An SP-initiated sign-in: the SP's redirect URL through the IdP, the ACS post validated by the same SP. */
const signIn = async (options: IdpSaml.ResponseOptions = {}, sp = serviceProvider()) => {
  const redirect = await sp.getAuthorizeUrlAsync("relay-1", undefined, {})
  const post = await idp.signIn(redirect, options)
  return { sp, post, validate: () => sp.validatePostResponseAsync(post.form as Record<string, string>) }
}

const failure = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    return (error as Error).message
  }
  throw new Error("expected a failure")
}

const DSIG = "http://www.w3.org/2000/09/xmldsig#"

const parseXml = (xml: string) => new DOMParser().parseFromString(xml, "text/xml")

/** What a naive verifier does: the one XML signature in the document checks out against the IdP's certificate. */
const signatureChecksOut = (xml: string) => {
  const signatures = Array.from(parseXml(xml).getElementsByTagNameNS(DSIG, "Signature"))
  expect(signatures).toHaveLength(1)
  const verifier = new SignedXml({ publicCert: idp.certificates().at(-1)! })
  verifier.loadSignature(new XMLSerializer().serializeToString(signatures[0]!))
  return verifier.checkSignature(xml)
}

/** The NameIDs in the document, in document order. */
const nameIds = (xml: string) => Array.from(parseXml(xml).getElementsByTagNameNS("urn:oasis:names:tc:SAML:2.0:assertion", "NameID")).map((n) => n.textContent)

/** The NameID of the first assertion that is a child of the Response: what a service provider reads. */
const readNameId = (xml: string) => {
  const child = (parent: Element, localName: string) => Array.from(parent.childNodes).find((n) => (n as Element).localName === localName) as Element
  return child(child(child(parseXml(xml).documentElement!, "Assertion"), "Subject"), "NameID").textContent
}

describe("IdpSaml with node-saml", () => {
  it("starts on loopback and serves metadata with both SSO bindings and its signing certificate", async () => {
    console.info(`IdpSaml start-up: ${startupMs.toFixed(0)} ms`)
    expect(idp.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(idp.entityId).toBe(`${idp.url}/metadata`)
    const answer = await fetch(idp.metadataUrl)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toBe("application/samlmetadata+xml")
    const doc = parseXml(await answer.text())
    const md = "urn:oasis:names:tc:SAML:2.0:metadata"
    expect(doc.documentElement!.getAttribute("entityID")).toBe(idp.entityId)
    const sso = Array.from(doc.getElementsByTagNameNS(md, "SingleSignOnService")).map((e) => [e.getAttribute("Binding"), e.getAttribute("Location")])
    expect(sso).toEqual([
      ["urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect", idp.ssoUrl],
      ["urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST", idp.ssoUrl]
    ])
    const certs = Array.from(doc.getElementsByTagNameNS(DSIG, "X509Certificate")).map((e) => e.textContent!.replace(/\s+/g, ""))
    expect(certs).toEqual(idp.certificates().map((pem) => pem.replace(/-----[A-Z ]+-----|\s+/g, "")))
    expect(new NodeCrypto.X509Certificate(idp.certificates()[0]).subject).toBe("CN=orgplane test IdP")
  })

  it("SP-initiated by HTTP-Redirect: node-saml accepts the signed Response and reads NameID and attributes", async () => {
    const { post, validate } = await signIn({ as: "ada" })
    expect(post.acsUrl).toBe(ACS)
    expect(post.form).toEqual({ SAMLResponse: post.SAMLResponse, RelayState: "relay-1" })
    const request = idp.authnRequests().at(-1)!
    expect(request).toMatchObject({ issuer: SP_ENTITY, binding: "redirect", destination: idp.ssoUrl, acsUrl: ACS, relayState: "relay-1" })
    const doc = parseXml(post.xml)
    expect(doc.documentElement!.getAttribute("InResponseTo")).toBe(request.id)
    expect(doc.documentElement!.getAttribute("ID")).toBe(post.responseId)
    // Both signed by default, RSA-SHA256 with SHA-256 digests.
    expect(Array.from(doc.getElementsByTagNameNS(DSIG, "SignatureMethod")).map((e) => e.getAttribute("Algorithm"))).toEqual([
      "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
      "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
    ])
    const { profile } = await validate()
    expect(profile).toMatchObject({
      issuer: idp.entityId,
      inResponseTo: request.id,
      nameID: "ada@acme.test",
      nameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
      email: "ada@acme.test",
      name: "Ada Lovelace",
      givenName: "Ada",
      surname: "Lovelace",
      groups: ["engineering", "admins"]
    })
    // The assertion read is the one the IdP posted.
    expect(profile?.getAssertionXml?.()).toMatch(new RegExp(`<saml:Assertion [^>]*ID="${post.assertionId}"`))
    // Signed Response required too: also accepted.
    const strict = await signIn({ as: "ada" }, serviceProvider({ wantAuthnResponseSigned: true }))
    expect((await strict.validate()).profile?.nameID).toBe("ada@acme.test")
  })

  it("SP-initiated by HTTP-POST, the user chosen by the request's login_hint", async () => {
    // By HTTP-POST the AuthnRequest is not deflated (SAML bindings 3.5.4): node-saml needs skipRequestCompression.
    const deflating = serviceProvider({ authnRequestBinding: "HTTP-POST" })
    const deflated = /name="SAMLRequest" value="([^"]*)"/.exec(await deflating.getAuthorizeFormAsync("r", undefined, {}))![1]
    await expect(idp.signIn({ SAMLRequest: deflated })).rejects.toThrow("400: SAMLRequest is not XML (HTTP-POST: base64 of the XML, without DEFLATE)")

    const sp = serviceProvider({ authnRequestBinding: "HTTP-POST", skipRequestCompression: true })
    const html = await sp.getAuthorizeFormAsync("relay-post", undefined, {})
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]
    await expect(idp.signIn({ SAMLRequest: field("SAMLRequest") })).rejects.toThrow("no user to sign in as")
    const post = await idp.signIn({ SAMLRequest: field("SAMLRequest"), RelayState: field("RelayState") }, { as: "ada" })
    expect(idp.authnRequests().at(-1)).toMatchObject({ binding: "post", issuer: SP_ENTITY, relayState: "relay-post" })
    expect(post.RelayState).toBe("relay-post")

    const redirect = new URL(await serviceProvider().getAuthorizeUrlAsync("r", undefined, {}))
    redirect.searchParams.set("login_hint", "mallory")
    const hinted = await idp.signIn(redirect)
    expect(nameIds(hinted.xml)).toEqual(["mallory@acme.test"])
    expect((await sp.validatePostResponseAsync(post.form as Record<string, string>)).profile?.nameID).toBe("ada@acme.test")
  })

  it("a browser can sign in too: /sso answers a login page, /login the auto-posting form to the ACS", async () => {
    const sp = serviceProvider()
    const login = await fetch(await sp.getAuthorizeUrlAsync("relay-browser", undefined, {}))
    expect(login.status).toBe(200)
    const request = /name="request" value="([^"]+)"/.exec(await login.text())![1]
    const typo = await fetch(`${idp.url}/login`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ request, user: "adaa" }) })
    expect(typo.status).toBe(400)
    expect(await typo.text()).toContain("no user with login hint adaa")
    const answer = await fetch(`${idp.url}/login`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ request, user: "ada" }) })
    const html = await answer.text()
    expect(html).toContain(`action="${ACS}"`)
    const SAMLResponse = /name="SAMLResponse" value="([^"]+)"/.exec(html)![1]
    expect(/name="RelayState" value="([^"]+)"/.exec(html)![1]).toBe("relay-browser")
    expect((await sp.validatePostResponseAsync({ SAMLResponse })).profile?.nameID).toBe("ada@acme.test")
    const again = await fetch(`${idp.url}/login`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ request, user: "ada" }) })
    expect(again.status).toBe(400)
  })

  it("refuses AuthnRequests from an unregistered SP, for an unregistered ACS URL, not decoding, or with a DOCTYPE", async () => {
    const stranger = serviceProvider({ issuer: "https://stranger.test/saml" })
    await expect(idp.signIn(await stranger.getAuthorizeUrlAsync("r", undefined, {}))).rejects.toThrow("400: unknown service provider https://stranger.test/saml")
    const elsewhere = serviceProvider({ callbackUrl: "https://orgplane.test/elsewhere" })
    await expect(idp.signIn(await elsewhere.getAuthorizeUrlAsync("r", undefined, {}))).rejects.toThrow("ACS URL https://orgplane.test/elsewhere is not registered")
    const garbage = new URL(idp.ssoUrl)
    garbage.searchParams.set("SAMLRequest", Buffer.from("not deflated").toString("base64"))
    await expect(idp.signIn(garbage)).rejects.toThrow("400: SAMLRequest does not decode")
    // A DOCTYPE (the door to XXE and entity expansion) is refused before anything reads the request.
    const genuine = new URL(await serviceProvider().getAuthorizeUrlAsync("r", undefined, {}))
    const xml = Zlib.inflateRawSync(Buffer.from(genuine.searchParams.get("SAMLRequest")!, "base64")).toString("utf8")
    const withDoctype = new URL(idp.ssoUrl)
    withDoctype.searchParams.set("SAMLRequest", Zlib.deflateRawSync(`<!DOCTYPE x [<!ENTITY e "x">]>${xml}`).toString("base64"))
    await expect(idp.signIn(withDoctype, { as: "ada" })).rejects.toThrow("400: invalid AuthnRequest: ERR_INVALID_XML")
    expect(idp.requests.filter((r) => r.path.startsWith("/sso")).slice(-4).map((r) => r.status)).toEqual([400, 400, 400, 400])
  })

  it("IdP-initiated: no InResponseTo; node-saml refuses it when InResponseTo is required, accepts it when only checked if present", async () => {
    const post = await idp.signInIdpInitiated(SP_ENTITY, { as: "ada", relayState: "/dashboard" })
    expect(parseXml(post.xml).documentElement!.hasAttribute("InResponseTo")).toBe(false)
    expect(post.form).toEqual({ SAMLResponse: post.SAMLResponse, RelayState: "/dashboard" })
    expect(await failure(serviceProvider().validatePostResponseAsync(post.form as Record<string, string>))).toBe("InResponseTo is missing from response")
    const lenient = serviceProvider({ validateInResponseTo: ValidateInResponseTo.ifPresent })
    expect((await lenient.validatePostResponseAsync(post.form as Record<string, string>)).profile?.nameID).toBe("ada@acme.test")
    await expect(idp.signInIdpInitiated("https://stranger.test/saml", { as: "ada" })).rejects.toThrow("unknown service provider")
  })

  it("replay: the same Response posted twice is refused the second time (InResponseTo is single use)", async () => {
    const { post, sp, validate } = await signIn({ as: "ada" })
    await validate()
    expect(await failure(sp.validatePostResponseAsync(post.form as Record<string, string>))).toBe("InResponseTo is not valid")
  })

  it("InResponseTo of another request: refused", async () => {
    const other = await serviceProvider().getAuthorizeUrlAsync("x", undefined, {})
    await idp.signIn(other, { as: "ada" }) // the other request, answered elsewhere
    const anotherId = idp.authnRequests().at(-1)!.id
    const { post, validate } = await signIn({ as: "ada", inResponseTo: anotherId })
    expect(parseXml(post.xml).documentElement!.getAttribute("InResponseTo")).toBe(anotherId)
    expect(await failure(validate())).toBe("InResponseTo is not valid")
  })

  it("unsigned assertion (every signature removed): refused", async () => {
    const { post, validate } = await signIn({ as: "ada", tamper: { _tag: "unsigned" } })
    expect(post.xml).not.toContain("Signature")
    expect(await failure(validate())).toBe("Invalid signature")
  })

  it("a Response signed but its assertion not: refused when assertions must be signed", async () => {
    const { post, validate } = await signIn({ as: "ada", signAssertion: false })
    expect(parseXml(post.xml).getElementsByTagNameNS(DSIG, "Signature")).toHaveLength(1)
    expect(await failure(validate())).toBe("Invalid signature")
  })

  it("content altered after signing: refused", async () => {
    const { post, validate } = await signIn({ as: "mallory", tamper: { _tag: "alteredAfterSigning", email: "ada@acme.test" } })
    expect(nameIds(post.xml)).toEqual(["ada@acme.test"])
    expect(await failure(validate())).toBe("Invalid signature")
  })

  // Mallory signs in as herself and wraps her signed assertion to be Ada. Each variant's signature still checks
  // out for a naive verifier (so the attack is real), and node-saml refuses it.
  it.each([
    ["XSW1", "Invalid signature: Referenced node does not refer to it's parent element"],
    ["XSW2", "Invalid signature: Referenced node does not refer to it's parent element"],
    ["XSW3", "Invalid signature: multiple assertions"],
    ["XSW4", "Invalid signature"],
    ["XSW5", "Invalid signature: multiple assertions"],
    ["XSW6", "Invalid signature: Referenced node does not refer to it's parent element"],
    ["XSW7", "Invalid signature"],
    ["XSW8", "Invalid signature: Referenced node does not refer to it's parent element"]
  ] as const)("signature wrapping %s: refused with %j", async (variant, message) => {
    const onResponse = SamlTamper.attacksResponseSignature(variant)
    const sp = serviceProvider(onResponse ? { wantAssertionsSigned: false, wantAuthnResponseSigned: true } : {})
    const { post, validate } = await signIn({ as: "mallory", tamper: { _tag: "wrapping", variant, impersonate: "ada" } }, sp)
    expect(signatureChecksOut(post.xml)).toBe(true)
    expect(readNameId(post.xml)).toBe("ada@acme.test")
    expect(nameIds(post.xml).sort()).toEqual(["ada@acme.test", "mallory@acme.test"])
    expect(await failure(validate())).toBe(message)
  })

  it("the same variants unwrapped are accepted: the refusals are the wrapping's doing", async () => {
    for (const config of [{}, { wantAssertionsSigned: false, wantAuthnResponseSigned: true }]) {
      const { validate } = await signIn({ as: "mallory" }, serviceProvider(config))
      expect((await validate()).profile?.nameID).toBe("mallory@acme.test")
    }
  })

  it("signed by a key the metadata does not list: refused", async () => {
    const { post, validate } = await signIn({ as: "ada", tamper: { _tag: "unknownKey" } })
    const embedded = parseXml(post.xml).getElementsByTagNameNS(DSIG, "X509Certificate")[0]!.textContent
    expect(idp.certificates().some((pem) => pem.replace(/-----[A-Z ]+-----|\s+/g, "") === embedded)).toBe(false)
    expect(await failure(validate())).toBe("Invalid signature")
  })

  it("expired NotOnOrAfter: refused", async () => {
    const { validate } = await signIn({ as: "ada", tamper: { _tag: "expired" } })
    expect(await failure(validate())).toBe("No valid subject confirmation found among those available in the SAML assertion")
  })

  it("not yet valid (NotBefore in ten minutes): refused", async () => {
    const { validate } = await signIn({ as: "ada", tamper: { _tag: "notYetValid" } })
    expect(await failure(validate())).toBe("SAML assertion not yet valid")
  })

  it("wrong Audience: refused", async () => {
    const { validate } = await signIn({ as: "ada", tamper: { _tag: "wrongAudience", audience: "https://other-sp.test/saml" } })
    expect(await failure(validate())).toBe(`SAML assertion audience mismatch. Expected: ${SP_ENTITY} Received: https://other-sp.test/saml`)
  })

  it("IdP error (status Responder/AuthnFailed): refused with the IdP's message", async () => {
    const { post, validate } = await signIn({ as: "ada", tamper: { _tag: "status", message: "user is not assigned to the application" } })
    expect(parseXml(post.xml).getElementsByTagNameNS("urn:oasis:names:tc:SAML:2.0:assertion", "Assertion")).toHaveLength(0)
    expect(await failure(validate())).toBe("SAML provider returned Responder error: user is not assigned to the application")
  })

  // node-saml 5 leaves these to its caller: the server must check them itself. Each response is otherwise valid.
  it("SHA-1 signature and digests: node-saml accepts them; the algorithms are visible for the server to refuse", async () => {
    const { post, validate } = await signIn({ as: "ada", tamper: { _tag: "sha1" } })
    const doc = parseXml(post.xml)
    const algorithms = (name: string) => Array.from(doc.getElementsByTagNameNS(DSIG, name)).map((e) => e.getAttribute("Algorithm"))
    expect(algorithms("SignatureMethod")).toEqual(["http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#rsa-sha1"])
    expect(algorithms("DigestMethod")).toEqual(["http://www.w3.org/2000/09/xmldsig#sha1", "http://www.w3.org/2000/09/xmldsig#sha1"])
    expect((await validate()).profile?.nameID).toBe("ada@acme.test")
  })

  it("wrong Destination, wrong Recipient, wrong Issuer: node-saml accepts them; the values are in the signed XML for the server to check", async () => {
    const destination = await signIn({ as: "ada", tamper: { _tag: "wrongDestination" } })
    expect(parseXml(destination.post.xml).documentElement!.getAttribute("Destination")).toBe(`${ACS}/elsewhere`)
    expect((await destination.validate()).profile?.nameID).toBe("ada@acme.test")

    const recipient = await signIn({ as: "ada", tamper: { _tag: "wrongRecipient", recipient: "https://other-sp.test/acs" } })
    const confirmation = parseXml(recipient.post.xml).getElementsByTagNameNS("urn:oasis:names:tc:SAML:2.0:assertion", "SubjectConfirmationData")[0]!
    expect(confirmation.getAttribute("Recipient")).toBe("https://other-sp.test/acs")
    expect((await recipient.validate()).profile?.nameID).toBe("ada@acme.test")

    const issuer = await signIn({ as: "ada", tamper: { _tag: "wrongIssuer" } })
    const issued = await issuer.validate()
    expect(issued.profile?.issuer).toBe(`${idp.url}/another-idp`)
    expect(issued.profile?.issuer).not.toBe(idp.entityId)
  })

  it("certificate rotation: the metadata lists both certificates and the new key signs; an SP knowing only the old one refuses", async () => {
    const [old] = idp.certificates()
    const added = await idp.rotateSigningKey()
    expect(idp.certificates()).toEqual([old, added])
    expect((await (await fetch(idp.metadataUrl)).text()).match(/<ds:X509Certificate>/g) ?? []).toHaveLength(2)
    const both = await signIn({ as: "ada" })
    expect((await both.validate()).profile?.nameID).toBe("ada@acme.test")
    const onlyOld = await signIn({ as: "ada" }, serviceProvider({ idpCert: old }))
    expect(await failure(onlyOld.validate())).toBe("Invalid signature")
    const onlyNew = await signIn({ as: "ada" }, serviceProvider({ idpCert: added }))
    expect((await onlyNew.validate()).profile?.nameID).toBe("ada@acme.test")
  })
})

describe("IdpSaml options", () => {
  it("an SP registered by its metadata, another entity ID, claim-URI attribute names, Response-only signing", async () => {
    const started = performance.now()
    const sp = new SAML({ callbackUrl: ACS, issuer: SP_ENTITY, idpCert: "placeholder", wantAuthnResponseSigned: true, wantAssertionsSigned: false })
    const custom = await IdpSaml.start({
      entityId: "https://sts.idp.test/tenant-1/",
      serviceProviders: [{ metadata: sp.generateServiceProviderMetadata(null) }],
      users: { grace: { email: "grace@acme.test", name: "Grace Hopper" } },
      attributeNames: { email: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress", name: "http://schemas.microsoft.com/identity/claims/displayname" },
      signAssertion: false,
      signResponse: true
    })
    console.info(`IdpSaml start-up (second in the process): ${(performance.now() - started).toFixed(0)} ms`)
    try {
      const relying = new SAML({
        callbackUrl: ACS,
        issuer: SP_ENTITY,
        entryPoint: custom.ssoUrl,
        idpCert: [...custom.certificates()],
        wantAuthnResponseSigned: true,
        wantAssertionsSigned: false
      })
      const post = await custom.signIn(await relying.getAuthorizeUrlAsync("", undefined, {}))
      expect(parseXml(post.xml).getElementsByTagNameNS(DSIG, "Signature")).toHaveLength(1)
      const { profile } = await relying.validatePostResponseAsync(post.form as Record<string, string>)
      expect(profile).toMatchObject({
        issuer: "https://sts.idp.test/tenant-1/",
        nameID: "grace@acme.test",
        "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress": "grace@acme.test",
        "http://schemas.microsoft.com/identity/claims/displayname": "Grace Hopper"
      })
      expect(post.RelayState).toBeUndefined()
      expect(post.form).toEqual({ SAMLResponse: post.SAMLResponse })
    } finally {
      await custom.close()
    }
  })
})
