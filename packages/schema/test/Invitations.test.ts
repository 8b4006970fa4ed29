import { describe, expect, it } from "@effect/vitest"
import * as Invitations from "../src/Invitations.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { examplesAt } from "./people.js"
import { effect3 } from "./effect3.js"

const Invitations3 = effect3("Invitations")
const OpenApiExamples3 = effect3("OpenApiExamples")

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
    roundTrips(Invitations.InvitationPage, Invitations3.InvitationPage, examplesOfComponent("InvitationPage"))
    roundTrips(Invitations.InvitationResponse, Invitations3.InvitationResponse, examplesOfComponent("InvitationResponse"))
    roundTrips(Invitations.CreatedInvitation, Invitations3.CreatedInvitation, examplesAt("POST /v1/invitations 201"))
    roundTrips(Invitations.InvitationCreated, Invitations3.InvitationCreated, [...examplesAt("POST /v1/invitations 201"), ...examplesAt("POST /v1/invitations 200")])
    roundTrips(Invitations.CreateInvitationRequest, Invitations3.CreateInvitationRequest, examplesAt("POST /v1/invitations request"))
    roundTrips(Invitations.AcceptInvitationRequest, Invitations3.AcceptInvitationRequest, examplesAt("POST /v1/invitations/accept request"))
    roundTrips(Invitations.PreviewInvitationRequest, Invitations3.PreviewInvitationRequest, examplesAt("POST /v1/invitations/preview request"))
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
    const refreshed = examplesAt("POST /v1/invitations 200")
    sameOn(Invitations.InvitationCreated, Invitations3.InvitationCreated, [
      ...refreshed,
      ...refreshed.map((example) => typeof example === "object" && example !== null && !Array.isArray(example) ? { ...example, refreshed: "yes" } : example),
      { inviteToken: token, refreshed: true }
    ])
  })
})
