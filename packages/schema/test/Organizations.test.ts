import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Organizations from "../src/Organizations.js"
import { componentSchema, decode3, decode4, documentExamples, examplesOfComponent, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Organizations3 = effect3("Organizations")

describe("Organizations on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Organizations, Organizations3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: Effect 3's override stated OrganizationMetadata as
      // `{ type: object, additionalProperties: true, maxProperties: 50 }` and lost its description and examples;
      // Effect 4 states its string values, description and examples. Mapped back here to compare the rest.
      OrganizationMetadata: (schema) => {
        expect(schema).toMatchObject({ additionalProperties: { type: "string" }, description: expect.stringContaining("key-value pairs"), examples: [{ costCenter: "R&D-42" }] })
        const { rest } = splitKey(splitKey(schema, "description").rest, "examples")
        return { ...(typeof rest === "object" ? rest : {}), additionalProperties: true }
      },
      // A real difference, for the OpenAPI normalisation step: a member that describes a named schema (`rows`,
      // PurgeRows) refers to it with its description beside (annotateKey), where Effect 3 inlined a described copy.
      // (`purgeAfter`, a Timestamp, loses its description in both: see withoutTransformedMemberDescriptions.)
      OrganizationDeletion: (schema) => {
        const rows = { $ref: "ref:PurgeRows", description: "What the purge will remove, counted when it was deleted: rows per table." }
        expect(schema).toMatchObject({ properties: { purgeAfter: { $ref: "ref:Timestamp" }, rows } })
        const copy = splitKey(splitKey(componentSchema("OrganizationDeletion"), "properties").value ?? null, "rows").value ?? null
        return JSON.parse(JSON.stringify(schema).replace(JSON.stringify(rows), JSON.stringify(copy)))
      },
      // A real difference: Effect 3's override of `confirmName` left its description out of the document; Effect 4
      // keeps it. Dropped here to compare the rest.
      DeleteOrganizationRequest: (schema) => {
        const description = "The organization's name exactly as `GET /v1/organization` shows it: a deletion names what it deletes."
        expect(schema).toMatchObject({ properties: { confirmName: { description } } })
        return JSON.parse(JSON.stringify(schema).replace(`"description":${JSON.stringify(description)},`, ""))
      }
    })
    expect(names.length).toBeGreaterThan(20)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Organizations.Organization, Organizations3.Organization, examplesOfComponent("Organization"))
    roundTrips(Organizations.Membership, Organizations3.Membership, examplesOfComponent("Membership"))
    roundTrips(Organizations.OrganizationDetails, Organizations3.OrganizationDetails, examplesOfComponent("OrganizationDetails"))
    roundTrips(Organizations.OrganizationDeletion, Organizations3.OrganizationDeletion, examplesOfComponent("OrganizationDeletion"))
    roundTrips(Organizations.AdminOrganization, Organizations3.AdminOrganization, examplesOfComponent("AdminOrganization"))
    // The document shows no example of its own for the metadata (Effect 3's override left it out): the schema's.
    roundTrips(Organizations.OrganizationMetadata, Organizations3.OrganizationMetadata, wireExamples(Organizations.OrganizationMetadata.ast))
    const requests = documentExamples().filter(({ at }) => /^(POST|PATCH|DELETE) \/v1\/organizations?( |\/)/.test(at) && at.includes("request"))
    expect(requests.length).toBeGreaterThan(0)
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Organizations.CreateOrganizationRequest, Organizations3.CreateOrganizationRequest, [
      { name: "Acme" }, { name: "  Acme  " }, { name: "A" }, { name: "x".repeat(121) }, { name: "Ac\u0000me" }, {}, { name: 42 }
    ])
    sameOn(Organizations.ChangePlanRequest, Organizations3.ChangePlanRequest, [{ plan: "enterprise" }, { plan: "gold" }, {}])
    sameOn(Organizations.ClaimOperatorRequest, Organizations3.ClaimOperatorRequest, [{ setupToken: "t" }, { setupToken: "" }, { setupToken: "t".repeat(513) }])
    sameOn(Organizations.UpdateOrganizationRequest, Organizations3.UpdateOrganizationRequest, [
      { name: "Acme Corporation" },
      { logoUrl: null },
      { logoUrl: "/logos/acme.png" },
      { logoUrl: "https://cdn.acme.example/logo.png" },
      { metadata: {} },
      { metadata: { costCenter: "R&D-42" } },
      {},
      { logoUrl: "http://cdn.acme.example/logo.png" },
      { logoUrl: "//evil.example/x.png" },
      { metadata: { "bad key": "x" } },
      { metadata: { key: "x".repeat(501) } },
      { metadata: { key: "a\u0000" } },
      { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
      { metadata: { key: 1 } }
    ])
    sameOn(Organizations.DeleteOrganizationRequest, Organizations3.DeleteOrganizationRequest, [{ confirmName: "Acme" }, { confirmName: "x".repeat(201) }, {}])
    sameOn(Organizations.AdminOrganizationListQuery, Organizations3.AdminOrganizationListQuery, [
      {}, { q: "acme", deleted: "true" }, { deleted: "false", limit: "10" }, { deleted: "yes" }, { q: "" }, { limit: "0" }
    ])
    // The metadata's refusals name the member.
    const refused = decode4(Organizations.OrganizationMetadata, { "bad key": "x" })
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("is not a metadata key") })
    expect(refused.ok || refused.message.includes("bad key")).toBe(true)
    expect(decode3(Organizations3.OrganizationMetadata, { "bad key": "x" }).ok).toBe(false)
  })
})
