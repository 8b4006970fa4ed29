/** An update's `changes` as the audit log stores them: changed fields only, secrets redacted, long values by size. */
import { describe, expect, it } from "vitest"
import { changesOf } from "../../src/platform/AuditRecorder.js"

describe("changesOf", () => {
  it("keeps the fields that changed, before and after, and not updatedAt", () => {
    expect(changesOf(
      { id: "tem_1", name: "Before", externalKey: null, updatedAt: "2026-01-01T00:00:00.000Z", memberIds: ["om_1"] },
      { id: "tem_1", name: "After", externalKey: "eng", updatedAt: "2026-01-02T00:00:00.000Z", memberIds: ["om_1"] }
    )).toEqual({ before: { name: "Before", externalKey: null }, after: { name: "After", externalKey: "eng" }, changedFields: ["name", "externalKey"] })
  })

  it("redacts a secret by its name at any depth, keeps flags about secrets, and names secrets the resource never shows", () => {
    const changes = changesOf(
      { oidc: { issuer: "https://a.example", clientSecret: "old-secret-value" }, hasApiKey: false },
      { oidc: { issuer: "https://b.example", clientSecret: "new-secret-value" }, hasApiKey: true },
      ["apiKey"]
    )
    expect(changes).toEqual({
      before: { oidc: { issuer: "https://a.example", clientSecret: "[redacted]" }, hasApiKey: false, apiKey: "[redacted]" },
      after: { oidc: { issuer: "https://b.example", clientSecret: "[redacted]" }, hasApiKey: true, apiKey: "[redacted]" },
      changedFields: ["oidc", "hasApiKey", "apiKey"]
    })
    expect(JSON.stringify(changes)).not.toMatch(/secret-value/)
  })

  it("shows a long value by its size, and an unchanged resource as no changed fields", () => {
    const long = "x".repeat(5000)
    expect(changesOf({ description: "short" }, { description: long })).toEqual({
      before: { description: "short" },
      after: { description: "[omitted: 5002 bytes]" },
      changedFields: ["description"]
    })
    expect(changesOf({ name: "same" }, { name: "same" })).toEqual({ before: {}, after: {}, changedFields: [] })
  })
})
