/**
 * A SAML 2.0 identity provider on 127.0.0.1 for SSO sign-in tests, built on `samlify`'s IdentityProvider with its
 * own self-signed key and certificate (made at start by `selfsigned`).
 *
 * - `GET /metadata`: the IdP's metadata (entity ID, SSO endpoints for HTTP-Redirect and HTTP-POST, every signing
 *   certificate). `GET|POST /sso`: an AuthnRequest by HTTP-Redirect (`SAMLRequest`, `RelayState`) or HTTP-POST,
 *   parsed by samlify, from a registered service provider (its `Issuer`), for one of its registered ACS URLs and
 *   with this IdP's SSO URL as `Destination` when it names one; anything else answers 400. An accepted request
 *   answers a login page; `POST /login` (`request`, `user`) answers the auto-posting form a browser sends to the ACS.
 * - `signIn(requestUrlOrForm, { as })` plays the browser headlessly: it sends the AuthnRequest to `/sso` and
 *   answers what the browser would POST to the ACS (`acsUrl`, `SAMLResponse`, `RelayState`, and the decoded `xml`)
 *   without posting it: the test posts it, tampers with it or replays it. `signInIdpInitiated` does the same with
 *   no request (no `InResponseTo`).
 * - The Response is signed by samlify: the assertion and the Response by default (`signAssertion`,
 *   `signResponse`, per IdP or per sign-in), RSA-SHA256. Users are keyed by login hint; the NameID is the email
 *   (emailAddress format), with attributes `email`, `name`, `givenName`, `surname`, `groups` (names configurable).
 * - Negative cases (`tamper`, see `Tamper`): built as an IdP or an attacker would, either in the content samlify
 *   then signs (expired, wrong audience, destination, recipient or issuer, SHA-1, an unknown key, an IdP error) or
 *   by editing the signed XML (`SamlTamper`: signatures removed, content altered, XSW1–XSW8). `inResponseTo`
 *   answers another request; a replay is the same fields posted twice.
 * - `rotateSigningKey()` adds a key: the metadata lists every certificate, the newest signs.
 *
 * Use: one IdP per test file, started in `beforeAll` (about 0.8–1.8 s on the 2-core CI machine, most of it the
 * RSA key; a second IdP in the same process about 0.5 s), shared by its tests:
 *
 *   const idp = await IdpSaml.start({
 *     serviceProviders: [{ metadata: spMetadataXml }], // or { entityId, acsUrls }
 *     users: { ada: { email: "ada@acme.test", name: "Ada Lovelace", groups: ["engineering"] } }
 *   })
 *   // The server, configured with `idp.metadataUrl` (or `idp.metadata()`), redirected its start URL to `location`:
 *   const post = await idp.signIn(location, { as: "ada" })
 *   await fetch(post.acsUrl, { method: "POST", body: new URLSearchParams(post.form), redirect: "manual" })
 *   await idp.signIn(otherLocation, { as: "ada", tamper: { _tag: "wrapping", variant: "XSW3" } }) // refused
 *
 * What node-saml 5 (`validatePostResponseAsync`, signed assertions required, `validateInResponseTo: "always"`)
 * answers, as `Error` messages (test/IdpSaml.test.ts holds each): `unsigned`, an unsigned assertion in a signed
 * Response, `alteredAfterSigning`, `unknownKey`, XSW4, XSW7: "Invalid signature"; XSW3, XSW5: "Invalid signature:
 * multiple assertions"; XSW1, XSW2, XSW6, XSW8: "Invalid signature: Referenced node does not refer to it's parent
 * element"; `expired`: "No valid subject confirmation found among those available in the SAML assertion";
 * `notYetValid`: "SAML assertion not yet valid"; `wrongAudience`: "SAML assertion audience mismatch. Expected: …
 * Received: …"; a replay or another request's InResponseTo: "InResponseTo is not valid"; IdP-initiated:
 * "InResponseTo is missing from response"; `status`: "SAML provider returned Responder error: …". ACCEPTED by
 * node-saml, so the server must check them itself: `sha1` (read the SignatureMethod/DigestMethod algorithms),
 * `wrongDestination`, `wrongRecipient`, `wrongIssuer` (`idpIssuer` is only checked on logout messages).
 * node-saml deflates HTTP-POST AuthnRequests unless `skipRequestCompression`; this IdP refuses them, as the
 * binding asks (SAML bindings 3.5.4).
 *
 * samlify needs a schema validator (STACK-NOTES.md): the full XSD check (`@authenio/samlify-xmllint-wasm`) costs
 * about a second per message on the CI machine, so the kit installs one that refuses what is not a well-formed
 * SAML protocol message without a DOCTYPE. samlify and selfsigned are imported when an IdP starts.
 */
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Zlib from "node:zlib"
import type * as Samlify from "samlify"
import * as SamlTamper from "./SamlTamper.js"

export interface User {
  /** The NameID (emailAddress format) and the `email` attribute. */
  readonly email: string
  readonly name?: string
  readonly givenName?: string
  readonly surname?: string
  readonly groups?: ReadonlyArray<string>
}

/** A service provider as an administrator registers it at the IdP: by its values, or by its metadata XML. */
export type ServiceProvider =
  | { readonly entityId: string; readonly acsUrls: ReadonlyArray<string> }
  | { readonly metadata: string }

export type AttributeName = "email" | "name" | "givenName" | "surname" | "groups"

export interface Options {
  readonly users?: Readonly<Record<string, User>>
  readonly serviceProviders?: ReadonlyArray<ServiceProvider>
  /** Default `{url}/metadata`. */
  readonly entityId?: string
  /** Default true. */
  readonly signAssertion?: boolean
  /** Default true. */
  readonly signResponse?: boolean
  /** The attribute names sent (an IdP that speaks claim URIs, as Entra ID does). Default: the keys themselves. */
  readonly attributeNames?: Partial<Readonly<Record<AttributeName, string>>>
  /** The signing certificate's expiry. Default: a year from now. */
  readonly certificateNotAfter?: Date
}

/**
 * What is wrong with the Response. Content tampers are signed by the IdP like any Response (only the named thing
 * is wrong); edits are made after signing, as an attacker without the key would.
 */
export type Tamper =
  /** Every signature removed after signing. */
  | { readonly _tag: "unsigned" }
  /** The subject's email changed after signing (default `mallory@evil.test`). */
  | { readonly _tag: "alteredAfterSigning"; readonly email?: string }
  /** Signature wrapping: the signed content kept, an evil assertion naming `impersonate` (a user's login hint, default an `admin@` of the signer's domain) beside it. XSW1–2 are made from a Response-only signature, XSW3–8 from an assertion-only one. */
  | { readonly _tag: "wrapping"; readonly variant: SamlTamper.XswVariant; readonly impersonate?: string }
  /** Signed with RSA-SHA1 and SHA-1 digests. */
  | { readonly _tag: "sha1" }
  /** Signed with a key whose certificate the metadata does not list. */
  | { readonly _tag: "unknownKey" }
  /** Conditions and subject confirmation ended ten minutes ago. */
  | { readonly _tag: "expired" }
  /** Conditions start in ten minutes. */
  | { readonly _tag: "notYetValid" }
  | { readonly _tag: "wrongAudience"; readonly audience?: string }
  /** The Response's `Destination`. */
  | { readonly _tag: "wrongDestination"; readonly destination?: string }
  /** The subject confirmation's `Recipient`. */
  | { readonly _tag: "wrongRecipient"; readonly recipient?: string }
  /** The Issuer of the Response and of the assertion. */
  | { readonly _tag: "wrongIssuer"; readonly issuer?: string }
  /** An IdP error: a signed Response without assertion, status `Responder` / `AuthnFailed` unless given. */
  | { readonly _tag: "status"; readonly subStatus?: string; readonly message?: string }

export interface ResponseOptions {
  /** The user who signs in (a login hint of `users`); default: the request's `login_hint` query parameter, or the only user. */
  readonly as?: string
  readonly signAssertion?: boolean
  readonly signResponse?: boolean
  /** Answers as if to this request ID (another request's); `null`: no InResponseTo at all. */
  readonly inResponseTo?: string | null
  readonly tamper?: Tamper
}

/** What the browser POSTs to the service provider's ACS, not posted. */
export interface AcsPost {
  readonly acsUrl: string
  readonly SAMLResponse: string
  readonly RelayState?: string
  /** The form fields as a browser sends them (`SAMLResponse`, and `RelayState` when there is one). */
  readonly form: Readonly<Record<string, string>>
  /** The Response, decoded. */
  readonly xml: string
  readonly responseId: string
  readonly assertionId: string
}

export interface AuthnRequest {
  readonly id: string
  readonly issuer: string
  readonly binding: "redirect" | "post"
  readonly destination?: string
  readonly acsUrl?: string
  readonly relayState?: string
  readonly xml: string
}

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  /** Query parameters, then form parameters. */
  readonly params: Readonly<Record<string, string>>
  status: number | null
}

export interface IdpSaml {
  /** `http://127.0.0.1:{port}`. */
  readonly url: string
  readonly entityId: string
  readonly metadataUrl: string
  /** The single sign-on URL, for both bindings. */
  readonly ssoUrl: string
  readonly metadata: () => string
  /** The signing certificates (PEM) the metadata lists, oldest first; the last one signs. */
  readonly certificates: () => ReadonlyArray<string>
  readonly addServiceProvider: (sp: ServiceProvider) => void
  readonly addUser: (loginHint: string, user: User) => void
  /** Every AuthnRequest `/sso` accepted, oldest first. */
  readonly authnRequests: () => ReadonlyArray<AuthnRequest>
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Sends an AuthnRequest (the redirect URL an SP produced, or its POST form fields) and answers the ACS post. */
  readonly signIn: (request: string | URL | { readonly SAMLRequest: string; readonly RelayState?: string }, options?: ResponseOptions) => Promise<AcsPost>
  /** An IdP-initiated sign-in at the SP `sp` (its entity ID): no request, no InResponseTo. */
  readonly signInIdpInitiated: (sp: string, options?: ResponseOptions & { readonly relayState?: string; readonly acsUrl?: string }) => Promise<AcsPost>
  /** Adds a signing key: the metadata lists it beside the others, and it signs from now on. Its certificate. */
  readonly rotateSigningKey: () => Promise<string>
  readonly close: () => Promise<void>
}

const PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"

interface KeyPair {
  readonly privateKey: string
  readonly certificate: string
}

interface RegisteredSp {
  readonly entityId: string
  readonly acsUrls: ReadonlyArray<string>
}

interface Pending {
  readonly sp: RegisteredSp
  readonly requestId: string
  readonly acsUrl: string
  readonly relayState: string | undefined
  readonly loginHint: string | undefined
}

const escapeXml = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;")

const escapeHtml = escapeXml

const readBody = (request: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const newId = () => `_${NodeCrypto.randomBytes(20).toString("hex")}`

export const start = async (options: Options = {}): Promise<IdpSaml> => {
  const [samlify, selfsigned] = await Promise.all([import("samlify"), import("selfsigned")])

  // samlify refuses to parse without a validator; it is process-wide, and this one is the kit's (see above).
  samlify.setSchemaValidator({
    validate: async (xml: string) => {
      if (/<!DOCTYPE/i.test(xml)) throw new Error("a DOCTYPE is not allowed")
      const root = SamlTamper.parseXml(xml).documentElement
      if (root?.namespaceURI !== PROTOCOL) throw new Error("not a SAML protocol message")
      return "well-formed"
    }
  })

  const makeKeyPair = async (notAfter?: Date): Promise<KeyPair> => {
    const generated = await selfsigned.generate([{ name: "commonName", value: "orgplane test IdP" }], {
      keySize: 2048,
      algorithm: "sha256",
      ...(notAfter === undefined ? {} : { notAfterDate: notAfter })
    })
    return { privateKey: generated.private, certificate: generated.cert }
  }

  const users = new Map<string, User>(Object.entries(options.users ?? {}))
  const serviceProviders = new Map<string, RegisteredSp>()
  const requests: Array<RecordedRequest> = []
  const accepted: Array<AuthnRequest> = []
  const pending = new Map<string, Pending>()
  const keys: Array<KeyPair> = []
  let strangerKey: Promise<KeyPair> | undefined
  const attributeName = (name: AttributeName) => options.attributeNames?.[name] ?? name

  const server = Http.createServer((request, response) => void handle(request, response))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
  const entityId = options.entityId ?? `${url}/metadata`
  const ssoUrl = `${url}/sso`
  keys.push(await makeKeyPair(options.certificateNotAfter))

  const binding = samlify.Constants.namespace.binding
  /** An IdentityProvider entity signing with `key` (and listing `certificates` in its metadata). */
  const idpEntity = (key: KeyPair, certificates: ReadonlyArray<string>, signatureAlgorithm = RSA_SHA256) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: key.privateKey,
      signingCert: certificates.length === 1 ? certificates[0] : [...certificates],
      requestSignatureAlgorithm: signatureAlgorithm,
      wantAuthnRequestsSigned: false,
      nameIDFormat: [EMAIL_FORMAT],
      singleSignOnService: [
        { Binding: binding.redirect, Location: ssoUrl },
        { Binding: binding.post, Location: ssoUrl }
      ],
      singleLogoutService: [{ Binding: binding.redirect, Location: `${url}/slo` }]
    })
  const spEntity = (sp: RegisteredSp, signAssertion: boolean, signResponse: boolean) =>
    samlify.ServiceProvider({
      entityID: sp.entityId,
      assertionConsumerService: sp.acsUrls.map((location) => ({ Binding: binding.post, Location: location })),
      wantAssertionsSigned: signAssertion,
      wantMessageSigned: signResponse
    })
  const certificates = () => keys.map((k) => k.certificate)
  const metadata = () => idpEntity(keys[keys.length - 1], certificates()).getMetadata()

  const addServiceProvider = (sp: ServiceProvider) => {
    if ("metadata" in sp) {
      const parsed = samlify.ServiceProvider({ metadata: sp.metadata }).entityMeta
      // Without a binding samlify answers every service, as `{ binding, location }`.
      const services: unknown = (parsed.getAssertionConsumerService as (binding?: string) => unknown)()
      const acsUrls = (Array.isArray(services) ? services : [services])
        .filter((service): service is { binding: string; location: string } => service?.binding === binding.post && typeof service.location === "string")
        .map((service) => service.location)
      if (acsUrls.length === 0) throw new Error(`IdpSaml: the metadata of ${parsed.getEntityID()} names no HTTP-POST AssertionConsumerService`)
      serviceProviders.set(parsed.getEntityID(), { entityId: parsed.getEntityID(), acsUrls })
    } else {
      serviceProviders.set(sp.entityId, { entityId: sp.entityId, acsUrls: [...sp.acsUrls] })
    }
  }
  for (const sp of options.serviceProviders ?? []) addServiceProvider(sp)

  const chooseUser = (responseOptions: ResponseOptions, loginHint: string | undefined): User => {
    const hint = responseOptions.as ?? loginHint ?? (users.size === 1 ? [...users.keys()][0] : undefined)
    const user = hint === undefined ? undefined : users.get(hint)
    if (user === undefined) throw new Error(hint === undefined ? "IdpSaml: no user to sign in as (no `as`, no login_hint)" : `IdpSaml: no user with login hint ${hint}`)
    return user
  }

  const attributeStatement = (user: User) => {
    const attributes: Array<[AttributeName, ReadonlyArray<string>]> = [
      ["email", [user.email]],
      ["name", user.name === undefined ? [] : [user.name]],
      ["givenName", user.givenName === undefined ? [] : [user.givenName]],
      ["surname", user.surname === undefined ? [] : [user.surname]],
      ["groups", user.groups ?? []]
    ]
    const xml = attributes
      .filter(([, values]) => values.length > 0)
      .map(([key, values]) => {
        const name = attributeName(key)
        const format = name.includes(":") ? "urn:oasis:names:tc:SAML:2.0:attrname-format:uri" : "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
        const valuesXml = values.map((v) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(v)}</saml:AttributeValue>`).join("")
        return `<saml:Attribute Name="${escapeXml(name)}" NameFormat="${format}">${valuesXml}</saml:Attribute>`
      })
      .join("")
    return `<saml:AttributeStatement>${xml}</saml:AttributeStatement>`
  }

  /** The signed Response for `user` at `sp`, then the tamper's edits. */
  const respond = async (
    sp: RegisteredSp,
    user: User,
    target: { readonly acsUrl: string; readonly inResponseTo: string | undefined; readonly relayState: string | undefined },
    responseOptions: ResponseOptions
  ): Promise<AcsPost> => {
    const tamper = responseOptions.tamper
    const wrapping = tamper?._tag === "wrapping" ? tamper : undefined
    let signAssertion = responseOptions.signAssertion ?? options.signAssertion ?? true
    let signResponse = responseOptions.signResponse ?? options.signResponse ?? true
    if (wrapping !== undefined) {
      signResponse = SamlTamper.attacksResponseSignature(wrapping.variant)
      signAssertion = !signResponse
    }
    const isStatus = tamper?._tag === "status"
    if (isStatus) {
      signAssertion = false
      signResponse = true
    }
    const now = Date.now()
    const at = (offsetMinutes: number) => new Date(now + offsetMinutes * 60_000).toISOString()
    const [issued, notBefore, notOnOrAfter] =
      tamper?._tag === "expired" ? [at(-20), at(-20), at(-10)] : tamper?._tag === "notYetValid" ? [at(0), at(10), at(20)] : [at(0), at(0), at(5)]
    const issuer = tamper?._tag === "wrongIssuer" ? (tamper.issuer ?? `${url}/another-idp`) : entityId
    const responseId = newId()
    const assertionId = newId()
    const inResponseTo = responseOptions.inResponseTo === null ? undefined : (responseOptions.inResponseTo ?? target.inResponseTo)
    const values: Record<string, string | undefined> = {
      ID: responseId,
      AssertionID: assertionId,
      Destination: tamper?._tag === "wrongDestination" ? (tamper.destination ?? `${target.acsUrl}/elsewhere`) : target.acsUrl,
      Audience: tamper?._tag === "wrongAudience" ? (tamper.audience ?? "https://another-sp.example/saml") : sp.entityId,
      SubjectRecipient: tamper?._tag === "wrongRecipient" ? (tamper.recipient ?? `${target.acsUrl}/elsewhere`) : target.acsUrl,
      Issuer: issuer,
      IssueInstant: issued,
      StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
      ConditionsNotBefore: notBefore,
      ConditionsNotOnOrAfter: notOnOrAfter,
      SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
      NameIDFormat: EMAIL_FORMAT,
      NameID: user.email,
      InResponseTo: inResponseTo
    }
    const authnStatement =
      `<saml:AuthnStatement AuthnInstant="${issued}" SessionIndex="${newId()}"><saml:AuthnContext>` +
      `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
      `</saml:AuthnContext></saml:AuthnStatement>`
    const render = (template: string) => {
      if (isStatus) {
        const subStatus = tamper.subStatus ?? "urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"
        const message = tamper.message === undefined ? "" : `<samlp:StatusMessage>${escapeXml(tamper.message)}</samlp:StatusMessage>`
        return samlify.SamlLib.replaceTagsByValue(
          `<samlp:Response xmlns:samlp="${PROTOCOL}" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{ID}" Version="2.0" IssueInstant="{IssueInstant}" Destination="{Destination}" InResponseTo="{InResponseTo}">` +
            `<saml:Issuer>{Issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder">` +
            `<samlp:StatusCode Value="${escapeXml(subStatus)}"/></samlp:StatusCode>${message}</samlp:Status></samlp:Response>`,
          values
        )
      }
      return samlify.SamlLib.replaceTagsByValue(template, values)
        .replace("{AuthnStatement}", () => authnStatement)
        .replace("{AttributeStatement}", () => attributeStatement(user))
    }
    const signingKey = tamper?._tag === "unknownKey" ? await (strangerKey ??= makeKeyPair()) : keys[keys.length - 1]
    const idp = idpEntity(signingKey, [signingKey.certificate], tamper?._tag === "sha1" ? RSA_SHA1 : RSA_SHA256)
    const created = await idp.createLoginResponse(spEntity(sp, signAssertion, signResponse), {} as Parameters<Samlify.IdentityProviderInstance["createLoginResponse"]>[1], "post", {}, {
      customTagReplacement: (template: string) => ({ id: responseId, context: render(template) })
    })
    let xml = Buffer.from(created.context, "base64").toString("utf8")
    if (tamper?._tag === "unsigned" || (!signAssertion && !signResponse)) xml = SamlTamper.removeSignatures(xml)
    if (tamper?._tag === "alteredAfterSigning") xml = SamlTamper.alterAfterSigning(xml, tamper.email ?? "mallory@evil.test")
    if (wrapping !== undefined) {
      const victim = wrapping.impersonate === undefined ? `admin@${user.email.split("@")[1]}` : chooseUser({ as: wrapping.impersonate }, undefined).email
      xml = SamlTamper.wrap(xml, wrapping.variant, victim, newId)
    }
    const SAMLResponse = Buffer.from(xml, "utf8").toString("base64")
    const relay = target.relayState === undefined ? {} : { RelayState: target.relayState }
    return { acsUrl: target.acsUrl, SAMLResponse, ...relay, form: { SAMLResponse, ...relay }, xml, responseId, assertionId }
  }

  /** Accepts an AuthnRequest from either binding; the pending sign-in's key, or an error for a 400. */
  const accept = async (params: Record<string, string>, via: "redirect" | "post"): Promise<{ key: string } | { error: string }> => {
    const encoded = params.SAMLRequest
    if (encoded === undefined) return { error: "SAMLRequest is missing" }
    let xml: string
    try {
      const bytes = Buffer.from(encoded, "base64")
      xml = via === "redirect" ? Zlib.inflateRawSync(bytes).toString("utf8") : bytes.toString("utf8")
    } catch {
      return { error: "SAMLRequest does not decode (HTTP-Redirect: base64 of DEFLATE)" }
    }
    // SAML bindings §3.5.4: by HTTP-POST the message is base64 XML, not deflated (node-saml deflates it unless
    // `skipRequestCompression` is set).
    if (!xml.trimStart().startsWith("<")) return { error: "SAMLRequest is not XML (HTTP-POST: base64 of the XML, without DEFLATE)" }
    const issuerMatch = /<(?:[\w-]+:)?Issuer[^>]*>([^<]+)<\/(?:[\w-]+:)?Issuer>/.exec(xml)
    const sp = issuerMatch === null ? undefined : serviceProviders.get(issuerMatch[1].trim())
    if (sp === undefined) return { error: `unknown service provider ${issuerMatch?.[1] ?? "(no Issuer)"}` }
    let extract: { request: { id: string; destination?: string; assertionConsumerServiceUrl?: string } }
    try {
      const entity = spEntity(sp, true, true)
      const idp = idpEntity(keys[keys.length - 1], certificates())
      const parsed =
        via === "redirect"
          ? await idp.parseLoginRequest(entity, "redirect", { query: params, octetString: "" })
          : await idp.parseLoginRequest(entity, "post", { body: params })
      extract = parsed.extract as typeof extract
    } catch (error) {
      return { error: `invalid AuthnRequest: ${error instanceof Error ? error.message : String(error)}` }
    }
    const { id, destination, assertionConsumerServiceUrl } = extract.request
    if (destination !== undefined && destination !== ssoUrl) return { error: `Destination ${destination} is not this IdP's SSO URL ${ssoUrl}` }
    const acsUrl = assertionConsumerServiceUrl ?? sp.acsUrls[0]
    if (acsUrl === undefined || !sp.acsUrls.includes(acsUrl)) return { error: `ACS URL ${acsUrl} is not registered for ${sp.entityId}` }
    accepted.push({
      id,
      issuer: sp.entityId,
      binding: via,
      xml,
      acsUrl,
      ...(destination === undefined ? {} : { destination }),
      ...(params.RelayState === undefined ? {} : { relayState: params.RelayState })
    })
    const key = NodeCrypto.randomBytes(16).toString("hex")
    pending.set(key, { sp, requestId: id, acsUrl, relayState: params.RelayState, loginHint: params.login_hint })
    return { key }
  }

  const page = (response: Http.ServerResponse, status: number, title: string, body: string) => {
    response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
    response.end(`<!doctype html><html><head><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`)
  }

  const handle = async (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const body = await readBody(request)
    const target = new URL(request.url ?? "/", url)
    const form = request.headers["content-type"]?.includes("application/x-www-form-urlencoded") ? Object.fromEntries(new URLSearchParams(body)) : {}
    const params: Record<string, string> = { ...Object.fromEntries(target.searchParams), ...form }
    const record: RecordedRequest = { method: request.method ?? "", path: request.url ?? "", params, status: null }
    requests.push(record)
    response.on("finish", () => {
      record.status = response.statusCode
    })
    try {
      const route = `${request.method} ${target.pathname}`
      if (route === "GET /metadata") {
        response.writeHead(200, { "content-type": "application/samlmetadata+xml" })
        return response.end(metadata())
      }
      if (route === "GET /sso" || route === "POST /sso") {
        const result = await accept(params, request.method === "GET" ? "redirect" : "post")
        if ("error" in result) return page(response, 400, "Sign-in failed", `<p id="error">${escapeHtml(result.error)}</p>`)
        return page(
          response,
          200,
          "Sign in",
          `<form method="post" action="/login"><input type="hidden" name="request" value="${result.key}">` +
            `<input name="user" autocomplete="username"><button>Sign in</button></form>`
        )
      }
      if (route === "POST /login") {
        const signingIn = pending.get(params.request ?? "")
        if (signingIn === undefined) return page(response, 400, "Sign-in failed", `<p id="error">unknown or finished sign-in</p>`)
        let user: User
        try {
          user = chooseUser(params.user ? { as: params.user } : {}, signingIn.loginHint)
        } catch (error) {
          return page(response, 400, "Sign in", `<p id="error">${escapeHtml(error instanceof Error ? error.message : String(error))}</p>`)
        }
        pending.delete(params.request)
        const post = await respond(signingIn.sp, user, { acsUrl: signingIn.acsUrl, inResponseTo: signingIn.requestId, relayState: signingIn.relayState }, {})
        const fields = Object.entries(post.form).map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
        return page(
          response,
          200,
          "Signing in",
          `<form method="post" action="${escapeHtml(post.acsUrl)}">${fields.join("")}<noscript><button>Continue</button></noscript></form>` +
            `<script>document.forms[0].submit()</script>`
        )
      }
      if (target.pathname === "/slo") return page(response, 501, "Not implemented", "<p>single logout is not implemented by this test IdP</p>")
      return page(response, 404, "Not found", "<p>not found</p>")
    } catch (error) {
      if (!response.headersSent) page(response, 500, "Error", `<p id="error">${escapeHtml(String(error))}</p>`)
    }
  }

  const signIn: IdpSaml["signIn"] = async (authnRequest, responseOptions = {}) => {
    const isForm = typeof authnRequest === "object" && !(authnRequest instanceof URL)
    const answer = isForm
      ? await fetch(ssoUrl, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ SAMLRequest: authnRequest.SAMLRequest, ...(authnRequest.RelayState === undefined ? {} : { RelayState: authnRequest.RelayState }) })
        })
      : await fetch(authnRequest, { redirect: "manual" })
    const html = await answer.text()
    const key = /name="request" value="([0-9a-f]+)"/.exec(html)?.[1]
    if (answer.status !== 200 || key === undefined) {
      const reason = /<p id="error">([^<]*)<\/p>/.exec(html)?.[1] ?? html.slice(0, 200)
      throw new Error(`IdpSaml.signIn: the IdP answered ${answer.status}: ${reason}`)
    }
    const signingIn = pending.get(key)!
    pending.delete(key)
    return respond(
      signingIn.sp,
      chooseUser(responseOptions, signingIn.loginHint),
      { acsUrl: signingIn.acsUrl, inResponseTo: signingIn.requestId, relayState: signingIn.relayState },
      responseOptions
    )
  }

  return {
    url,
    entityId,
    metadataUrl: `${url}/metadata`,
    ssoUrl,
    metadata,
    certificates,
    addServiceProvider,
    addUser: (loginHint, user) => void users.set(loginHint, user),
    authnRequests: () => accepted,
    requests,
    signIn,
    signInIdpInitiated: async (spEntityId, initiated = {}) => {
      const sp = serviceProviders.get(spEntityId)
      if (sp === undefined) throw new Error(`IdpSaml.signInIdpInitiated: unknown service provider ${spEntityId}`)
      const acsUrl = initiated.acsUrl ?? sp.acsUrls[0]
      return respond(sp, chooseUser(initiated, undefined), { acsUrl, inResponseTo: undefined, relayState: initiated.relayState }, initiated)
    },
    rotateSigningKey: async () => {
      const added = await makeKeyPair(options.certificateNotAfter)
      keys.push(added)
      return added.certificate
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
