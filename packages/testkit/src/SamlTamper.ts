/**
 * Edits an attacker can make to a signed SAML Response without the IdP's key, for IdpSaml's negative cases:
 * removing the signatures, changing signed content, and the eight XML Signature Wrapping classes (XSW1–XSW8) of
 * Somorovsky et al., "On Breaking SAML: Be Whoever You Want to Be" (USENIX Security 2012), numbered as the SAML
 * Raider tool numbers them. Each takes and gives the Response's XML.
 */
import { DOMParser, onErrorStopParsing, XMLSerializer } from "@xmldom/xmldom"
import type { Document, Element, Node } from "@xmldom/xmldom"

const DSIG = "http://www.w3.org/2000/09/xmldsig#"
const PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
const ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion"

/**
 * - XSW1: the Response's signature stays on an evil Response (new ID, evil assertion); the original Response, its
 *   signature removed, is put inside that signature, where the reference still finds it.
 * - XSW2: as XSW1, the original Response placed before the signature (a detached signature).
 * - XSW3: an evil assertion (new ID, unsigned) inserted before the signed one.
 * - XSW4: an evil assertion replaces the signed one and holds it as its child.
 * - XSW5: the evil assertion carries the original's signature; an unsigned copy of the original is appended to
 *   the Response.
 * - XSW6: as XSW5, the unsigned copy put inside the signature.
 * - XSW7: the signed assertion moved into a `samlp:Extensions` element; the evil one takes its place.
 * - XSW8: as XSW6, the unsigned copy put in a `ds:Object` inside the signature.
 *
 * XSW1 and XSW2 attack a signed Response, the others a signed assertion.
 */
export type XswVariant = "XSW1" | "XSW2" | "XSW3" | "XSW4" | "XSW5" | "XSW6" | "XSW7" | "XSW8"

export const xswVariants: ReadonlyArray<XswVariant> = ["XSW1", "XSW2", "XSW3", "XSW4", "XSW5", "XSW6", "XSW7", "XSW8"]

/** Whether the variant attacks the Response's signature (else the assertion's). */
export const attacksResponseSignature = (variant: XswVariant) => variant === "XSW1" || variant === "XSW2"

/**
 * Parses strictly: any error stops. (The cast: samlify's types bring xmldom 0.8's ambient declaration of the
 * module, whose options type predates `onError`; the code runs xmldom 0.9.)
 */
export const parseXml = (xml: string): Document =>
  new DOMParser({ onError: onErrorStopParsing } as ConstructorParameters<typeof DOMParser>[0]).parseFromString(xml, "text/xml")

const parse = parseXml

const serialize = (doc: Document) => new XMLSerializer().serializeToString(doc)

const childElements = (parent: Node, namespace: string, localName: string): Array<Element> =>
  Array.from(parent.childNodes).filter(
    (node): node is Element => node.nodeType === 1 && (node as Element).namespaceURI === namespace && (node as Element).localName === localName
  )

const childElement = (parent: Node, namespace: string, localName: string): Element => {
  const found = childElements(parent, namespace, localName)[0]
  if (found === undefined) throw new Error(`SamlTamper: no ${localName} child in ${(parent as Element).localName}`)
  return found
}

const withoutSignature = (element: Element): Element => {
  for (const signature of childElements(element, DSIG, "Signature")) element.removeChild(signature)
  return element
}

/** Puts another email in the subject: the NameID and every attribute value that held the old one. */
const impersonate = (assertion: Element, email: string) => {
  const nameId = assertion.getElementsByTagNameNS(ASSERTION, "NameID")[0]
  if (nameId === undefined) throw new Error("SamlTamper: the assertion has no NameID")
  const previous = nameId.textContent
  nameId.textContent = email
  for (const value of Array.from(assertion.getElementsByTagNameNS(ASSERTION, "AttributeValue"))) {
    if (value.textContent === previous) value.textContent = email
  }
}

/** Every XML signature removed (the Response's and the assertion's). */
export const removeSignatures = (xml: string): string => {
  const doc = parse(xml)
  for (const signature of Array.from(doc.getElementsByTagNameNS(DSIG, "Signature"))) signature.parentNode?.removeChild(signature)
  return serialize(doc)
}

/** The assertion's subject changed to `email` after signing: every digest over it is now wrong. */
export const alterAfterSigning = (xml: string, email: string): string => {
  const doc = parse(xml)
  impersonate(childElement(doc.documentElement!, ASSERTION, "Assertion"), email)
  return serialize(doc)
}

/** The wrapping `variant` of a signed Response, the evil assertion naming `email`; `newId` makes fresh IDs. */
export const wrap = (xml: string, variant: XswVariant, email: string, newId: () => string): string => {
  const doc = parse(xml)
  const response = doc.documentElement!
  const assertion = childElement(response, ASSERTION, "Assertion")
  const evilAssertion = () => {
    const evil = withoutSignature(assertion.cloneNode(true) as Element)
    evil.setAttribute("ID", newId())
    impersonate(evil, email)
    return evil
  }
  /** Moves the original assertion's signature into `evil`, right after its Issuer, as the schema orders it. */
  const moveSignatureInto = (evil: Element) => {
    const signature = childElement(assertion, DSIG, "Signature")
    evil.insertBefore(signature, childElement(evil, ASSERTION, "Issuer").nextSibling)
    return signature
  }
  switch (variant) {
    case "XSW1":
    case "XSW2": {
      const signature = childElement(response, DSIG, "Signature")
      const original = withoutSignature(response.cloneNode(true) as Element)
      response.setAttribute("ID", newId())
      response.replaceChild(evilAssertion(), assertion)
      if (variant === "XSW1") signature.appendChild(original)
      else response.insertBefore(original, signature)
      break
    }
    case "XSW3":
      response.insertBefore(evilAssertion(), assertion)
      break
    case "XSW4": {
      const evil = evilAssertion()
      response.replaceChild(evil, assertion)
      evil.appendChild(assertion)
      break
    }
    case "XSW5":
    case "XSW6":
    case "XSW8": {
      const evil = evilAssertion()
      const signature = moveSignatureInto(evil)
      const copy = assertion // its signature is gone: the unsigned original
      response.replaceChild(evil, assertion)
      if (variant === "XSW5") response.appendChild(copy)
      else if (variant === "XSW6") signature.appendChild(copy)
      else {
        const object = doc.createElementNS(DSIG, `${signature.prefix === null ? "" : `${signature.prefix}:`}Object`)
        object.appendChild(copy)
        signature.appendChild(object)
      }
      break
    }
    case "XSW7": {
      const evil = evilAssertion()
      response.replaceChild(evil, assertion)
      const extensions = doc.createElementNS(PROTOCOL, `${response.prefix === null ? "" : `${response.prefix}:`}Extensions`)
      extensions.appendChild(assertion)
      // Extensions come after the Issuer and the Response's signature, before Status.
      response.insertBefore(extensions, childElement(response, PROTOCOL, "Status"))
      break
    }
  }
  return serialize(doc)
}
