import { describe, expect, it } from "@effect/vitest"
import * as Invitations3 from "../../../packages/schema/src/Invitations.js"
import * as OpenApiExamples3 from "../../../packages/schema/src/OpenApiExamples.js"
import * as Invitations from "../src/Invitations.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"

const token = "opi_EB5TiK-b04T8FyPuhyVBna7yZTEZEiEA3opgxTHzXex"

describe("Invitations on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Invitations, Invitations3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names.length).toBe(15)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Invitations.Invitation, Invitations3.Invitation, examplesOfComponent("Invitation"))
    roundTrips(Invitations.InvitationPreview, Invitations3.InvitationPreview, examplesOfComponent("InvitationPreview"))
    roundTrips(Invitations.AcceptedInvitation, Invitations3.AcceptedInvitation, examplesOfComponent("AcceptedInvitation"))
    roundTrips(Invitations.RefreshedInvitation, Invitations3.RefreshedInvitation, examplesOfComponent("RefreshedInvitation"))
    roundTrips(Invitations.InvitationCreated, Invitations3.InvitationCreated, [
      ...examplesOfComponent("RefreshedInvitation").map((example) => typeof example === "object" && example !== null && !Array.isArray(example) ? { ...example, refreshed: false } : example),
      ...examplesOfComponent("RefreshedInvitation")
    ])
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Invitations.InvitationListQuery, Invitations3.InvitationListQuery, [{}, { status: "expired", limit: "5" }, { status: "lost" }, { limit: "x" }])
    sameOn(Invitations.CreateInvitationRequest, Invitations3.CreateInvitationRequest, [
      { email: "edsger@acme.example", role: "member" }, { email: "  edsger@acme.example ", role: "admin" },
      { email: "edsger@acme.example", role: "owner" }, { email: "edsger", role: "member" }, { role: "member" }
    ])
    sameOn(Invitations.AcceptInvitationRequest, Invitations3.AcceptInvitationRequest, [
      { token }, { token, signUp: { name: " Edsger ", password: "correct horse battery staple" } },
      { token: "" }, { token: "x".repeat(256) }, { token, signUp: { name: "Edsger", password: "short" } },
      { token, signUp: { name: "", password: "correct horse battery staple" } }, { token, signUp: null }, {}
    ])
    sameOn(Invitations.PreviewInvitationRequest, Invitations3.PreviewInvitationRequest, [{ token }, { token: "" }, { token: 1 }])
    sameOn(Invitations.InvitationCreated, Invitations3.InvitationCreated, [
      ...examplesOfComponent("RefreshedInvitation"),
      ...examplesOfComponent("RefreshedInvitation").map((example) => typeof example === "object" && example !== null && !Array.isArray(example) ? { ...example, refreshed: "yes" } : example),
      { inviteToken: token, refreshed: true }
    ])
  })
})
