import { describe, expect, it } from "@effect/vitest"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { apiOf } from "../src/ApiOf.js"
import * as Idempotency from "../src/Idempotency.js"
import { Authentication, MemberAuthentication, OptionalAuthentication } from "../src/Security.js"
import { jsonSchema3Of, jsonSchemaOf, sameOn } from "./differential.js"
import { effect3 } from "./effect3.js"

const Idempotency3 = effect3("Idempotency")

describe("Idempotency on Effect 4", () => {
  it("keeps the header rules and the key's schema", () => {
    expect(Idempotency.idempotencyKeyHeader).toBe(Idempotency3.idempotencyKeyHeader)
    expect(Idempotency.idempotentReplayedHeader).toBe(Idempotency3.idempotentReplayedHeader)
    expect(Idempotency.idempotencyKeyLifetimeHours).toBe(Idempotency3.idempotencyKeyLifetimeHours)
    expect(Idempotency.idempotencyKeyPattern.source).toBe(Idempotency3.idempotencyKeyPattern.source)
    sameOn(Idempotency.IdempotencyKey, Idempotency3.IdempotencyKey, [
      "3f6c2a9e-8d41-4b7a-9c0e-5a1d2b3c4e5f", " ", "~", "", "x".repeat(255), "x".repeat(256), "clé", "a\u0000", "tab\there"
    ])
    expect(jsonSchemaOf(Idempotency.IdempotencyKey)).toEqual(jsonSchema3Of(Idempotency3.IdempotencyKey))
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
