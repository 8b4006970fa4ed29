/**
 * The signed `state` of an OAuth authorization code flow: `<organization id>.<authorization id>.<HMAC-SHA256>`, the
 * organization and the pending authorization it names, signed with a key derived from the instance's cursor key
 * (one per flow) and checked in constant time. The form is fixed byte for byte, so an authorization begun before an
 * upgrade from 0.1.0 completes after it.
 */
import type { OrganizationId } from "@orgplane/schema"
import { deriveKey, sign, verifySignature } from "./Crypto.js"

/**
 * The key that signs states: derived from the cursor key, so it is the instance's and never leaves it; one per
 * purpose, so a state of one flow is refused by another's callback.
 */
export const stateKeyOf = (cursorKey: Buffer, purpose = "orgplane/mcp-oauth-state") => deriveKey(cursorKey, purpose)

const signed = (organizationId: string, authorizationId: string) => `${organizationId}.${authorizationId}`

export const signState = (key: Buffer, organizationId: string, authorizationId: string) =>
  `${organizationId}.${authorizationId}.${sign(key, signed(organizationId, authorizationId))}`

/** The organization and authorization a state names, if its signature is ours (compared in constant time). */
export const verifyState = (
  key: Buffer,
  state: string
): { readonly organizationId: OrganizationId; readonly authorizationId: string } | undefined => {
  const parts = state.split(".")
  if (parts.length !== 3) return undefined
  const [organizationId, authorizationId, signature] = parts
  if (organizationId === "" || authorizationId === "") return undefined
  if (!verifySignature(key, signed(organizationId, authorizationId), signature)) return undefined
  return { organizationId: organizationId as OrganizationId, authorizationId }
}
