/**
 * Capabilities.ts: mail and calendar suite capabilities: the document's examples decode and encode back unchanged, the
 * requests taken and refused, and what a refusal says.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Capabilities from "../src/Capabilities.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, decodeBody, refuses, refusesBody, roundTrips, takes, takesBody } from "./support/Decoding.js"
const clientId = "3f6c1e2a-8d4b-4c55-9e1f-2a7b6c9d0e12"

describe("Capabilities", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Capabilities.SuiteClientRequest, examplesOfComponent("SuiteClientRequest"))
    roundTrips(Capabilities.SuiteClient, examplesOfComponent("SuiteClient"))
    roundTrips(Capabilities.SuiteConnection, examplesOfComponent("SuiteConnection"))
    roundTrips(Capabilities.SuiteConnectResult, examplesOfComponent("SuiteConnectResult"))
    roundTrips(Capabilities.SuiteCallbackResult, examplesOfComponent("SuiteCallbackResult"))
    roundTrips(Capabilities.SuiteDisconnectResult, examplesOfComponent("SuiteDisconnectResult"))
    roundTrips(Capabilities.CreateMailDraftRequest, examplesOfComponent("CreateMailDraftRequest"))
    roundTrips(Capabilities.MailRecipient, examplesOfComponent("MailRecipient"))
    roundTrips(Capabilities.MailMessage, examplesOfComponent("MailMessage"))
    roundTrips(Capabilities.CalendarEventPatch, examplesOfComponent("CalendarEventPatch"))
    roundTrips(Capabilities.CalendarEventResult, examplesOfComponent("CalendarEventResult"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Capabilities.SuiteTenant, [
      "organizations",
      " common ",
      "acme.example",
      "3f6c1e2a-8d4b-4c55-9e1f-2a7b6c9d0e12",
      "a".repeat(255)
    ])
    refuses(Capabilities.SuiteTenant, [
      "",
      "  ",
      "-acme",
      "acme example",
      "a".repeat(256),
      "acme_example",
      "ac\u0000me"
    ])
    takesBody(Capabilities.SuiteClientRequest, [
      { clientId, features: [] },
      { clientId: ` ${clientId} `, clientSecret: "s", tenant: " organizations ", features: ["mailDraft", "mailRead"] },
      { clientId, clientSecret: null, tenant: null, features: ["calendarWrite"], authorizationEndpoint: "https://login.example/authorize", tokenEndpoint: null, apiBaseUrl: "http://127.0.0.1:8080" }
    ])
    refusesBody(Capabilities.SuiteClientRequest, [
      { clientId, features: ["mailDraft", "mailDraft"] },
      { clientId, features: ["mailDraft", "mailRead", "calendarWrite", "mailDraft"] },
      { clientId, features: ["calendar"] },
      { clientId, clientSecret: "", features: [] },
      { clientId, tenant: "bad tenant", features: [] },
      { clientId, apiBaseUrl: "ftp://x.example", features: [] },
      { clientId: "", features: [] },
      { clientId },
      { clientId, features: [], scopes: ["Mail.Read"] }
    ])
    takesBody(Capabilities.CreateMailDraftRequest, [
      { to: ["grace@acme.example"], subject: "Hi" },
      { to: [" grace@acme.example "], subject: " Hi ", body: "", cc: [], bcc: ["alan@acme.example"] }
    ])
    refusesBody(Capabilities.CreateMailDraftRequest, [
      { to: [], subject: "Hi" },
      { to: Array.from({ length: 51 }, (_, i) => `p${i}@acme.example`), subject: "Hi" },
      { to: ["grace"], subject: "Hi" },
      { to: ["admin@localhost"], subject: "Hi" },
      { to: ["grace@acme.example"], subject: "" },
      { to: ["grace@acme.example"], subject: "x".repeat(999) },
      { to: ["grace@acme.example"], subject: "Hi", body: "x".repeat(Capabilities.MAIL_BODY_MAX + 1) },
      { to: ["grace@acme.example"], subject: "Hi", cc: Array.from({ length: 51 }, (_, i) => `p${i}@acme.example`) }
    ])
    takes(Capabilities.MailMessagePath, [
      { messageId: "AAMkAGI2TG93AAA=" },
      { messageId: "..." },
      { messageId: "x".repeat(512) }
    ])
    refuses(Capabilities.MailMessagePath, [
      { messageId: "" },
      { messageId: "." },
      { messageId: ".." },
      { messageId: "a/b" },
      { messageId: "a b" },
      { messageId: "a?b" },
      { messageId: "a#b" },
      { messageId: "a\\b" },
      { messageId: "x".repeat(513) }
    ])
    takes(Capabilities.CalendarEventPath, [
      { eventId: "7kq0d2v5e1m8s9b3c4n6p0r2t4" },
      { eventId: " 7kq0 " }
    ])
    refuses(Capabilities.CalendarEventPath, [
      { eventId: " " },
      { eventId: "x".repeat(513) }
    ])
    takesBody(Capabilities.CalendarEventPatch, [
      { createMeetLink: true },
      { createMeetLink: false }
    ])
    refusesBody(Capabilities.CalendarEventPatch, [
      { createMeetLink: "true" },
      {},
      { createMeetLink: true, summary: "x" }
    ])
    takes(Capabilities.SuitePath, [{ suite: "suite-a" }, { suite: "suite-b" }])
    refuses(Capabilities.SuitePath, [{ suite: "suite-c" }])
  })

  it("says what is wrong with a refused value", () => {
    expect(decodeBody(Capabilities.SuiteClientRequest, { clientId, features: ["mailRead", "mailRead"] }))
      .toMatchObject({ ok: false, message: expect.stringMatching(/`mailRead` is listed twice[\s\S]*\["features"\]\[1\]/) })
    expect(decode(Capabilities.SuiteTenant, "acme example")).toMatchObject({ ok: false, message: expect.stringContaining("must be a directory tenant") })
    expect(decode(Capabilities.MailMessageId, "..")).toMatchObject({ ok: false, message: expect.stringContaining("must not be `.` or `..`") })
  })
})
