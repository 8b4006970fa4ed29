/**
 * Idempotency.ts: the `Idempotency-Key` header's rules (its name, what a key may be, how long it is kept, the header
 * of a replayed answer) and the operations that take one: writes that require credentials.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { apiOf } from "../src/ApiOf.js"
import * as Idempotency from "../src/Idempotency.js"
import { Authentication, MemberAuthentication, OptionalAuthentication } from "../src/Security.js"
import { refuses, takes } from "./support/Decoding.js"

describe("Idempotency", () => {
  it("keeps the header rules and the key's schema", () => {
    expect(Idempotency.idempotencyKeyHeader).toBe("idempotency-key")
    expect(Idempotency.idempotentReplayedHeader).toBe("idempotent-replayed")
    expect(Idempotency.idempotencyKeyLifetimeHours).toBe(24)
    expect(Idempotency.idempotencyKeyPattern.source).toBe("^[\\x20-\\x7E]{1,255}$")
    takes(Idempotency.IdempotencyKey, [
      "3f6c2a9e-8d41-4b7a-9c0e-5a1d2b3c4e5f",
      " ",
      "~",
      "x".repeat(255)
    ])
    refuses(Idempotency.IdempotencyKey, [
      "",
      "x".repeat(256),
      "clé",
      "a\u0000",
      "tab\there"
    ])
  })

  it("takes the key on writes that require credentials, by operation and by request path", () => {
    const teams = HttpApiGroup.make("teams")
      .add(HttpApiEndpoint.post("create", "/v1/teams").middleware(MemberAuthentication))
      .add(HttpApiEndpoint.get("list", "/v1/teams").middleware(MemberAuthentication))
      .add(HttpApiEndpoint.delete("delete", "/v1/teams/:teamId").middleware(MemberAuthentication))
    const invitations = HttpApiGroup.make("invitations")
      .add(HttpApiEndpoint.post("accept", "/v1/invitations/accept").middleware(OptionalAuthentication))
      .add(HttpApiEndpoint.patch("update", "/v1/invitations/:invitationId").middleware(Authentication))
    const auth = HttpApiGroup.make("auth", { topLevel: true }).add(HttpApiEndpoint.post("signIn", "/v1/auth/sign-in"))
    const operations = Idempotency.idempotentOperations(apiOf(teams, invitations, auth))
    expect([...operations.ids].sort()).toEqual(["invitations.update", "teams.create", "teams.delete"])
    expect(operations.matches("post", "/v1/teams")).toBe(true)
    expect(operations.matches("POST", "/api/v1/teams/")).toBe(true)
    expect(operations.matches("GET", "/v1/teams")).toBe(false)
    expect(operations.matches("DELETE", "/v1/teams/tem_1")).toBe(true)
    // The most specific route wins: accepting an invitation is open to anonymous callers.
    expect(operations.matches("POST", "/v1/invitations/accept")).toBe(false)
    expect(operations.matches("PATCH", "/v1/invitations/accept")).toBe(true)
    expect(operations.matches("POST", "/v1/auth/sign-in")).toBe(false)
  })
})
