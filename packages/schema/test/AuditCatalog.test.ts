import { describe, expect, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as AuditCatalog from "../src/AuditCatalog.js"
import { fixture } from "./differential.js"
import { effect3 } from "./effect3.js"

const AuditCatalog3 = effect3("AuditCatalog")

describe("AuditCatalog on Effect 4", () => {
  it("keeps the Effect 3 catalog", () => {
    expect(AuditCatalog.AuditActions).toEqual(AuditCatalog3.AuditActions)
    expect(AuditCatalog.AuditExtension).toBe(AuditCatalog3.AuditExtension)
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
    expect(fixture).toMatchObject({ paths: { "/v1/teams": { post: { "x-orgplane-audit": { action: "team.create" } } } } })
  })
})
