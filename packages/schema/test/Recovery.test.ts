import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Recovery from "../src/Recovery.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { examplesAt } from "./people.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Recovery3 = effect3("Recovery")

const token = "opr_EB5TiK-b04T8FyPuhyVBna7yZTEZEiEA3opgxTHzXex"
const password = "correct horse battery staple"

describe("Recovery on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Recovery, Recovery3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names.sort()).toEqual([
      "ForgotPasswordRequest", "MemberPasswordResetPath", "PasswordResetLink", "PasswordResetLinkResponse", "PasswordResetResult",
      "ResetPasswordRequest", "UserPasswordResetPath", "VerifiedEmail", "VerifyEmailRequest"
    ])
    expect(Recovery.PASSWORD_RESET_TOKEN_PREFIX).toBe(Recovery3.PASSWORD_RESET_TOKEN_PREFIX)
    expect(Recovery.EMAIL_VERIFICATION_TOKEN_PREFIX).toBe(Recovery3.EMAIL_VERIFICATION_TOKEN_PREFIX)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Recovery.PasswordResetLink, Recovery3.PasswordResetLink, examplesOfComponent("PasswordResetLink"))
    roundTrips(Recovery.PasswordResetResult, Recovery3.PasswordResetResult, examplesOfComponent("PasswordResetResult"))
    roundTrips(Recovery.PasswordResetLinkResponse, Recovery3.PasswordResetLinkResponse, examplesAt("POST /v1/members/{memberId}/password-reset 201"))
    roundTrips(Recovery.ResetPasswordRequest, Recovery3.ResetPasswordRequest, examplesAt("POST /v1/auth/password-reset request"))
    roundTrips(Recovery.ForgotPasswordRequest, Recovery3.ForgotPasswordRequest, examplesAt("POST /v1/auth/forgot-password request"))
    roundTrips(Recovery.VerifyEmailRequest, Recovery3.VerifyEmailRequest, wireExamples(Recovery.VerifyEmailRequest.ast))
    roundTrips(Recovery.VerifiedEmail, Recovery3.VerifiedEmail, wireExamples(Recovery.VerifiedEmail.ast))
  })

  it("refuses what the Effect 3 schemas refuse, without echoing a password", () => {
    sameOn(Recovery.ResetPasswordRequest, Recovery3.ResetPasswordRequest, [
      { token, newPassword: password }, { token, newPassword: password, revokeApiKeys: true },
      { token: "", newPassword: password }, { token: "x".repeat(256), newPassword: password }, { token, newPassword: "short" },
      { token, newPassword: password, revokeApiKeys: "true" }, { newPassword: password }
    ])
    sameOn(Recovery.ForgotPasswordRequest, Recovery3.ForgotPasswordRequest, [{ email: "ada@acme.example" }, { email: " ada@acme.example " }, { email: "ada" }, {}])
    sameOn(Recovery.VerifyEmailRequest, Recovery3.VerifyEmailRequest, [{ token: "opv_x" }, { token: "" }, { token: "x".repeat(256) }])
    sameOn(Recovery.MemberPasswordResetPath, Recovery3.MemberPasswordResetPath, [{ memberId: "om_01m6dsg7e0e149zv53hej0fvry" }, { memberId: "usr_01m6dsg7e0fp28mz11s94rrak7" }])
    sameOn(Recovery.UserPasswordResetPath, Recovery3.UserPasswordResetPath, [{ userId: "usr_01m6dsg7e0fp28mz11s94rrak7" }, { userId: "om_01m6dsg7e0e149zv53hej0fvry" }])
    const refused = decode4(Recovery.ResetPasswordRequest, { token, newPassword: "hunter2" })
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining("must be 10 to 256 characters") })
    expect(refused.ok || refused.message.includes("hunter2")).toBe(false)
    expect(decode4(Recovery.VerifyEmailRequest, { token: "" })).toMatchObject({ ok: false, message: expect.stringContaining("must not be empty") })
  })
})
