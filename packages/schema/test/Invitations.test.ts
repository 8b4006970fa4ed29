/** Invitations.ts: invitations sent, listed and accepted: the document's examples, requests taken and refused. */
import { describe, it } from "@effect/vitest"
import * as Invitations from "../src/Invitations.js"
import { examplesAt, examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

const token = "opi_EB5TiK-b04T8FyPuhyVBna7yZTEZEiEA3opgxTHzXex"

describe("Invitations", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Invitations.Invitation, examplesOfComponent("Invitation"))
    roundTrips(Invitations.InvitationPreview, examplesOfComponent("InvitationPreview"))
    roundTrips(Invitations.AcceptedInvitation, examplesOfComponent("AcceptedInvitation"))
    roundTrips(Invitations.RefreshedInvitation, examplesOfComponent("RefreshedInvitation"))
    roundTrips(Invitations.InvitationPage, examplesOfComponent("InvitationPage"))
    roundTrips(Invitations.InvitationResponse, examplesOfComponent("InvitationResponse"))
    roundTrips(Invitations.CreatedInvitation, examplesAt("POST /v1/invitations 201"))
    roundTrips(Invitations.InvitationCreated, [...examplesAt("POST /v1/invitations 201"), ...examplesAt("POST /v1/invitations 200")])
    roundTrips(Invitations.CreateInvitationRequest, examplesAt("POST /v1/invitations request"))
    roundTrips(Invitations.AcceptInvitationRequest, examplesAt("POST /v1/invitations/accept request"))
    roundTrips(Invitations.PreviewInvitationRequest, examplesAt("POST /v1/invitations/preview request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Invitations.InvitationListQuery, [{}, { status: "expired", limit: "5" }])
    refuses(Invitations.InvitationListQuery, [{ status: "lost" }, { limit: "x" }])
    takes(Invitations.CreateInvitationRequest, [
      { email: "edsger@acme.example", role: "member" },
      { email: "  edsger@acme.example ", role: "admin" }
    ])
    refuses(Invitations.CreateInvitationRequest, [
      { email: "edsger@acme.example", role: "owner" },
      { email: "edsger", role: "member" },
      { role: "member" }
    ])
    takes(Invitations.AcceptInvitationRequest, [
      { token },
      { token, signUp: { name: " Edsger ", password: "correct horse battery staple" } }
    ])
    refuses(Invitations.AcceptInvitationRequest, [
      { token: "" },
      { token: "x".repeat(256) },
      { token, signUp: { name: "Edsger", password: "short" } },
      { token, signUp: { name: "", password: "correct horse battery staple" } },
      { token, signUp: null },
      {}
    ])
    takes(Invitations.PreviewInvitationRequest, [{ token }])
    refuses(Invitations.PreviewInvitationRequest, [{ token: "" }, { token: 1 }])
    const refreshed = examplesAt("POST /v1/invitations 200")
    takes(Invitations.InvitationCreated, [
      ...refreshed
    ])
    refuses(Invitations.InvitationCreated, [
      ...refreshed.map((example) => typeof example === "object" && example !== null && !Array.isArray(example) ? { ...example, refreshed: "yes" } : example),
      { inviteToken: token, refreshed: true }
    ])
  })
})
