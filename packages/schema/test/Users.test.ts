/** Users.ts: sign-up, sign-in, the account and its sessions: their examples and refusals (a refusal never echoes a password). */
import { describe, expect, it } from "@effect/vitest"
import * as Users from "../src/Users.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Users", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Users.User, examplesOfComponent("User"))
    roundTrips(Users.Session, examplesOfComponent("Session"))
    roundTrips(Users.Me, examplesOfComponent("Me"))
    roundTrips(Users.MySession, examplesOfComponent("MySession"))
    roundTrips(Users.HeldApiKey, examplesOfComponent("HeldApiKey"))
    roundTrips(Users.ChangePasswordResult, examplesOfComponent("ChangePasswordResult"))
    roundTrips(Users.ChangeEmailResult, examplesOfComponent("ChangeEmailResult"))
  })

  it("takes what its schemas allow and refuses the rest, without echoing a password", () => {
    const password = "correct horse battery staple"
    takes(Users.SignUpRequest, [
      { email: "ada@acme.example", password, name: "Ada" }
    ])
    refuses(Users.SignUpRequest, [
      { email: "ada@acme.example", password: "short", name: "Ada" },
      { email: "ada@acme.example", password: "x".repeat(257), name: "Ada" },
      { email: "not an address", password, name: "Ada" },
      { email: "ada@acme.example", password, name: "" },
      { email: "ada@acme.example", password }
    ])
    takes(Users.SignInRequest, [
      { email: "ada@acme.example", password: "x" }
    ])
    refuses(Users.SignInRequest, [
      { email: "ada@acme.example", password: "" },
      { email: "ada@acme.example", password: "x".repeat(257) }
    ])
    takes(Users.ChangePasswordRequest, [
      { currentPassword: "old", newPassword: password }
    ])
    refuses(Users.ChangePasswordRequest, [
      { currentPassword: "", newPassword: password },
      { currentPassword: "old", newPassword: "short" }
    ])
    takes(Users.MyOrganizationsQuery, [{}, { deleted: "true" }])
    refuses(Users.MyOrganizationsQuery, [{ deleted: "1" }])
    const refused = decode(Users.SignUpRequest, { email: "ada@acme.example", password: "hunter2", name: "Ada" })
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("must be 10 to 256 characters") })
    expect(refused.ok || refused.message.includes("hunter2")).toBe(false)
  })
})
