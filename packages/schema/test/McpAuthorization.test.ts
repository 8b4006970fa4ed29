import { describe, expect, it } from "@effect/vitest"
import { NO_NUL_PATTERN } from "../src/Common.js"
import * as McpAuthorization from "../src/McpAuthorization.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { decode4, examplesOfComponent, jsonSchemaOf, parameterSchema, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { effect3 } from "./effect3.js"

const McpAuthorization3 = effect3("McpAuthorization")
const OpenApiExamples3 = effect3("OpenApiExamples")

const state = "eyJ2IjoxLCJpZCI6Im1vYV94In0.k3JxQ9"

describe("McpAuthorization on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(McpAuthorization, McpAuthorization3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names).toHaveLength(6)
  })

  it("gives the callback's query parameters the document's schemas", () => {
    const { value: properties } = splitKey(jsonSchemaOf(McpAuthorization.McpOAuthCallbackQuery), "properties")
    for (const name of ["code", "state", "error", "error_description", "iss"]) {
      // The document's own step (Api.ts, kept by the port of the API) adds the request guard's NUL rule to each
      // request string: added here too.
      const member = splitKey(properties ?? null, name).value
      expect({ ...(typeof member === "object" ? member : {}), pattern: NO_NUL_PATTERN }, name)
        .toEqual(parameterSchema("get", "/v1/mcp-connections/oauth/callback", name))
    }
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(McpAuthorization.McpConnectResult, McpAuthorization3.McpConnectResult, examplesOfComponent("McpConnectResult"))
    roundTrips(McpAuthorization.McpOAuthCallbackResult, McpAuthorization3.McpOAuthCallbackResult, examplesOfComponent("McpOAuthCallbackResult"))
    roundTrips(McpAuthorization.McpDisconnectResult, McpAuthorization3.McpDisconnectResult, examplesOfComponent("McpDisconnectResult"))
    roundTrips(McpAuthorization.McpClientMetadataDocument, McpAuthorization3.McpClientMetadataDocument, examplesOfComponent("McpClientMetadataDocument"))
    roundTrips(McpAuthorization.McpOAuthCallbackQuery, McpAuthorization3.McpOAuthCallbackQuery, wireExamples(McpAuthorization.McpOAuthCallbackQuery.ast))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(McpAuthorization.McpOAuthCallbackQuery, McpAuthorization3.McpOAuthCallbackQuery, [
      { code: "SplxlOBeZQQYbYS6WxSbIA", state },
      { error: "access_denied", error_description: "Declined.", state, iss: "https://login.provider.example" },
      { state },
      {},
      { code: "c" },
      { code: "c", state: "" },
      { code: "c", state: "s".repeat(1025) },
      { code: "c".repeat(4097), state },
      { error: "e".repeat(256), state },
      { iss: "i".repeat(2049), state }
    ])
    sameOn(McpAuthorization.McpConnectResult, McpAuthorization3.McpConnectResult, [
      { status: "connected", authorizeUrl: null }, { status: "needs_auth", authorizeUrl: "https://x.example/authorize" },
      { status: "pending", authorizeUrl: null }, { status: "connected" }
    ])
    // A missing or empty state says to start again, as Effect 3's did.
    const noState = "The callback carries no `state`: start again with connect."
    expect(decode4(McpAuthorization.McpOAuthCallbackQuery, { code: "c" })).toMatchObject({ ok: false, message: expect.stringContaining(noState) })
    expect(decode4(McpAuthorization.McpOAuthCallbackQuery, { code: "c", state: "" })).toMatchObject({ ok: false, message: expect.stringContaining(noState) })
  })
})
