/** Account.ts: an account's deletion and export, their examples and refusals. */
import { describe, it } from "@effect/vitest"
import * as Account from "../src/Account.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Account", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Account.AccountDeletion, examplesOfComponent("AccountDeletion"))
    roundTrips(Account.AccountExport, examplesOfComponent("AccountExport"))
    // The document shows DELETE /v1/me's body example in its schema: the schema's own, and `{}`.
    roundTrips(Account.DeleteAccountRequest, [...wireExamples(Account.DeleteAccountRequest.ast), {}])
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const deletion = examplesOfComponent("AccountDeletion")[0]
    const removed = { sessions: 2, apiKeys: 1, memories: 4, mcpCredentials: 1, suiteConnections: 1, ssoLinks: 1, scimUsers: 0 }
    const withRemoved = (changed: Record<string, unknown>) =>
      typeof deletion === "object" && deletion !== null && !Array.isArray(deletion) ? { ...deletion, removed: { ...removed, ...changed } } : deletion
    takes(Account.AccountDeletion, [
      withRemoved({}),
      withRemoved({ sessions: 0 })
    ])
    refuses(Account.AccountDeletion, [
      withRemoved({ sessions: -1 }),
      withRemoved({ apiKeys: 1.5 }),
      withRemoved({ memories: "4" }),
      typeof deletion === "object" && deletion !== null && !Array.isArray(deletion) ? { ...deletion, pseudonym: "deleted-user-3F2A9C41D07B" } : deletion
    ])
    takes(Account.Pseudonym, ["deleted-user-3f2a9c41d07b"])
    refuses(Account.Pseudonym, ["deleted-user-3f2a9c41d07", "user-3f2a9c41d07b", " deleted-user-3f2a9c41d07b"])
    takes(Account.DeleteAccountRequest, [{}, { password: "x" }])
    refuses(Account.DeleteAccountRequest, [{ password: "" }, { password: "x".repeat(257) }, { password: null }])
  })
})
