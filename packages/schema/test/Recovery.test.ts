/** Recovery.ts: password reset requests and links, their examples and refusals (a refusal never echoes a password). */
import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Recovery from "../src/Recovery.js"
import { examplesAt, examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

const token = "opr_EB5TiK-b04T8FyPuhyVBna7yZTEZEiEA3opgxTHzXex"
const password = "correct horse battery staple"

describe("Recovery", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Recovery.PasswordResetLink, examplesOfComponent("PasswordResetLink"))
    roundTrips(Recovery.PasswordResetResult, examplesOfComponent("PasswordResetResult"))
    roundTrips(Recovery.PasswordResetLinkResponse, examplesAt("POST /v1/members/{memberId}/password-reset 201"))
    roundTrips(Recovery.ResetPasswordRequest, examplesAt("POST /v1/auth/password-reset request"))
    roundTrips(Recovery.ForgotPasswordRequest, examplesAt("POST /v1/auth/forgot-password request"))
    roundTrips(Recovery.VerifyEmailRequest, wireExamples(Recovery.VerifyEmailRequest.ast))
    roundTrips(Recovery.VerifiedEmail, wireExamples(Recovery.VerifiedEmail.ast))
  })

  it("takes what its schemas allow and refuses the rest, without echoing a password", () => {
    takes(Recovery.ResetPasswordRequest, [
      { token, newPassword: password },
      { token, newPassword: password, revokeApiKeys: true }
    ])
    refuses(Recovery.ResetPasswordRequest, [
      { token: "", newPassword: password },
      { token: "x".repeat(256), newPassword: password },
      { token, newPassword: "short" },
      { token, newPassword: password, revokeApiKeys: "true" },
      { newPassword: password }
    ])
    takes(Recovery.ForgotPasswordRequest, [{ email: "ada@acme.example" }, { email: " ada@acme.example " }])
    refuses(Recovery.ForgotPasswordRequest, [{ email: "ada" }, {}])
    takes(Recovery.VerifyEmailRequest, [{ token: "opv_x" }])
    refuses(Recovery.VerifyEmailRequest, [{ token: "" }, { token: "x".repeat(256) }])
    takes(Recovery.MemberPasswordResetPath, [{ memberId: "om_01m6dsg7e0e149zv53hej0fvry" }])
    refuses(Recovery.MemberPasswordResetPath, [{ memberId: "usr_01m6dsg7e0fp28mz11s94rrak7" }])
    takes(Recovery.UserPasswordResetPath, [{ userId: "usr_01m6dsg7e0fp28mz11s94rrak7" }])
    refuses(Recovery.UserPasswordResetPath, [{ userId: "om_01m6dsg7e0e149zv53hej0fvry" }])
    const refused = decode(Recovery.ResetPasswordRequest, { token, newPassword: "hunter2" })
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("must be 10 to 256 characters") })
    expect(refused.ok || refused.message.includes("hunter2")).toBe(false)
    expect(decode(Recovery.VerifyEmailRequest, { token: "" })).toMatchObject({ ok: false, message: expect.stringContaining("must not be empty") })
  })
})
