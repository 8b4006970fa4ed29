/**
 * An identity provider's SAML settings, read from its metadata XML or given by hand: entity id, SSO URL and binding,
 * and every signing certificate with its expiry (several are accepted at once, so a rotation has no gap). Bad input
 * fails with `SamlMetadataError`, whose code and message a caller turns into a 400 or shows on the connection.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as NodeCrypto from "node:crypto"
import { attribute, children, Ns, parseStrict, textOf } from "./SamlXml.js"

export type SamlMetadataErrorCode =
  | "metadata_not_xml"
  | "metadata_doctype"
  | "metadata_too_large"
  | "metadata_unreachable"
  | "metadata_no_idp"
  | "metadata_invalid"
  | "certificate_invalid"

/** Why an IdP's metadata or settings are refused; `message` is readable and safe to show to the administrator. */
export class SamlMetadataError extends Data.TaggedError("SamlMetadataError")<{
  readonly code: SamlMetadataErrorCode
  readonly message: string
  /** `certificate_invalid` of a list: which certificate (from 0). */
  readonly index?: number | undefined
}> {}

/** Largest metadata document read (a single IdP's metadata is a few kilobytes; federation aggregates are refused). */
export const maxMetadataBytes = 512 * 1024
export const maxCertificates = 10

const bindings = {
  redirect: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
  post: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
} as const

export interface IdpCertificate {
  /** PEM, normalized (header, base64 in 64-character lines, footer; no final newline). */
  readonly pem: string
  readonly notBefore: Date
  readonly notAfter: Date
  readonly subject: string
  /** SHA-256 of the DER, as colon-separated hex (what IdP consoles show). */
  readonly fingerprintSha256: string
}

/** What orgplane needs of an IdP; `certificates` are all accepted for signatures. */
export interface IdpSettings {
  readonly entityId: string
  readonly ssoUrl: string
  readonly ssoBinding: "redirect" | "post"
  readonly certificates: ReadonlyArray<IdpCertificate>
}

const fail = (code: SamlMetadataErrorCode, message: string) => Effect.fail(new SamlMetadataError({ code, message }))

const pemOf = (base64: string) =>
  `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----`

/**
 * A certificate given as PEM or as the bare base64 of its DER (as metadata holds it), parsed by node:crypto.
 * `label` names it in the error ("certificate 2").
 */
export const parseCertificate = (text: string, label: string): Effect.Effect<IdpCertificate, SamlMetadataError> => {
  const trimmed = text.trim()
  const pemBlocks = trimmed.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0
  if (pemBlocks > 1) return fail("certificate_invalid", `${label} holds ${pemBlocks} certificates: list each one separately.`)
  const base64 = trimmed.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "")
  if (base64 === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    return fail("certificate_invalid", `${label} is not a PEM or base64 X.509 certificate.`)
  }
  return Effect.try({
    try: () => new NodeCrypto.X509Certificate(Buffer.from(base64, "base64")),
    catch: () => new SamlMetadataError({ code: "certificate_invalid", message: `${label} does not parse as an X.509 certificate.` })
  }).pipe(
    Effect.map((certificate) => ({
      pem: pemOf(certificate.raw.toString("base64")),
      notBefore: new Date(certificate.validFrom),
      notAfter: new Date(certificate.validTo),
      subject: certificate.subject.replace(/\n/g, ", "),
      fingerprintSha256: certificate.fingerprint256
    }))
  )
}

const checkUrl = (value: string, what: string) => {
  const url = URL.canParse(value) ? new URL(value) : undefined
  return url !== undefined && (url.protocol === "https:" || url.protocol === "http:") && url.username === "" && url.password === ""
    ? Effect.succeed(url.href)
    : fail("metadata_invalid", `${what} must be an http(s) URL without credentials.`)
}

const checkCertificates = (texts: ReadonlyArray<string>) =>
  texts.length === 0
    ? fail("metadata_invalid", "At least one signing certificate is required.")
    : texts.length > maxCertificates
    ? fail("metadata_invalid", `At most ${maxCertificates} signing certificates are accepted.`)
    : Effect.forEach(texts, (text, i) =>
      Effect.mapError(parseCertificate(text, `Certificate ${i + 1}`), (error) => new SamlMetadataError({ ...error, message: error.message, index: i })))

/**
 * Settings an administrator typed: entity id, SSO URL (HTTP-Redirect binding unless said otherwise) and 1..n
 * certificates, each accepted for signatures while it is listed.
 */
export const manualSettings = Effect.fn("SamlMetadata.manualSettings")(function*(input: {
  readonly entityId: string
  readonly ssoUrl: string
  readonly ssoBinding?: "redirect" | "post"
  readonly certificates: ReadonlyArray<string>
}): Effect.fn.Return<IdpSettings, SamlMetadataError> {
  const entityId = input.entityId.trim()
  if (entityId === "" || entityId.length > 1024) return yield* fail("metadata_invalid", "The IdP entity id must be 1 to 1024 characters.")
  const ssoUrl = yield* checkUrl(input.ssoUrl.trim(), "The IdP SSO URL")
  const certificates = yield* checkCertificates(input.certificates)
  return { entityId, ssoUrl, ssoBinding: input.ssoBinding ?? "redirect", certificates }
})

/** The signing certificates of an IdP descriptor: KeyDescriptors for signing or for any use (no `use`). */
const signingCertificates = (descriptor: Element) =>
  children(descriptor, Ns.md, "KeyDescriptor")
    .filter((key) => {
      const use = attribute(key, "use")
      return use === undefined || use === "signing"
    })
    .flatMap((key) => children(key, Ns.ds, "KeyInfo"))
    .flatMap((info) => children(info, Ns.ds, "X509Data"))
    .flatMap((data) => children(data, Ns.ds, "X509Certificate"))
    .map((element) => textOf(element) ?? "")

/**
 * An IdP's metadata XML: one `EntityDescriptor` with an `IDPSSODescriptor` (alone, or the only one in an
 * `EntitiesDescriptor`), its SSO URL (HTTP-Redirect preferred, else HTTP-POST) and every signing certificate.
 */
export const parseIdpMetadata = Effect.fn("SamlMetadata.parseIdpMetadata")(function*(xml: string): Effect.fn.Return<IdpSettings, SamlMetadataError> {
  if (Buffer.byteLength(xml, "utf8") > maxMetadataBytes) {
    return yield* fail("metadata_too_large", `The metadata is larger than ${maxMetadataBytes / 1024} KiB.`)
  }
  const parsed = parseStrict(xml)
  if (Result.isFailure(parsed)) {
    return yield* parsed.failure.problem === "doctype"
      ? fail("metadata_doctype", "The metadata has a DOCTYPE, which is refused (entity expansion, XXE).")
      : fail("metadata_not_xml", `The metadata is not well-formed XML: ${parsed.failure.detail}.`)
  }
  const root = parsed.success.documentElement!
  const entities = root.namespaceURI === Ns.md && root.localName === "EntityDescriptor"
    ? [root]
    : root.namespaceURI === Ns.md && root.localName === "EntitiesDescriptor"
    ? children(root, Ns.md, "EntityDescriptor")
    : []
  if (entities.length === 0) return yield* fail("metadata_no_idp", "The document is not SAML 2.0 metadata (no EntityDescriptor).")
  const idps = entities.flatMap((entity) => children(entity, Ns.md, "IDPSSODescriptor").map((descriptor) => ({ entity, descriptor })))
  if (idps.length === 0) return yield* fail("metadata_no_idp", "The metadata describes no identity provider (no IDPSSODescriptor).")
  if (idps.length > 1) return yield* fail("metadata_invalid", "The metadata describes several identity providers: give the metadata of one.")
  const { descriptor, entity } = idps[0]!
  const entityId = attribute(entity, "entityID")?.trim() ?? ""
  if (entityId === "") return yield* fail("metadata_invalid", "The metadata's EntityDescriptor has no entityID.")
  const services = children(descriptor, Ns.md, "SingleSignOnService")
  const service = services.find((s) => attribute(s, "Binding") === bindings.redirect) ??
    services.find((s) => attribute(s, "Binding") === bindings.post)
  if (service === undefined) {
    return yield* fail("metadata_invalid", "The IdP has no SingleSignOnService with the HTTP-Redirect or HTTP-POST binding.")
  }
  const ssoUrl = yield* checkUrl(attribute(service, "Location") ?? "", "The IdP's SingleSignOnService Location")
  const certificates = yield* checkCertificates(signingCertificates(descriptor))
  return {
    entityId,
    ssoUrl,
    ssoBinding: attribute(service, "Binding") === bindings.redirect ? "redirect" as const : "post" as const,
    certificates
  }
})
