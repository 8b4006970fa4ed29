/**
 * AuditCatalog.ts: the catalog of audit actions (each described, in a category), and the markers an endpoint carries
 * (the action it records, or why none), read back by operation id and shown in the document as `x-orgplane-audit`.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as AuditCatalog from "../src/AuditCatalog.js"
import { savedDocument } from "./support/SavedDocument.js"

describe("AuditCatalog", () => {
  it("describes every action and files it under a category, the saved document listing them all", () => {
    const categories = new Set(Object.values(AuditCatalog.AuditActions).map(({ category }) => category))
    expect([...categories].sort()).toEqual(["access", "change", "execution", "security"])
    for (const [action, { description }] of Object.entries(AuditCatalog.AuditActions)) {
      expect(action).toMatch(/^[a-z_]+(\.[a-z_]+)+$/)
      expect(description, action).toMatch(/^[A-Z].*\.$/)
    }
    expect(savedDocument).toMatchObject({ components: { schemas: { AuditAction: { enum: Object.keys(AuditCatalog.AuditActions) } } } })
    expect(AuditCatalog.AuditExtension).toBe("x-orgplane-audit")
  })

  it("marks endpoints and reads the markers back by operation id, as the document carries them", () => {
    const teams = HttpApiGroup.make("teams")
      .add(HttpApiEndpoint.post("create", "/v1/teams").pipe(AuditCatalog.audits("team.create")))
      .add(HttpApiEndpoint.post("preview", "/v1/teams/preview").pipe(AuditCatalog.notAudited("reads only")))
      .add(HttpApiEndpoint.get("list", "/v1/teams"))
    const system = HttpApiGroup.make("system", { topLevel: true }).add(HttpApiEndpoint.post("ping", "/ping").pipe(AuditCatalog.notAudited("no change")))
    const api = HttpApi.make("test").add(teams).add(system)
    expect(Object.fromEntries(AuditCatalog.auditDeclarations(api))).toEqual({
      "teams.create": { action: "team.create" },
      "teams.preview": { action: false, reason: "reads only" },
      ping: { action: false, reason: "no change" }
    })
    const spec = OpenApi.fromApi(api)
    expect(spec.paths["/v1/teams"]?.post).toMatchObject({ "x-orgplane-audit": { action: "team.create" } })
    expect(savedDocument).toMatchObject({ paths: { "/v1/teams": { post: { "x-orgplane-audit": { action: "team.create" } } } } })
  })
})
