/**
 * A SAML connection's settings between the API, the stored row and the SAML engine: the administrator's input
 * resolved into stored settings (the metadata URL fetched, the XML parsed, the manual values checked: 400 on the
 * field otherwise, before anything is written), the stored settings as the engine's IdP and SP settings, and the
 * scheduled refetch of a metadata URL.
 */
import { InvalidRequest, type SamlSettingsInput, type SsoMapping } from "@orgplane/schema"
import { Effect } from "effect"
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
export const storedSamlOf = (
  saml: SamlService,
  input: SamlSettingsInput,
  path: ReadonlyArray<string>,
  at: Date
): Effect.Effect<StoredSaml, InvalidRequest> =>
  Effect.gen(function*() {
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
      ...(input.source === "metadataUrl" ? { metadataRefresh: { at: at.toISOString(), ok: true, message: null } } : {})
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

/**
 * A metadata URL fetched again: the new SSO URL and certificates (a rotation published by the IdP is taken without
 * a new test: the administrator configured the URL, not the certificates), or, when the fetch fails or names
 * another entity id (another IdP: that needs the administrator), the settings kept with the failure recorded.
 */
export const refreshed = (saml: SamlService, stored: StoredSaml, at: Date): Effect.Effect<StoredSaml> =>
  stored.source !== "metadataUrl" || stored.metadataUrl === null
    ? Effect.succeed(stored)
    : saml.fetchIdpMetadata(stored.metadataUrl).pipe(
      Effect.map((idp): StoredSaml =>
        stored.entityId !== null && idp.entityId !== stored.entityId
          ? {
            ...stored,
            metadataRefresh: {
              at: at.toISOString(),
              ok: false,
              message: `The metadata now names another entity id (${idp.entityId.slice(0, 200)}); the settings were kept: save the connection's SAML settings again to take it.`
            }
          }
          : { ...stored, ...fromIdp(idp), metadataRefresh: { at: at.toISOString(), ok: true, message: null } }
      ),
      Effect.catchAll((error) =>
        Effect.succeed<StoredSaml>({ ...stored, metadataRefresh: { at: at.toISOString(), ok: false, message: `${error.message} (${error.code})` } })
      )
    )
