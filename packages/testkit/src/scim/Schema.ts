/**
 * The advertised schemas as the suite reads them (RFC 7643 §7), and what it derives from them: payloads with a value
 * for every writable attribute (scim2-tester generates from what the server advertises, so an attribute advertised
 * but not stored fails), and the comparison of what was sent with what came back.
 */
import { random } from "./Check.js"

export interface Attribute {
  readonly name: string
  readonly type: "string" | "boolean" | "decimal" | "integer" | "dateTime" | "reference" | "complex" | "binary"
  readonly multiValued?: boolean
  readonly required?: boolean
  readonly caseExact?: boolean
  readonly canonicalValues?: ReadonlyArray<string>
  readonly mutability?: "readOnly" | "readWrite" | "immutable" | "writeOnly"
  readonly returned?: "always" | "never" | "default" | "request"
  readonly uniqueness?: "none" | "server" | "global"
  readonly referenceTypes?: ReadonlyArray<string>
  readonly subAttributes?: ReadonlyArray<Attribute>
}

export interface SchemaDoc {
  readonly id: string
  readonly name?: string
  readonly attributes: ReadonlyArray<Attribute>
}

export interface ResourceTypeDoc {
  readonly id?: string
  readonly name: string
  readonly endpoint: string
  readonly schema: string
  readonly schemaExtensions?: ReadonlyArray<{ readonly schema: string; readonly required: boolean }>
}

/** One attribute of a resource type with where it lives: the core schema (`urn` undefined) or an extension. */
export interface Located {
  readonly urn: string | undefined
  readonly attribute: Attribute
}

export const mutability = (attribute: Attribute) => attribute.mutability ?? "readWrite"
export const returned = (attribute: Attribute) => attribute.returned ?? "default"
export const writable = (attribute: Attribute) => mutability(attribute) !== "readOnly"
/** Attributes the client sets and can read back (so their round trip can be checked). */
export const readable = (attribute: Attribute) => returned(attribute) !== "never" && mutability(attribute) !== "writeOnly"

/** The core attributes and every extension's attributes of a resource type (ids and meta are common, not here). */
export const attributesOf = (type: ResourceTypeDoc, schemas: ReadonlyMap<string, SchemaDoc>): ReadonlyArray<Located> => [
  ...(schemas.get(type.schema)?.attributes ?? []).filter((a) => a.name !== "id" && a.name !== "meta").map((attribute) => ({ urn: undefined, attribute })),
  ...(type.schemaExtensions ?? []).flatMap((extension) =>
    (schemas.get(extension.schema)?.attributes ?? []).map((attribute) => ({ urn: extension.schema, attribute }))
  )
]

/** The writable multi-valued attributes whose values may be `primary` (RFC 7643 §2.4: `emails`, `phoneNumbers`, ...). */
export const primaryAttributes = (type: ResourceTypeDoc, schemas: ReadonlyMap<string, SchemaDoc>): ReadonlyArray<Located> =>
  attributesOf(type, schemas).filter(({ attribute }) =>
    attribute.multiValued === true && attribute.type === "complex" && writable(attribute) && readable(attribute) &&
    (attribute.subAttributes ?? []).some((sub) => sub.name === "primary" && sub.type === "boolean" && writable(sub))
  )

/** The values of a multi-valued attribute marked `primary: true`. */
export const primaryValues = (values: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(values) ? values.filter((value) => pick(value, "primary") === true) : []

/** The PATCH path of a located attribute (`name`, `name.sub`, `urn:…:name`). */
export const pathOf = (located: Located, sub?: Attribute): string =>
  `${located.urn === undefined ? "" : `${located.urn}:`}${located.attribute.name}${sub === undefined ? "" : `.${sub.name}`}`

/** Ids of resources the generator may put in a reference (`members.value`, `manager.value`), by resource type name. */
export type References = Readonly<Record<string, string>>

/** A value for one attribute, shaped after its name where the name says what it holds (emails, URLs, locales). */
export const generate = (attribute: Attribute, references: References, parent?: Attribute): unknown => {
  if (attribute.multiValued) {
    const one = generateOne(attribute, references, parent)
    return one === undefined ? undefined : [one]
  }
  return generateOne(attribute, references, parent)
}

const referenced = (attribute: Attribute, references: References) =>
  (attribute.subAttributes ?? []).find((s) => s.name === "$ref")?.referenceTypes?.find((t) => references[t] !== undefined)

const generateOne = (attribute: Attribute, references: References, parent?: Attribute): unknown => {
  const name = attribute.name.toLowerCase()
  const context = parent?.name.toLowerCase() ?? ""
  if (attribute.canonicalValues !== undefined) {
    // An empty list is read as "no value is canonical" (SCIMMY refuses any value then): the attribute is left out.
    if (attribute.canonicalValues.length === 0) return undefined
    return attribute.canonicalValues[Math.floor(Math.random() * attribute.canonicalValues.length)]
  }
  switch (attribute.type) {
    case "complex": {
      const target = referenced(attribute, references)
      const value: Record<string, unknown> = {}
      for (const sub of attribute.subAttributes ?? []) {
        if (!writable(sub) || sub.name === "$ref") continue
        if (sub.name === "value" && target !== undefined) {
          value.value = references[target]
          continue
        }
        if (sub.name === "type" && target !== undefined && (sub.canonicalValues ?? []).includes(target)) {
          value.type = target
          continue
        }
        const generated = generateOne(sub, references, attribute)
        if (generated !== undefined) value[sub.name] = generated
      }
      // A reference to a resource the run has no fixture of cannot be generated: leave the attribute out.
      if (referenced(attribute, { User: "x", Group: "x" }) !== undefined && target === undefined) return undefined
      return Object.keys(value).length === 0 ? undefined : value
    }
    case "boolean":
      return name === "primary" ? true : name === "active" ? true : Math.random() < 0.5
    case "integer":
      return Math.floor(Math.random() * 10_000)
    case "decimal":
      return Math.floor(Math.random() * 10_000) / 100
    case "dateTime":
      return new Date(Math.floor(Date.now() / 1000) * 1000 - Math.floor(Math.random() * 1e9)).toISOString().replace(".000Z", "Z")
    case "binary":
      return Buffer.from(random()).toString("base64")
    case "reference":
      if ((attribute.referenceTypes ?? []).includes("external") || name.endsWith("url") || name === "$ref") return `https://example.com/${random()}`
      return `urn:example:${random()}`
    case "string": {
      const tag = random()
      if (name === "username" || (context === "emails" && name === "value")) return `${tag}@example.com`
      if (context === "phonenumbers" && name === "value") return `+1 555 01${String(Math.floor(Math.random() * 100)).padStart(2, "0")}`
      if (name === "locale") return "en-US"
      if (name === "preferredlanguage") return "en-US"
      if (name === "timezone") return "Europe/Paris"
      if (name === "country") return "FR"
      if (name === "password") return `Pw-${tag}-${random()}!`
      return `${attribute.name}-${tag}`
    }
  }
}

/**
 * A payload for a resource type: every writable attribute (readOnly left out), extensions under their URN, the
 * `schemas` list; `keep` carries immutable values over (a replace must not change them).
 */
export const payload = (
  type: ResourceTypeDoc,
  schemas: ReadonlyMap<string, SchemaDoc>,
  references: References,
  keep: Record<string, unknown> = {}
): Record<string, unknown> => {
  const urns: Array<string> = [type.schema]
  const body: Record<string, unknown> = { schemas: urns }
  for (const { urn, attribute } of attributesOf(type, schemas)) {
    if (!writable(attribute)) continue
    const value = mutability(attribute) === "immutable" && attribute.name in keep ? keep[attribute.name] : generate(attribute, references)
    if (value === undefined) continue
    if (urn === undefined) body[attribute.name] = value
    else {
      if (!urns.includes(urn)) urns.push(urn)
      body[urn] = { ...asRecord(body[urn]), [attribute.name]: value }
    }
  }
  return body
}

/** The value of a located attribute in a resource (matching attribute names case-insensitively, RFC 7643 §2.1). */
export const valueAt = (resource: unknown, located: Located): unknown => {
  const holder = located.urn === undefined ? resource : pick(resource, located.urn)
  return holder === undefined ? undefined : pick(holder, located.attribute.name)
}

/** An object's attributes, or none when it is not an object (spreading what is not an object adds nothing). */
const asRecord = (value: unknown): Readonly<Record<string, unknown>> => (typeof value === "object" && value !== null ? { ...value } : {})

export const pick = (object: unknown, key: string): unknown => {
  if (typeof object !== "object" || object === null) return undefined
  const found = Object.keys(object).find((k) => k.toLowerCase() === key.toLowerCase())
  return found === undefined ? undefined : (object as Record<string, unknown>)[found]
}

/**
 * Where `actual` differs from the `sent` value of an attribute (undefined when they agree). Only readable
 * sub-attributes are compared, strings case-insensitively unless caseExact, dateTimes as instants, and multi-valued
 * attributes as sets (a server may order them as it likes and add readOnly sub-attributes such as `display`).
 */
export const difference = (attribute: Attribute, sent: unknown, actual: unknown, at = attribute.name): string | undefined => {
  if (sent === undefined) return undefined
  if (attribute.multiValued) {
    if (!Array.isArray(actual)) return `${at}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(actual)}`
    for (const item of sent as ReadonlyArray<unknown>) {
      if (!actual.some((candidate) => differenceOne(attribute, item, candidate, at) === undefined)) {
        return `${at}: sent ${JSON.stringify(item)} is not in ${JSON.stringify(actual)}`
      }
    }
    return undefined
  }
  return differenceOne(attribute, sent, actual, at)
}

const differenceOne = (attribute: Attribute, sent: unknown, actual: unknown, at: string): string | undefined => {
  const mismatch = () => `${at}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(actual)}`
  if (attribute.type === "complex") {
    if (typeof actual !== "object" || actual === null) return mismatch()
    for (const sub of attribute.subAttributes ?? []) {
      if (!readable(sub)) continue
      const found = difference({ ...sub, multiValued: sub.multiValued ?? false }, pick(sent, sub.name), pick(actual, sub.name), `${at}.${sub.name}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (attribute.type === "dateTime") return Date.parse(String(sent)) === Date.parse(String(actual)) ? undefined : mismatch()
  if (attribute.type === "string" && attribute.caseExact !== true && typeof sent === "string" && typeof actual === "string") {
    return sent.toLowerCase() === actual.toLowerCase() ? undefined : mismatch()
  }
  return sent === actual ? undefined : mismatch()
}

/** Every difference between a sent payload and the resource read back, over the readable attributes. */
export const differences = (
  type: ResourceTypeDoc,
  schemas: ReadonlyMap<string, SchemaDoc>,
  sent: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, unknown>>
): ReadonlyArray<string> =>
  attributesOf(type, schemas).flatMap((located) => {
    if (!readable(located.attribute) || returned(located.attribute) === "request") return []
    const found = difference(located.attribute, valueAt(sent, located), valueAt(actual, located), pathOf(located))
    return found === undefined ? [] : [found]
  })
