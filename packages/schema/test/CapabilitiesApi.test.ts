import { describe, expect, it } from "@effect/vitest"
import * as CapabilitiesApi from "../src/CapabilitiesApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { withoutDescription } from "./mcpDifferential.js"
import { effect3 } from "./effect3.js"

const CapabilitiesApi3 = effect3("CapabilitiesApi")

const messageId = "The suite's message id: 1 to 512 characters, no white space, `/`, `\\`, `?` or `#`, not `.` or `..`."
const tenant = "The suite-a directory tenant: its id (a GUID), a verified domain, `organizations` or `common`."

describe("CapabilitiesApi on Effect 4", () => {
  it("declares the operations of the Effect 3 groups", () => {
    expect(sameOperations(CapabilitiesApi.SuiteClientsApi, CapabilitiesApi3.SuiteClientsApi, {
      // The real difference Capabilities.test.ts names: Effect 3's override of SuiteTenant's JSON Schema left its
      // description out of the document; Effect 4 keeps it. Dropped here to compare the rest.
      "PUT /v1/capabilities/{suite}/client": (operation) => withoutDescription(operation, tenant)
    })).toHaveLength(3)
    expect(sameOperations(CapabilitiesApi.SuiteConnectionsApi, CapabilitiesApi3.SuiteConnectionsApi)).toHaveLength(4)
    expect(sameOperations(CapabilitiesApi.CapabilitiesApi, CapabilitiesApi3.CapabilitiesApi, {
      // The same real difference for MailMessageId's description.
      "GET /v1/capabilities/suite-a/mail-message/{messageId}": (operation) => withoutDescription(operation, messageId)
    })).toHaveLength(3)
    expect(CapabilitiesApi.DRAFT_BODY_BYTES).toBe(CapabilitiesApi3.DRAFT_BODY_BYTES)
  })

  it("shows the examples of the Effect 3 groups", () => {
    expect(sameExamples(CapabilitiesApi.SuiteClientsApi, CapabilitiesApi3.SuiteClientsApi)).toBeGreaterThan(0)
    expect(sameExamples(CapabilitiesApi.SuiteConnectionsApi, CapabilitiesApi3.SuiteConnectionsApi)).toBeGreaterThan(0)
    expect(sameExamples(CapabilitiesApi.CapabilitiesApi, CapabilitiesApi3.CapabilitiesApi)).toBeGreaterThan(0)
  })
})
