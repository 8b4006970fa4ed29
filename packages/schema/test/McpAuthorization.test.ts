/**
 * McpAuthorization.ts: the document's examples of connecting an MCP server decode and encode back unchanged, and the
 * OAuth callback's query taken and refused (a missing state says to start again).
 */
import { describe, expect, it } from "@effect/vitest"
import * as McpAuthorization from "../src/McpAuthorization.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

const state = "eyJ2IjoxLCJpZCI6Im1vYV94In0.k3JxQ9"

describe("McpAuthorization", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpAuthorization.McpConnectResult, examplesOfComponent("McpConnectResult"))
    roundTrips(McpAuthorization.McpOAuthCallbackResult, examplesOfComponent("McpOAuthCallbackResult"))
    roundTrips(McpAuthorization.McpDisconnectResult, examplesOfComponent("McpDisconnectResult"))
    roundTrips(McpAuthorization.McpClientMetadataDocument, examplesOfComponent("McpClientMetadataDocument"))
    roundTrips(McpAuthorization.McpOAuthCallbackQuery, wireExamples(McpAuthorization.McpOAuthCallbackQuery.ast))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(McpAuthorization.McpOAuthCallbackQuery, [
      { code: "SplxlOBeZQQYbYS6WxSbIA", state },
      { error: "access_denied", error_description: "Declined.", state, iss: "https://login.provider.example" },
      { state }
    ])
    refuses(McpAuthorization.McpOAuthCallbackQuery, [
      {},
      { code: "c" },
      { code: "c", state: "" },
      { code: "c", state: "s".repeat(1025) },
      { code: "c".repeat(4097), state },
      { error: "e".repeat(256), state },
      { iss: "i".repeat(2049), state }
    ])
    takes(McpAuthorization.McpConnectResult, [
      { status: "connected", authorizeUrl: null },
      { status: "needs_auth", authorizeUrl: "https://x.example/authorize" }
    ])
    refuses(McpAuthorization.McpConnectResult, [
      { status: "pending", authorizeUrl: null },
      { status: "connected" }
    ])
    // A missing or empty state says to start again.
    const noState = "The callback carries no `state`: start again with connect."
    expect(decode(McpAuthorization.McpOAuthCallbackQuery, { code: "c" })).toMatchObject({ ok: false, message: expect.stringContaining(noState) })
    expect(decode(McpAuthorization.McpOAuthCallbackQuery, { code: "c", state: "" })).toMatchObject({ ok: false, message: expect.stringContaining(noState) })
  })
})
