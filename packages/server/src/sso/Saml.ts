/**
 * The SAML 2.0 service-provider engine of SSO sign-in, over `@node-saml/node-saml` (which checks the signatures,
 * conditions, audience and InResponseTo), plus the checks node-saml leaves to its caller: SHA-1 refused, the
 * Response's Destination and the subject confirmation's Recipient must be our ACS URL, the Issuer must be the IdP's
 * entity id, the subject confirmation must answer the expected request (or none when IdP-initiated sign-in is
 * allowed, with the RelayState on the allow-list). Every refusal is a `SamlResponseError` with a stable code.
 * InResponseTo is single use through the caller's intent table: it passes the request id it stored at start, and
 * whether that intent was already used.
 *
 * Its `layer` takes the outbound guard.
 */
import type { Profile, SamlConfig } from "@node-saml/node-saml"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as NodeCrypto from "node:crypto"
import { lazily } from "../platform/Lazy.js"
import { Outbound } from "../platform/Outbound.js"
import { type IdpSettings, maxMetadataBytes, parseIdpMetadata, SamlMetadataError } from "./SamlMetadata.js"
import { attribute, child, children, descendants, Ns, parseStrict, textOf } from "./SamlXml.js"

/** node-saml and its XML signature stack: loaded by the first SAML operation, not at start-up. */
const library = lazily(() => import("@node-saml/node-saml"))
type Library = Effect.Success<typeof library>

export const emailAddressFormat = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
/** The clock difference accepted between the IdP and us. */
export const clockSkew = Duration.minutes(2)
/** Largest SAMLResponse form field accepted (base64); an IdP sending hundreds of groups stays well under it. */
export const maxResponseChars = 512 * 1024
export const metadataFetchTimeout = Duration.seconds(10)

/** Attribute names an IdP sends for each profile field, read first; then `defaultAttributeNames`. */
export interface AttributeMapping {
  readonly email?: string | undefined
  readonly name?: string | undefined
  readonly givenName?: string | undefined
  readonly familyName?: string | undefined
  readonly groups?: string | undefined
}

/** The names the common IdPs use (plain names, LDAP OIDs, and the claim URIs of Entra ID and AD FS). */
export const defaultAttributeNames: { readonly [K in keyof AttributeMapping]-?: ReadonlyArray<string> } = {
  email: ["email", "mail", "emailAddress", "urn:oid:0.9.2342.19200300.100.1.3", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"],
  name: ["name", "displayName", "urn:oid:2.16.840.1.113730.3.1.241", "http://schemas.microsoft.com/identity/claims/displayname"],
  givenName: ["givenName", "firstName", "urn:oid:2.5.4.42", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"],
  familyName: ["familyName", "surname", "sn", "lastName", "urn:oid:2.5.4.4", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"],
  groups: ["groups", "memberOf", "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups"]
}

/** orgplane's service provider for one connection, and what it accepts. */
export interface SpSettings {
  readonly entityId: string
  readonly acsUrl: string
  /** Asked for in AuthnRequests and published in the SP metadata; default emailAddress. */
  readonly nameIdFormat?: string | undefined
  readonly allowIdpInitiated: boolean
  /** RelayState values an IdP-initiated Response may carry (exact match); an absent RelayState is always accepted. */
  readonly relayStateAllowList: ReadonlyArray<string>
  readonly mapping?: AttributeMapping | undefined
}

export type SamlResponseErrorCode =
  | "response_invalid"
  | "signature_invalid"
  | "unsupported_algorithm"
  | "assertion_expired"
  | "assertion_not_yet_valid"
  | "audience_mismatch"
  | "destination_mismatch"
  | "issuer_mismatch"
  | "in_response_to_mismatch"
  | "replayed"
  | "idp_initiated_not_allowed"
  | "relay_state_not_allowed"
  | "idp_error"
  | "email_missing"

/** A Response refused; `message` is readable and names nothing secret (it may name the IdP's own status message). */
export class SamlResponseError extends Data.TaggedError("SamlResponseError")<{
  readonly code: SamlResponseErrorCode
  readonly message: string
}> {}

/** The person a valid Response names, as the mapping reads it. */
export interface SamlProfile {
  /** The NameID. */
  readonly subject: string
  readonly nameIdFormat: string | null
  readonly email: string
  /** The IdP asserted it. */
  readonly emailVerified: true
  readonly name: string | null
  readonly givenName: string | null
  readonly familyName: string | null
  readonly groups: ReadonlyArray<string>
  /** Every attribute received, by name (values as strings). */
  readonly attributes: Readonly<Record<string, ReadonlyArray<string>>>
  readonly issuer: string
  readonly sessionIndex: string | null
  /** The assertion's ID and end of validity: what a caller keeps to refuse a replayed IdP-initiated Response. */
  readonly assertionId: string | null
  readonly notOnOrAfter: Date | null
  /** The request answered, or null for an IdP-initiated Response. */
  readonly inResponseTo: string | null
  readonly relayState: string | null
}

/** What the ACS received, as the browser posted it. */
export interface AcsForm {
  readonly SAMLResponse?: string | undefined
  readonly RelayState?: string | undefined
}

/**
 * The request the caller expects the Response to answer: the id its intent stored at start, and whether that intent
 * was already used (a Response answering it again is a replay); `requestId: null` when the caller found no intent
 * and the Response is to be taken as IdP-initiated.
 */
export interface Expected {
  readonly requestId: string | null
  readonly alreadyUsed?: boolean | undefined
}

export type SignInStart =
  | { readonly requestId: string; readonly binding: "redirect"; readonly url: string }
  | { readonly requestId: string; readonly binding: "post"; readonly url: string; readonly form: Readonly<Record<string, string>> }

export interface SamlService {
  readonly parseIdpMetadata: (xml: string) => Effect.Effect<IdpSettings, SamlMetadataError>
  /** The metadata at a user-supplied URL, through the outbound guard, within `metadataFetchTimeout` and `maxMetadataBytes`. */
  readonly fetchIdpMetadata: (url: string) => Effect.Effect<IdpSettings, SamlMetadataError>
  readonly spMetadata: (sp: SpSettings) => Effect.Effect<string>
  readonly startSignIn: (idp: IdpSettings, sp: SpSettings, relayState: string | null) => Effect.Effect<SignInStart>
  /** The Response's InResponseTo, not yet verified: what the caller looks its intent up by. */
  readonly inResponseToOf: (form: AcsForm) => Effect.Effect<string | null, SamlResponseError>
  readonly validateResponse: (idp: IdpSettings, sp: SpSettings, form: AcsForm, expected: Expected) => Effect.Effect<SamlProfile, SamlResponseError>
}

export class Saml extends Context.Service<Saml, SamlService>()("@orgplane/server/sso/Saml") {
  static readonly layer = Layer.effect(Saml, Effect.map(Effect.service(Outbound), (outbound) => make(outbound)))
}

const refuse = (code: SamlResponseErrorCode, message: string) => new SamlResponseError({ code, message })

const sha256OrStronger = {
  signature: new Set([
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
    "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
    "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
    "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512"
  ]),
  digest: new Set([
    "http://www.w3.org/2001/04/xmlenc#sha256",
    "http://www.w3.org/2001/04/xmldsig-more#sha384",
    "http://www.w3.org/2001/04/xmlenc#sha512"
  ])
}

/** The decoded Response document, or `response_invalid`. */
const decode = (form: AcsForm): Result.Result<{ readonly xml: string; readonly doc: Document; readonly base64: string }, SamlResponseError> => {
  const raw = form.SAMLResponse
  if (typeof raw !== "string" || raw.trim() === "") return Result.fail(refuse("response_invalid", "The form has no SAMLResponse."))
  if (raw.length > maxResponseChars) return Result.fail(refuse("response_invalid", `The SAMLResponse is larger than ${maxResponseChars / 1024} KiB.`))
  const base64 = raw.replace(/\s+/g, "")
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 === 1) {
    return Result.fail(refuse("response_invalid", "The SAMLResponse is not base64."))
  }
  let xml: string
  try {
    xml = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(base64, "base64"))
  } catch {
    return Result.fail(refuse("response_invalid", "The SAMLResponse does not decode to UTF-8 text."))
  }
  const parsed = parseStrict(xml)
  if (Result.isFailure(parsed)) {
    return Result.fail(refuse("response_invalid", parsed.failure.problem === "doctype"
      ? "The SAMLResponse has a DOCTYPE, which is refused."
      : `The SAMLResponse is not well-formed XML: ${parsed.failure.detail}.`))
  }
  const root = parsed.success.documentElement!
  if (root.namespaceURI !== Ns.samlp || root.localName !== "Response") {
    return Result.fail(refuse("response_invalid", "The SAMLResponse is not a SAML 2.0 Response."))
  }
  return Result.succeed({ xml, doc: parsed.success, base64 })
}

/** node-saml accepts SHA-1: every signature and digest algorithm in the document must be SHA-256 or stronger. */
const checkAlgorithms = (doc: Document) => {
  for (const [element, allowed, what] of [["SignatureMethod", sha256OrStronger.signature, "signature"], ["DigestMethod", sha256OrStronger.digest, "digest"]] as const) {
    for (const method of descendants(doc, Ns.ds, element)) {
      const algorithm = attribute(method, "Algorithm") ?? "(none)"
      if (!allowed.has(algorithm)) {
        return Result.fail(refuse("unsupported_algorithm", `The Response uses the ${what} algorithm ${algorithm.slice(0, 100)}: only SHA-256 or stronger is accepted (SHA-1 is refused).`))
      }
    }
  }
  return Result.succeed(undefined)
}

const parseInstant = (value: string | undefined) => {
  if (value === undefined) return undefined
  const millis = Date.parse(value)
  return Number.isNaN(millis) ? undefined : millis
}

/** node-saml's refusals, by their message, as our codes. */
const fromNodeSaml = (lib: Library, error: unknown, doc: Document, nowMs: number): SamlResponseError => {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof lib.SamlStatusError || message.startsWith("SAML provider returned")) {
    return refuse("idp_error", `The IdP refused the sign-in: ${message.replace(/^SAML provider returned /, "").slice(0, 300)}`)
  }
  if (/^Invalid (document )?signature|^Cannot obtain assertion/.test(message)) {
    return refuse("signature_invalid", `The Response's signature does not verify against the IdP's certificates (${message.slice(0, 120)}).`)
  }
  if (/InResponseTo/.test(message)) return refuse("in_response_to_mismatch", "The Response does not answer the sign-in request it was expected to.")
  if (message.startsWith("SAML assertion not yet valid")) return refuse("assertion_not_yet_valid", "The assertion is not valid yet (its NotBefore is in the future).")
  if (message.startsWith("SAML assertion expired") || message.startsWith("No valid subject confirmation")) {
    const skew = Duration.toMillis(clockSkew)
    const early = descendants(doc, Ns.saml, "SubjectConfirmationData").some((data) => (parseInstant(attribute(data, "NotBefore")) ?? -Infinity) > nowMs + skew)
    return early
      ? refuse("assertion_not_yet_valid", "The assertion's subject confirmation is not valid yet.")
      : refuse("assertion_expired", "The assertion has expired (its NotOnOrAfter has passed).")
  }
  if (/audience/i.test(message)) return refuse("audience_mismatch", "The assertion's Audience is not this connection's SP entity id.")
  if (message === "Missing SAML assertion") return refuse("response_invalid", "The Response carries no assertion.")
  return refuse("response_invalid", `The Response was refused: ${message.slice(0, 200)}`)
}

/** An attribute's values as strings (node-saml gives a string, an array, or an object for structured values). */
const stringsOf = (value: unknown): Array<string> =>
  Array.isArray(value) ? value.flatMap(stringsOf) : typeof value === "string" ? [value] : typeof value === "number" ? [String(value)] : []

const emailLike = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const make = (outbound: Outbound["Service"]): SamlService => {
  const nodeSaml = (lib: Library, idp: IdpSettings, sp: SpSettings, config: Partial<SamlConfig>) =>
    new lib.SAML({
      callbackUrl: sp.acsUrl,
      issuer: sp.entityId,
      audience: sp.entityId,
      entryPoint: idp.ssoUrl,
      idpIssuer: idp.entityId,
      idpCert: idp.certificates.map((certificate) => certificate.pem),
      identifierFormat: sp.nameIdFormat ?? emailAddressFormat,
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: Duration.toMillis(clockSkew),
      // A RequestedAuthnContext of PasswordProtectedTransport makes IdPs refuse passwordless and MFA sign-ins.
      disableRequestedAuthnContext: true,
      ...config
    })

  const fetchIdpMetadata = Effect.fn("Saml.fetchIdpMetadata")((url: string) =>
    outbound.execute(HttpClientRequest.get(url).pipe(HttpClientRequest.setHeader("accept", "application/samlmetadata+xml, application/xml, text/xml")), {
      destination: "user",
      timeout: metadataFetchTimeout,
      maxBodyBytes: maxMetadataBytes
    }).pipe(
      Effect.mapError((error) =>
        error.reason === "too_large"
          ? new SamlMetadataError({ code: "metadata_too_large", message: `The metadata at ${error.origin} is larger than ${maxMetadataBytes / 1024} KiB.` })
          : new SamlMetadataError({ code: "metadata_unreachable", message: `The metadata URL could not be fetched: ${error.message}.` })
      ),
      Effect.filterOrFail(
        (response) => response.status === 200,
        (response) => new SamlMetadataError({ code: "metadata_unreachable", message: `The metadata URL answered HTTP ${response.status}.` })
      ),
      Effect.flatMap((response) =>
        Effect.try({
          try: () => new TextDecoder("utf-8", { fatal: true }).decode(response.body),
          catch: () => new SamlMetadataError({ code: "metadata_not_xml", message: "The metadata URL answered something that is not UTF-8 text." })
        })
      ),
      Effect.flatMap(parseIdpMetadata)
    ))

  const spMetadata = Effect.fn("Saml.spMetadata")((sp: SpSettings) =>
    Effect.map(library, (lib) =>
      lib.generateServiceProviderMetadata({
        issuer: sp.entityId,
        callbackUrl: sp.acsUrl,
        identifierFormat: sp.nameIdFormat ?? emailAddressFormat,
        wantAssertionsSigned: true
      })))

  const startSignIn = Effect.fn("Saml.startSignIn")((idp: IdpSettings, sp: SpSettings, relayState: string | null) =>
    Effect.flatMap(library, (lib) => Effect.promise(async (): Promise<SignInStart> => {
      const requestId = `_${NodeCrypto.randomBytes(20).toString("hex")}`
      const saml = nodeSaml(lib, idp, sp, {
        generateUniqueId: () => requestId,
        authnRequestBinding: idp.ssoBinding === "post" ? "HTTP-POST" : "HTTP-Redirect",
        // The HTTP-POST binding carries the request base64-encoded, not deflated (SAML bindings 3.5.4).
        skipRequestCompression: idp.ssoBinding === "post"
      })
      if (idp.ssoBinding === "redirect") {
        return { requestId, binding: "redirect", url: await saml.getAuthorizeUrlAsync(relayState ?? "", undefined, {}) }
      }
      const html = await saml.getAuthorizeFormAsync(relayState ?? "", undefined, {})
      // node-saml only renders the POST form as HTML: its values are read back from the inputs it wrote.
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]
      const form: Record<string, string> = { SAMLRequest: field("SAMLRequest") ?? "" }
      if (relayState) form.RelayState = relayState
      return { requestId, binding: "post", url: idp.ssoUrl, form }
    })))

  const inResponseToOf = Effect.fn("Saml.inResponseToOf")((form: AcsForm): Effect.Effect<string | null, SamlResponseError> =>
    Result.match(decode(form), {
      onFailure: Effect.fail,
      onSuccess: ({ doc }) => Effect.succeed(attribute(doc.documentElement!, "InResponseTo") ?? null)
    }))

  /** The checks before node-saml: what the caller expects, and the algorithms. */
  const precheck = (doc: Document, sp: SpSettings, form: AcsForm, expected: Expected) => {
    const inResponseTo = attribute(doc.documentElement!, "InResponseTo") ?? null
    if (expected.requestId !== null) {
      if (inResponseTo !== expected.requestId) {
        return Result.fail(refuse("in_response_to_mismatch", inResponseTo === null
          ? "The Response answers no request (IdP-initiated), but a sign-in started here was expected."
          : "The Response answers another sign-in request than the one expected."))
      }
      if (expected.alreadyUsed === true) return Result.fail(refuse("replayed", "The Response answers a sign-in request that was already used: a replay."))
    } else {
      if (inResponseTo !== null) {
        return Result.fail(refuse("in_response_to_mismatch", "The Response answers a sign-in request that is unknown or expired."))
      }
      if (!sp.allowIdpInitiated) {
        return Result.fail(refuse("idp_initiated_not_allowed", "IdP-initiated sign-in is not enabled for this connection: start the sign-in from orgplane."))
      }
      const relayState = form.RelayState ?? ""
      if (relayState !== "" && !sp.relayStateAllowList.includes(relayState)) {
        return Result.fail(refuse("relay_state_not_allowed", "The RelayState of this IdP-initiated sign-in is not on the connection's allow-list."))
      }
    }
    return checkAlgorithms(doc)
  }

  /** The checks node-saml leaves to its caller, on the Response and on the assertion node-saml verified. */
  const postcheck = (doc: Document, assertion: Element, idp: IdpSettings, sp: SpSettings, expected: Expected, nowMs: number) => {
    const root = doc.documentElement!
    const responseIssuer = child(root, Ns.saml, "Issuer")
    const assertionIssuer = textOf(child(assertion, Ns.saml, "Issuer"))
    if (assertionIssuer !== idp.entityId || (responseIssuer !== undefined && textOf(responseIssuer) !== idp.entityId)) {
      return Result.fail(refuse("issuer_mismatch", `The Response's Issuer is not the IdP's entity id ${idp.entityId}.`))
    }
    if (attribute(root, "Destination") !== sp.acsUrl) {
      return Result.fail(refuse("destination_mismatch", `The Response's Destination is not this connection's ACS URL ${sp.acsUrl}.`))
    }
    const subject = child(assertion, Ns.saml, "Subject")
    const bearer = subject === undefined ? [] : children(subject, Ns.saml, "SubjectConfirmation")
      .filter((confirmation) => attribute(confirmation, "Method") === "urn:oasis:names:tc:SAML:2.0:cm:bearer")
      .flatMap((confirmation) => children(confirmation, Ns.saml, "SubjectConfirmationData"))
    if (bearer.length === 0) return Result.fail(refuse("response_invalid", "The assertion has no bearer subject confirmation."))
    if (bearer.some((data) => attribute(data, "Recipient") !== sp.acsUrl)) {
      return Result.fail(refuse("destination_mismatch", `The assertion's subject confirmation Recipient is not this connection's ACS URL ${sp.acsUrl}.`))
    }
    // node-saml checks the subject confirmation's times only when it checks InResponseTo: checked here always.
    const skew = Duration.toMillis(clockSkew)
    for (const data of bearer) {
      const notOnOrAfter = parseInstant(attribute(data, "NotOnOrAfter"))
      if (notOnOrAfter === undefined) return Result.fail(refuse("response_invalid", "The assertion's subject confirmation has no NotOnOrAfter."))
      if (nowMs - skew >= notOnOrAfter) return Result.fail(refuse("assertion_expired", "The assertion has expired (its subject confirmation's NotOnOrAfter has passed)."))
      if ((parseInstant(attribute(data, "NotBefore")) ?? -Infinity) > nowMs + skew) {
        return Result.fail(refuse("assertion_not_yet_valid", "The assertion's subject confirmation is not valid yet."))
      }
      // In the signed assertion: a Response's InResponseTo can be rewritten around an assertion signed alone.
      if ((attribute(data, "InResponseTo") ?? null) !== expected.requestId) {
        return Result.fail(refuse("in_response_to_mismatch", expected.requestId === null
          ? "The assertion answers a sign-in request, but arrived as IdP-initiated."
          : "The assertion answers another sign-in request than the one expected."))
      }
    }
    return Result.succeed(bearer)
  }

  const toProfile = (profile: Profile, bearer: ReadonlyArray<Element>, assertion: Element, sp: SpSettings, form: AcsForm): Result.Result<SamlProfile, SamlResponseError> => {
    const attributes: Record<string, ReadonlyArray<string>> = {}
    for (const [name, value] of Object.entries((profile.attributes ?? {}) as Record<string, unknown>)) attributes[name] = stringsOf(value)
    const read = (field: keyof AttributeMapping): ReadonlyArray<string> => {
      const names = sp.mapping?.[field] ? [sp.mapping[field]!, ...defaultAttributeNames[field]] : defaultAttributeNames[field]
      for (const name of names) {
        const values = attributes[name]?.map((v) => v.trim()).filter((v) => v !== "")
        if (values !== undefined && values.length > 0) return values
      }
      return []
    }
    const nameIdFormat = typeof profile.nameIDFormat === "string" ? profile.nameIDFormat : null
    const subject = typeof profile.nameID === "string" ? profile.nameID.trim() : ""
    if (subject === "") return Result.fail(refuse("response_invalid", "The assertion has no NameID."))
    const email = read("email")[0] ?? (nameIdFormat === emailAddressFormat ? subject : undefined)
    if (email === undefined || !emailLike.test(email) || email.length > 320) {
      const attributeName = sp.mapping?.email ?? "email"
      return Result.fail(refuse("email_missing", `The assertion carries no email address (attribute ${attributeName}, or a NameID of the emailAddress format).`))
    }
    const notOnOrAfter = bearer.map((data) => parseInstant(attribute(data, "NotOnOrAfter"))).find((t) => t !== undefined)
    return Result.succeed({
      subject,
      nameIdFormat,
      email: email.toLowerCase(),
      emailVerified: true,
      name: read("name")[0] ?? null,
      givenName: read("givenName")[0] ?? null,
      familyName: read("familyName")[0] ?? null,
      groups: read("groups"),
      attributes,
      issuer: profile.issuer,
      sessionIndex: typeof profile.sessionIndex === "string" ? profile.sessionIndex : null,
      assertionId: attribute(assertion, "ID") ?? null,
      notOnOrAfter: notOnOrAfter === undefined ? null : new Date(notOnOrAfter),
      inResponseTo: typeof profile.inResponseTo === "string" ? profile.inResponseTo : null,
      relayState: form.RelayState === undefined || form.RelayState === "" ? null : form.RelayState
    })
  }

  const validateResponse = Effect.fn("Saml.validateResponse")(function*(idp: IdpSettings, sp: SpSettings, form: AcsForm, expected: Expected) {
    const { base64, doc } = yield* Effect.fromResult(decode(form))
    yield* Effect.fromResult(precheck(doc, sp, form, expected))
    // node-saml's cache answers only the one expected id: single use itself is the caller's intent table.
    const requestId = expected.requestId
    const lib = yield* library
    const saml = nodeSaml(lib, idp, sp, {
      validateInResponseTo: requestId === null ? lib.ValidateInResponseTo.never : lib.ValidateInResponseTo.always,
      cacheProvider: {
        saveAsync: async () => null,
        getAsync: async (key) => (key === requestId ? new Date().toISOString() : null),
        removeAsync: async () => null
      }
    })
    const started = Date.now()
    const { profile } = yield* Effect.tryPromise({
      try: () => saml.validatePostResponseAsync({ SAMLResponse: base64 }),
      catch: (error) => fromNodeSaml(lib, error, doc, started)
    })
    if (profile === null) return yield* refuse("response_invalid", "The Response carries no assertion.")
    // The assertion node-saml verified and read (not one found elsewhere in the document).
    const verified = parseStrict(profile.getAssertionXml?.() ?? "")
    const assertion = Result.isSuccess(verified) ? verified.success.documentElement : null
    if (assertion === null || assertion.namespaceURI !== Ns.saml || assertion.localName !== "Assertion") {
      return yield* refuse("response_invalid", "The verified assertion could not be read.")
    }
    const bearer = yield* Effect.fromResult(postcheck(doc, assertion, idp, sp, expected, started))
    return yield* Effect.fromResult(toProfile(profile, bearer, assertion, sp, form))
  })

  return {
    parseIdpMetadata,
    fetchIdpMetadata,
    spMetadata,
    startSignIn,
    inResponseToOf,
    validateResponse
  }
}
