/**
 * A SAML connection's settings between the API, the stored row and the SAML engine: the administrator's input
 * resolved into stored settings (the metadata URL fetched, the XML parsed, the manual values checked: 400 on the
 * field otherwise, before anything is written), the stored settings as the engine's IdP and SP settings, and what a
 * later fetch of a metadata URL changes (sso/SamlRefresh.ts runs it).
 */
import { InvalidRequest, type SamlSettingsInput, type SsoMapping } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { SamlService, SpSettings } from "./Saml.js"
import { type IdpSettings, manualSettings, parseCertificate, type SamlMetadataError } from "./SamlMetadata.js"
import type { StoredSaml } from "./SsoRepository.js"

const fromIdp = (idp: IdpSettings) => ({
  entityId: idp.entityId,
  ssoUrl: idp.ssoUrl,
  ssoBinding: idp.ssoBinding,
  certificates: idp.certificates.map((certificate) => certificate.pem)
})

/** The member of the request a metadata problem is reported on. */
const pathOf = (input: SamlSettingsInput, error: SamlMetadataError): Array<string | number> =>
  input.source === "metadataUrl"
    ? ["url"]
    : input.source === "metadataXml"
    ? ["xml"]
    : error.code === "certificate_invalid"
    ? ["certificates", ...(error.index === undefined ? [] : [error.index])]
    : []

/**
 * The settings to store for `input`: the IdP's entity id, SSO URL and binding, and certificates, from wherever the
 * administrator gave them. `at` is when a metadata URL was fetched.
 */
export const storedSamlOf = Effect.fn("SamlSettings.storedSamlOf")(function*(
  saml: SamlService,
  input: SamlSettingsInput,
  path: ReadonlyArray<string>,
  at: Date
): Effect.fn.Return<StoredSaml, InvalidRequest> {
  const common = { allowIdpInitiated: input.allowIdpInitiated ?? false, relayStateAllowList: input.relayStateAllowList ?? [] }
  if (common.allowIdpInitiated && common.relayStateAllowList.length === 0) {
    return yield* InvalidRequest.field([...path, "relayStateAllowList"], "must list at least one RelayState when allowIdpInitiated is true")
  }
  const needs = { metadataUrl: ["url"], metadataXml: ["xml"], manual: ["entityId", "ssoUrl", "certificates"] } as const
  const members = ["url", "xml", "entityId", "ssoUrl", "certificates"] as const
  // Members another source takes are ignored (not stored); those this source needs are required.
  const details = members.flatMap((member) =>
    (needs[input.source] as ReadonlyArray<string>).includes(member) && input[member] === undefined
      ? [{ path: [...path, member], message: `is required with source ${input.source}` }]
      : []
  )
  if (details.length > 0) return yield* new InvalidRequest({ details })
  const idp = yield* (input.source === "metadataUrl"
    ? saml.fetchIdpMetadata(input.url!)
    : input.source === "metadataXml"
    ? saml.parseIdpMetadata(input.xml!)
    : manualSettings({ entityId: input.entityId!, ssoUrl: input.ssoUrl!, certificates: input.certificates! })).pipe(
      Effect.mapError((error) => InvalidRequest.field([...path, ...pathOf(input, error)], `${error.message} (${error.code})`))
    )
  return {
    source: input.source,
    metadataUrl: input.source === "metadataUrl" ? input.url! : null,
    metadataXml: input.source === "metadataXml" ? input.xml! : null,
    ...fromIdp(idp),
    ...common,
    ...(input.source === "metadataUrl" ? { metadataRefresh: { at: at.toISOString(), ok: true, message: null, succeededAt: at.toISOString() } } : {})
  }
})

/** Whether two stored settings configure the same thing (the latest metadata fetch is no setting). */
export const sameSettings = (a: StoredSaml | null, b: StoredSaml | null) => {
  const strip = (stored: StoredSaml | null) => {
    if (stored === null) return null
    const { metadataRefresh: _, ...settings } = stored
    return settings
  }
  return canonical(strip(a)) === canonical(strip(b))
}

/** JSON with object keys sorted: a row read back from jsonb has its keys in another order than the one written. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : value !== null && typeof value === "object"
    ? `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(",")}}`
    : JSON.stringify(value) ?? "null"

/** The stored settings as the engine's IdP settings; undefined when they name no IdP yet. */
export const idpSettingsOf = (stored: StoredSaml): Effect.Effect<IdpSettings | undefined> =>
  stored.entityId === null || stored.ssoUrl === null || stored.certificates.length === 0
    ? Effect.succeed(undefined)
    : Effect.map(
      // Stored certificates were parsed when stored: one that no longer parses is left out rather than failing sign-in.
      Effect.forEach(stored.certificates, (pem, i) => Effect.option(parseCertificate(pem, `Certificate ${i + 1}`))),
      (certificates) => ({
        entityId: stored.entityId!,
        ssoUrl: stored.ssoUrl!,
        ssoBinding: stored.ssoBinding ?? "redirect",
        certificates: certificates.flatMap((c) => c._tag === "Some" ? [c.value] : [])
      })
    )

/** orgplane's SP for a connection (its URLs: `samlUrls`), with its IdP-initiated policy and the mapping's attribute names. */
export const spSettingsOf = (urls: { readonly entityId: string; readonly acsUrl: string }, stored: StoredSaml, mapping: SsoMapping): SpSettings => {
  return {
    entityId: urls.entityId,
    acsUrl: urls.acsUrl,
    allowIdpInitiated: stored.allowIdpInitiated,
    relayStateAllowList: stored.relayStateAllowList,
    mapping: { email: mapping.email, name: mapping.name, givenName: mapping.givenName, familyName: mapping.familyName, groups: mapping.groups }
  }
}

/** What fetching a metadata URL gave: the IdP's settings, or why not. */
export type MetadataFetch = Result.Result<IdpSettings, SamlMetadataError>

/** When the settings were last taken from the metadata, as `stored` records it (rows from before record no such instant). */
export const refreshSucceededAt = (stored: StoredSaml): string | undefined =>
  stored.metadataRefresh?.succeededAt ?? (stored.metadataRefresh?.ok === true ? stored.metadataRefresh.at : undefined)

/**
 * A metadata URL fetched again, applied to the settings stored now (docs/sso.md, "SAML metadata refresh"): the new SSO
 * URL, binding and certificates are taken without a new test (the administrator configured the URL, not the
 * certificates, and a rotation must not cut sign-in). A document naming another entity id (another IdP: that needs
 * the administrator), a fetch that failed and a document that does not parse keep the settings, with why recorded.
 * `changed`: whether the IdP settings changed.
 */
export const applyRefresh = (stored: StoredSaml, fetched: MetadataFetch, at: Date): { readonly saml: StoredSaml; readonly changed: boolean } => {
  const previous = refreshSucceededAt(stored)
  const failed = (message: string) => ({
    saml: { ...stored, metadataRefresh: { at: at.toISOString(), ok: false, message, ...(previous === undefined ? {} : { succeededAt: previous }) } },
    changed: false
  })
  if (Result.isFailure(fetched)) return failed(`${fetched.failure.message} (${fetched.failure.code})`)
  const idp = fetched.success
  if (stored.entityId !== null && idp.entityId !== stored.entityId) {
    return failed(
      `The metadata now names another entity id (${
        idp.entityId.slice(0, 200)
      }), another identity provider: nothing was taken. To move to it, create a connection with this metadata URL and test it (or, on a connection that is not active, save its SAML settings again). (entity_id_changed)`
    )
  }
  const saml: StoredSaml = { ...stored, ...fromIdp(idp), metadataRefresh: { at: at.toISOString(), ok: true, message: null, succeededAt: at.toISOString() } }
  return { saml, changed: !sameSettings(saml, stored) }
}
