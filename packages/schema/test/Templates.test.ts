/**
 * Templates.ts: templates and their versions: the document's examples decode and encode back unchanged, the requests
 * taken and refused, and what a refusal says.
 */
import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Templates from "../src/Templates.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { bodyRefusal, decode, refuses, refusesBody, roundTrips, takes, takesBody } from "./support/Decoding.js"

const document = { name: "service-starter", folders: ["src", "test"] }

describe("Templates", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Templates.TemplateVersion, examplesOfComponent("TemplateVersion"))
    roundTrips(Templates.Template, examplesOfComponent("Template"))
    roundTrips(Templates.TemplateResponse, examplesOfComponent("TemplateResponse"))
    roundTrips(Templates.TemplateVersionResponse, examplesOfComponent("TemplateVersionResponse"))
    roundTrips(Templates.TemplateInstance, examplesOfComponent("TemplateInstance"))
    roundTrips(Templates.CreateTemplateRequest, wireExamples(Templates.CreateTemplateRequest.ast))
    roundTrips(Templates.UpdateTemplateRequest, wireExamples(Templates.UpdateTemplateRequest.ast))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const big = "x".repeat(Templates.MAX_TEMPLATE_DOCUMENT_BYTES)
    takesBody(Templates.CreateTemplateRequest, [
      { name: "Service starter", kind: "workspace", document },
      { name: " Service starter ", description: "", kind: "agent-profile", schemaVersion: "workspace-1", document: null },
      { name: "S", kind: "k", document: "text" },
      { name: "S", kind: "k", document: [1, true, { a: null }] },
      { name: "S", kind: "k", document: 0 },
      { name: "S", kind: "k", document: "x".repeat(Templates.MAX_TEMPLATE_DOCUMENT_BYTES - 2) }
    ])
    refusesBody(Templates.CreateTemplateRequest, [
      { name: "S", kind: "k", document: big },
      { name: "S", kind: "k", document: { a: ["ok", "\ud800"] } },
      { name: "S", kind: "k", document: { "\udfff": 1 } },
      { name: "S", kind: "k" },
      { name: "S", kind: "Workspace", document },
      { name: "S", kind: "w".repeat(65), document },
      { name: "S", kind: "", document },
      { name: "S", kind: "k", schemaVersion: ".v1", document },
      { name: "S", kind: "k", schemaVersion: "v".repeat(65), document },
      { name: "", kind: "k", document },
      { name: "S", description: "d".repeat(2001), kind: "k", document },
      { name: "S", kind: "k", document, version: 2 }
    ])
    takesBody(Templates.UpdateTemplateRequest, [
      { name: "S" },
      { description: "" },
      { schemaVersion: null },
      { schemaVersion: "workspace-2" },
      { document: false },
      { kind: "workspace" }
    ])
    refusesBody(Templates.UpdateTemplateRequest, [
      {},
      { kind: "A" },
      { schemaVersion: "" },
      { document: { a: "\ud800" } },
      { name: "S", extra: true }
    ])
    takes(Templates.TemplateListQuery, [
      {},
      { q: "service", kind: "workspace", limit: "10" },
      { q: " api " }
    ])
    refuses(Templates.TemplateListQuery, [
      { q: "" },
      { kind: "Work space" },
      { limit: "0" }
    ])
    takes(Templates.InstantiateTemplateQuery, [
      {},
      { versionId: "tpv_01m6dsg7e0efys54g9r9pw3w1w" }
    ])
    refuses(Templates.InstantiateTemplateQuery, [
      { versionId: "tpl_01m6dsg7e0fba8ae84244djf60" },
      { versionId: "1" }
    ])
    takes(Templates.TemplateVersionPath, [
      { templateId: "tpl_01m6dsg7e0fba8ae84244djf60", versionId: "tpv_01m6dsg7e0efys54g9r9pw3w1w" }
    ])
    refuses(Templates.TemplateVersionPath, [
      { templateId: "tpl_01m6dsg7e0fba8ae84244djf60" }
    ])
  })

  it("says what is wrong with a refused value", () => {
    const refusal = (input: unknown) => bodyRefusal(Templates.CreateTemplateRequest, input)
    expect(refusal({ name: "S", kind: "k", document: "x".repeat(Templates.MAX_TEMPLATE_DOCUMENT_BYTES) }))
      .toContain(`must be at most 256 KiB (262144 bytes) as compact JSON; this one is ${Templates.MAX_TEMPLATE_DOCUMENT_BYTES + 2} bytes`)
    expect(refusal({ name: "S", kind: "k", document: { a: ["ok", "\ud800"] } })).toMatch(/lone UTF-16 surrogate[\s\S]*\["document"\]\["a"\]\[1\]/)
    expect(refusal({ name: "S", kind: "Workspace", document })).toContain("must be 1 to 64 lowercase letters")
    expect(decode(Templates.TemplateSchemaVersion, ".v1")).toMatchObject({ ok: false, message: expect.stringContaining("starting with a letter or digit") })
  })
})
