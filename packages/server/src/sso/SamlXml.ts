/**
 * XML for SAML messages and metadata: a strict parse with `@xmldom/xmldom` (the parser node-saml itself uses) that
 * refuses what a lenient parse would let through (a DOCTYPE, the door to entity expansion and XXE; unclosed
 * elements; text outside the root), and namespace-aware lookups of direct children, so nothing is found by its
 * prefix or by a search of the whole document where an attacker can add elements.
 */
import { DOMParser } from "@xmldom/xmldom"
import * as Result from "effect/Result"

export const Ns = {
  md: "urn:oasis:names:tc:SAML:2.0:metadata",
  saml: "urn:oasis:names:tc:SAML:2.0:assertion",
  samlp: "urn:oasis:names:tc:SAML:2.0:protocol",
  ds: "http://www.w3.org/2000/09/xmldsig#"
} as const

export type XmlProblem = { readonly problem: "not_xml" | "doctype"; readonly detail: string }

const ELEMENT = 1
const TEXT = 3
const PROCESSING_INSTRUCTION = 7
const COMMENT = 8
const DOCUMENT_TYPE = 10

/**
 * xmldom's document read as the DOM's own interface (lib.dom), which it implements: its typings differ between 0.8
 * and 0.9 (both in one program when the testkit's are type-checked with ours), so the shape is checked, not cast.
 */
const isDocument = (node: unknown): node is Document =>
  typeof node === "object" && node !== null && "documentElement" in node && "childNodes" in node

/** The document, or why it is refused. `detail` is short and names no content of the input. */
export const parseStrict = (text: string): Result.Result<Document, XmlProblem> => {
  // Refused before parsing: whatever the parser would do with an internal subset, nothing here needs one.
  if (/<!DOCTYPE/i.test(text)) return Result.fail({ problem: "doctype", detail: "it has a DOCTYPE, which is not allowed" })
  const problems: Array<string> = []
  const note = (message: string) => {
    problems.push(message.replace(/^\[xmldom [a-z ]+\]\s*/, "").split("\n")[0]!.slice(0, 120))
  }
  let doc: Document | undefined
  try {
    const parsed: unknown = new DOMParser({ locator: {}, errorHandler: { warning: note, error: note, fatalError: note } }).parseFromString(text, "text/xml")
    if (isDocument(parsed)) doc = parsed
  } catch (error) {
    note(error instanceof Error ? error.message : String(error))
  }
  if (doc === undefined || problems.length > 0) return Result.fail({ problem: "not_xml", detail: problems[0] ?? "it does not parse" })
  let elements = 0
  for (const node of Array.from(doc.childNodes) as Array<Node>) {
    if (node.nodeType === DOCUMENT_TYPE) return Result.fail({ problem: "doctype", detail: "it has a DOCTYPE, which is not allowed" })
    if (node.nodeType === ELEMENT) elements++
    else if (node.nodeType === TEXT && (node.nodeValue ?? "").trim() !== "") {
      return Result.fail({ problem: "not_xml", detail: "it has text outside its root element" })
    } else if (node.nodeType !== TEXT && node.nodeType !== PROCESSING_INSTRUCTION && node.nodeType !== COMMENT) {
      return Result.fail({ problem: "not_xml", detail: "it has an unexpected node outside its root element" })
    }
  }
  if (elements !== 1 || doc.documentElement === null) return Result.fail({ problem: "not_xml", detail: "it has no single root element" })
  return Result.succeed(doc)
}

export const isElement = (node: Element | null | undefined, ns: string, localName: string): node is Element =>
  node !== null && node !== undefined && node.namespaceURI === ns && node.localName === localName

/** The direct children of `parent` with this namespace and local name, in document order. */
export const children = (parent: Element, ns: string, localName: string): Array<Element> =>
  (Array.from(parent.childNodes) as Array<Node>).filter((node): node is Element =>
    node.nodeType === ELEMENT && isElement(node as Element, ns, localName)
  )

export const child = (parent: Element, ns: string, localName: string): Element | undefined => children(parent, ns, localName)[0]

/** Every descendant element with this namespace and local name. */
export const descendants = (parent: Element | Document, ns: string, localName: string): Array<Element> =>
  Array.from(parent.getElementsByTagNameNS(ns, localName)) as Array<Element>

export const textOf = (element: Element | undefined): string | undefined => {
  const text = element?.textContent?.trim()
  return text === undefined || text === "" ? undefined : text
}

/** An attribute's value, or undefined when it is absent (xmldom answers "" for both). */
export const attribute = (element: Element, name: string): string | undefined =>
  element.hasAttribute(name) ? element.getAttribute(name) ?? undefined : undefined
