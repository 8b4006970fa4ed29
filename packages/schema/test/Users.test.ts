import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Users from "../src/Users.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Users3 = effect3("Users")

describe("Users on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Users, Users3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference: Effect 3's document lost the description of Session's `id` (the id's own JSON Schema
      // override won); Effect 4 writes it beside the reference. Dropped here to compare the rest.
      Session: (schema) => {
        const description = "What `GET /v1/me/sessions` lists it by and `DELETE /v1/me/sessions/{sessionId}` ends it by."
        expect(schema).toMatchObject({ properties: { id: { $ref: "ref:SessionId", description } } })
        return JSON.parse(JSON.stringify(schema).replace(`,"description":${JSON.stringify(description)}`, ""))
      }
    })
    expect(names.length).toBeGreaterThan(20)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Users.User, Users3.User, examplesOfComponent("User"))
    roundTrips(Users.Session, Users3.Session, examplesOfComponent("Session"))
    roundTrips(Users.Me, Users3.Me, examplesOfComponent("Me"))
    roundTrips(Users.MySession, Users3.MySession, examplesOfComponent("MySession"))
    roundTrips(Users.HeldApiKey, Users3.HeldApiKey, examplesOfComponent("HeldApiKey"))
    roundTrips(Users.ChangePasswordResult, Users3.ChangePasswordResult, examplesOfComponent("ChangePasswordResult"))
    roundTrips(Users.ChangeEmailResult, Users3.ChangeEmailResult, examplesOfComponent("ChangeEmailResult"))
  })

  it("refuses what the Effect 3 schemas refuse, without echoing a password", () => {
    const password = "correct horse battery staple"
    sameOn(Users.SignUpRequest, Users3.SignUpRequest, [
      { email: "ada@acme.example", password, name: "Ada" },
      { email: "ada@acme.example", password: "short", name: "Ada" },
      { email: "ada@acme.example", password: "x".repeat(257), name: "Ada" },
      { email: "not an address", password, name: "Ada" },
      { email: "ada@acme.example", password, name: "" },
      { email: "ada@acme.example", password }
    ])
    sameOn(Users.SignInRequest, Users3.SignInRequest, [
      { email: "ada@acme.example", password: "x" },
      { email: "ada@acme.example", password: "" },
      { email: "ada@acme.example", password: "x".repeat(257) }
    ])
    sameOn(Users.ChangePasswordRequest, Users3.ChangePasswordRequest, [
      { currentPassword: "old", newPassword: password },
      { currentPassword: "", newPassword: password },
      { currentPassword: "old", newPassword: "short" }
    ])
    sameOn(Users.MyOrganizationsQuery, Users3.MyOrganizationsQuery, [{}, { deleted: "true" }, { deleted: "1" }])
    const refused = decode4(Users.SignUpRequest, { email: "ada@acme.example", password: "hunter2", name: "Ada" })
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("must be 10 to 256 characters") })
    expect(refused.ok || refused.message.includes("hunter2")).toBe(false)
  })
})
