/** Bootstrap.ts: agent-first setup (a provisional organization and its one-time claim links): its examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import * as Bootstrap from "../src/Bootstrap.js"
import { examplesAt, examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Bootstrap", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Bootstrap.ClaimLink, examplesOfComponent("ClaimLink"))
    roundTrips(Bootstrap.BootstrapWorkspaceRequest, examplesAt("POST /v1/bootstrap/workspace request"))
    roundTrips(Bootstrap.BootstrapWorkspaceResult, examplesAt("POST /v1/bootstrap/workspace 201"))
    roundTrips(Bootstrap.AcceptClaimRequest, examplesAt("POST /v1/bootstrap/claims/accept request"))
    roundTrips(Bootstrap.AcceptClaimResult, examplesOfComponent("AcceptClaimResult"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Bootstrap.ClaimRoles, [
      ["owner"],
      ["admin", "owner", "member"]
    ])
    refuses(Bootstrap.ClaimRoles, [
      [],
      ["admin"],
      ["owner", "owner"],
      ["owner", "admin", "member", "admin"],
      ["owner", "boss"]
    ])
    takes(Bootstrap.BootstrapWorkspaceRequest, [
      { workspaceName: "Acme" },
      { workspaceName: " Acme ", claimRoles: ["owner", "admin"], ownerEmail: "ada@acme.example" }
    ])
    refuses(Bootstrap.BootstrapWorkspaceRequest, [
      { workspaceName: "A" },
      { workspaceName: "Acme", claimRoles: ["member"] },
      { workspaceName: "Acme", ownerEmail: "ada" },
      {}
    ])
    takes(Bootstrap.AcceptClaimRequest, [{ token: "x".repeat(24) }])
    refuses(Bootstrap.AcceptClaimRequest, [{ token: "x".repeat(23) }, { token: "x".repeat(256) }])
    expect(decode(Bootstrap.ClaimRoles, ["owner", "owner"])).toMatchObject({ ok: false, message: expect.stringContaining("roles must not repeat") })
    expect(decode(Bootstrap.ClaimRoles, ["admin"])).toMatchObject({ ok: false, message: expect.stringContaining("must include owner") })
  })
})
