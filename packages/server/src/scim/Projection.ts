/**
 * Attribute projection (RFC 7644 §3.4.2.5, §3.9): `attributes` and `excludedAttributes` over a resource, with the
 * advertised `returned` rules (`always` stays, `never` never shows, `request` only when asked for).
 */
import { type Attribute, CommonAttributes, extensionOf, resolvePath, type ResourceTypeDefinition } from "./Attributes.js"

export interface ProjectionQuery {
  readonly attributes?: string | undefined
  readonly excludedAttributes?: string | undefined
}

type Resource = Record<string, unknown>

/** A comma-separated list of attribute paths, as lowercased `[schema, attribute, sub?]` triples; unknown ones drop. */
interface Selected {
  readonly schema: string
  readonly attribute: string | undefined
  readonly sub: string | undefined
}

const parseList = (resourceType: ResourceTypeDefinition, list: string | undefined): ReadonlyArray<Selected> =>
  (list ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .flatMap((item): ReadonlyArray<Selected> => {
      const extension = extensionOf(resourceType, item)
      if (extension !== undefined) return [{ schema: extension.id, attribute: undefined, sub: undefined }]
      const resolved = resolvePath(resourceType, item)
      return resolved === undefined
        ? []
        : [{ schema: resolved.schema, attribute: resolved.attribute.name, sub: resolved.subAttribute?.name }]
    })

type Selection = ReadonlyArray<Selected>

const project = (
  resource: Resource,
  attributes: ReadonlyArray<Attribute>,
  schema: string,
  requested: Selection | undefined,
  excluded: Selection
): Resource => {
  const result: Resource = {}
  for (const [key, value] of Object.entries(resource)) {
    const attribute = attributes.find((candidate) => candidate.name === key)
    if (attribute === undefined || attribute.returned === "never") continue
    if (attribute.returned === "always") {
      result[key] = value
      continue
    }
    const mentions = (selection: Selection) =>
      selection.filter((item) => item.schema === schema && (item.attribute === undefined || item.attribute === key))
    const asked = requested === undefined ? undefined : mentions(requested)
    const dropped = mentions(excluded)
    if (dropped.some((item) => item.sub === undefined)) continue
    if (attribute.returned === "request" && (asked === undefined || asked.length === 0)) continue
    if (asked !== undefined && asked.length === 0) continue
    const subs = attribute.subAttributes
    const wholeAsked = asked === undefined || asked.some((item) => item.sub === undefined)
    if (subs === undefined || (wholeAsked && dropped.length === 0)) {
      result[key] = value
      continue
    }
    const keep = (sub: Attribute) =>
      sub.returned === "always" ||
      ((wholeAsked || (asked?.some((item) => item.sub === sub.name) ?? false)) && !dropped.some((item) => item.sub === sub.name) &&
        sub.returned !== "never")
    const pick = (element: unknown) =>
      typeof element === "object" && element !== null
        ? Object.fromEntries(
          Object.entries(element).filter(([name]) => {
            const sub = subs.find((candidate) => candidate.name === name)
            return sub !== undefined && keep(sub)
          })
        )
        : element
    result[key] = Array.isArray(value) ? value.map(pick) : pick(value)
  }
  return result
}

/**
 * The resource as the query asks for it. `resource` is in canonical form (attribute names as advertised, extension
 * attributes under their URN); `id`, `schemas` and `meta` are always returned, `externalId` by default.
 */
export const projectResource = (
  resourceType: ResourceTypeDefinition,
  resource: Resource,
  query: ProjectionQuery
): Resource => {
  const requested = query.attributes === undefined || query.attributes.trim() === ""
    ? undefined
    : parseList(resourceType, query.attributes)
  const excluded = parseList(resourceType, query.excludedAttributes)
  const core = resourceType.schema.id
  const result = project(resource, [...CommonAttributes, ...resourceType.schema.attributes], core, requested, excluded)
  for (const extension of resourceType.extensions) {
    const value = resource[extension.id]
    if (typeof value !== "object" || value === null) continue
    const wholeExcluded = excluded.some((item) => item.schema === extension.id && item.attribute === undefined)
    const wholeAsked = requested?.some((item) => item.schema === extension.id && item.attribute === undefined) ?? true
    if (wholeExcluded) continue
    const projected = project(
      value as Resource,
      extension.attributes,
      extension.id,
      wholeAsked ? undefined : requested,
      excluded
    )
    if (Object.keys(projected).length > 0) result[extension.id] = projected
  }
  return result
}
