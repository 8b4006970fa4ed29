import { describe, expect, it } from "@effect/vitest"
import * as Bootstrap from "../src/Bootstrap.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { examplesAt, withGeneratedArrayDescription } from "./people.js"
import { effect3 } from "./effect3.js"

const Bootstrap3 = effect3("Bootstrap")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("Bootstrap on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Bootstrap, Bootstrap3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, not in the document (withGeneratedArrayDescription): BootstrapWorkspaceRequest's
      // `claimRoles` has its own.
      ClaimRoles: (schema) => withGeneratedArrayDescription(schema, 3)
    })
    expect(names.sort()).toEqual(["AcceptClaimRequest", "AcceptClaimResult", "BootstrapWorkspaceRequest", "BootstrapWorkspaceResult", "ClaimLink", "ClaimRoles"])
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Bootstrap.ClaimLink, Bootstrap3.ClaimLink, examplesOfComponent("ClaimLink"))
    roundTrips(Bootstrap.BootstrapWorkspaceRequest, Bootstrap3.BootstrapWorkspaceRequest, examplesAt("POST /v1/bootstrap/workspace request"))
    roundTrips(Bootstrap.BootstrapWorkspaceResult, Bootstrap3.BootstrapWorkspaceResult, examplesAt("POST /v1/bootstrap/workspace 201"))
    roundTrips(Bootstrap.AcceptClaimRequest, Bootstrap3.AcceptClaimRequest, examplesAt("POST /v1/bootstrap/claims/accept request"))
    roundTrips(Bootstrap.AcceptClaimResult, Bootstrap3.AcceptClaimResult, examplesOfComponent("AcceptClaimResult"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Bootstrap.ClaimRoles, Bootstrap3.ClaimRoles, [
      ["owner"], ["admin", "owner", "member"], [], ["admin"], ["owner", "owner"], ["owner", "admin", "member", "admin"], ["owner", "boss"]
    ])
    sameOn(Bootstrap.BootstrapWorkspaceRequest, Bootstrap3.BootstrapWorkspaceRequest, [
      { workspaceName: "Acme" }, { workspaceName: " Acme ", claimRoles: ["owner", "admin"], ownerEmail: "ada@acme.example" },
      { workspaceName: "A" }, { workspaceName: "Acme", claimRoles: ["member"] }, { workspaceName: "Acme", ownerEmail: "ada" }, {}
    ])
    sameOn(Bootstrap.AcceptClaimRequest, Bootstrap3.AcceptClaimRequest, [{ token: "x".repeat(24) }, { token: "x".repeat(23) }, { token: "x".repeat(256) }])
    expect(decode4(Bootstrap.ClaimRoles, ["owner", "owner"])).toMatchObject({ ok: false, message: expect.stringContaining("roles must not repeat") })
    expect(decode4(Bootstrap.ClaimRoles, ["admin"])).toMatchObject({ ok: false, message: expect.stringContaining("must include owner") })
  })
})
