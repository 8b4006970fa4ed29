/**
 * Organizations.ts: the document's examples of organizations decode and encode back unchanged, the requests and
 * queries taken and refused, and a refused metadata key named.
 */
import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Organizations from "../src/Organizations.js"
import { documentExamples, examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Organizations", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Organizations.Organization, examplesOfComponent("Organization"))
    roundTrips(Organizations.Membership, examplesOfComponent("Membership"))
    roundTrips(Organizations.OrganizationDetails, examplesOfComponent("OrganizationDetails"))
    roundTrips(Organizations.OrganizationDeletion, examplesOfComponent("OrganizationDeletion"))
    roundTrips(Organizations.AdminOrganization, examplesOfComponent("AdminOrganization"))
    // The document shows no example of its own for the metadata: the schema's.
    roundTrips(Organizations.OrganizationMetadata, wireExamples(Organizations.OrganizationMetadata.ast))
    const requests = documentExamples().filter(({ at }) => /^(POST|PATCH|DELETE) \/v1\/organizations?( |\/)/.test(at) && at.includes("request"))
    expect(requests.length).toBeGreaterThan(0)
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Organizations.CreateOrganizationRequest, [
      { name: "Acme" },
      { name: "  Acme  " }
    ])
    refuses(Organizations.CreateOrganizationRequest, [
      { name: "A" },
      { name: "x".repeat(121) },
      { name: "Ac\u0000me" },
      {},
      { name: 42 }
    ])
    takes(Organizations.ChangePlanRequest, [{ plan: "enterprise" }])
    refuses(Organizations.ChangePlanRequest, [{ plan: "gold" }, {}])
    takes(Organizations.ClaimOperatorRequest, [{ setupToken: "t" }])
    refuses(Organizations.ClaimOperatorRequest, [{ setupToken: "" }, { setupToken: "t".repeat(513) }])
    takes(Organizations.UpdateOrganizationRequest, [
      { name: "Acme Corporation" },
      { logoUrl: null },
      { logoUrl: "/logos/acme.png" },
      { logoUrl: "https://cdn.acme.example/logo.png" },
      { metadata: {} },
      { metadata: { costCenter: "R&D-42" } }
    ])
    refuses(Organizations.UpdateOrganizationRequest, [
      {},
      { logoUrl: "http://cdn.acme.example/logo.png" },
      { logoUrl: "//evil.example/x.png" },
      { metadata: { "bad key": "x" } },
      { metadata: { key: "x".repeat(501) } },
      { metadata: { key: "a\u0000" } },
      { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) },
      { metadata: { key: 1 } }
    ])
    takes(Organizations.DeleteOrganizationRequest, [{ confirmName: "Acme" }])
    refuses(Organizations.DeleteOrganizationRequest, [{ confirmName: "x".repeat(201) }, {}])
    takes(Organizations.AdminOrganizationListQuery, [
      {},
      { q: "acme", deleted: "true" },
      { deleted: "false", limit: "10" }
    ])
    refuses(Organizations.AdminOrganizationListQuery, [
      { deleted: "yes" },
      { q: "" },
      { limit: "0" }
    ])
    // The metadata's refusals name the member.
    const refused = decode(Organizations.OrganizationMetadata, { "bad key": "x" })
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("is not a metadata key") })
    expect(refused.ok || refused.message.includes("bad key")).toBe(true)
  })
})
