/**
 * The pure choices of an MCP OAuth connect (registration, authorization server, scopes), signed states and the public
 * base URL, without a server (http/McpOAuth.test.ts has the same "choices (units)" block beside its HTTP tests).
 */
import * as NodeCrypto from "node:crypto"
import { describe, expect, it } from "vitest"
import * as OAuthChoices from "../src/mcp/OAuthChoices.js"
import * as OAuthClientMetadata from "../src/mcp/OAuthClientMetadata.js"
import * as OAuthState from "../src/platform/OAuthState.js"
import * as PublicUrl from "../src/platform/PublicUrl.js"

describe("choices (units)", () => {
  const none = { oauthClientId: null, oauthRegistrationSource: null, oauthMetadata: null, oauthRedirectUri: null } as const
  /** Stored metadata as the SQL client reads it back (member names in camelCase). */
  const storedBy = (issuer: string) => ({ issuer, tokenEndpoint: `${issuer}/token` })
  const callback = `https://orgplane.example${OAuthClientMetadata.CALLBACK_PATH}`

  it("picks the registration: pre-registered, reused, client metadata document (https only), dynamic, else required", () => {
    const everything = { registration_endpoint: "https://as.example/register", client_id_metadata_document_supported: true }
    expect(OAuthChoices.chooseRegistration({ ...none, oauthClientId: "admin", oauthRegistrationSource: "pre_registered" }, "https://as.example", everything, callback, "https://orgplane.example"))
      .toEqual({ _tag: "existing", source: "pre_registered" })
    expect(
      OAuthChoices.chooseRegistration(
        { oauthClientId: "dyn", oauthRegistrationSource: "dynamic", oauthMetadata: storedBy("https://as.example"), oauthRedirectUri: callback },
        "https://as.example",
        everything,
        callback,
        undefined
      )
    ).toEqual({ _tag: "existing", source: "dynamic" })
    // A client registered with another authorization server is not reused.
    expect(
      OAuthChoices.chooseRegistration(
        { oauthClientId: "dyn", oauthRegistrationSource: "dynamic", oauthMetadata: storedBy("https://old.example"), oauthRedirectUri: callback },
        "https://as.example",
        everything,
        callback,
        "https://orgplane.example"
      )
    ).toEqual({ _tag: "client_metadata", clientId: `https://orgplane.example${OAuthClientMetadata.CLIENT_METADATA_PATH}` })
    expect(OAuthChoices.chooseRegistration(none, "https://as.example", everything, callback, "http://orgplane.example")).toEqual({ _tag: "dynamic" })
    expect(OAuthChoices.chooseRegistration(none, "https://as.example", everything, callback, undefined)).toEqual({ _tag: "dynamic" })
    expect(OAuthChoices.chooseRegistration(none, "https://as.example", { client_id_metadata_document_supported: true }, callback, undefined))
      .toEqual({ _tag: "required" })
  })

  it("picks the authorization server: the configured issuer, the single one named, or asks when several", () => {
    expect(OAuthChoices.chooseIssuer("https://chosen.example", { authorization_servers: ["https://a.example", "https://b.example"] }, "https://mcp.example/mcp"))
      .toEqual({ issuer: "https://chosen.example" })
    expect(OAuthChoices.chooseIssuer(null, { authorization_servers: ["https://a.example"] }, "https://mcp.example/mcp")).toEqual({ issuer: "https://a.example" })
    expect(OAuthChoices.chooseIssuer(null, { authorization_servers: ["https://a.example", "https://b.example"] }, "https://mcp.example/mcp"))
      .toEqual({ several: ["https://a.example", "https://b.example"] })
    expect(OAuthChoices.chooseIssuer(null, undefined, "https://mcp.example/mcp")).toEqual({ issuer: "https://mcp.example" })
  })

  it("asks for the configured scopes, else the challenge's, else the metadata's", () => {
    expect(OAuthChoices.scopesToRequest(["a"], "b c", ["d"])).toEqual(["a"])
    expect(OAuthChoices.scopesToRequest([], "b  c", ["d"])).toEqual(["b", "c"])
    expect(OAuthChoices.scopesToRequest([], undefined, ["d"])).toEqual(["d"])
    expect(OAuthChoices.scopesToRequest([], "", undefined)).toEqual([])
  })

  it("signs states and refuses any change to them", () => {
    const key = OAuthState.stateKeyOf(NodeCrypto.randomBytes(32))
    const state = OAuthState.signState(key, "org_1", "moa_abc")
    expect(OAuthState.verifyState(key, state)).toEqual({ organizationId: "org_1", authorizationId: "moa_abc" })
    expect(OAuthState.verifyState(key, state.replace("org_1", "org_2"))).toBeUndefined()
    expect(OAuthState.verifyState(key, `${state}x`)).toBeUndefined()
    expect(OAuthState.verifyState(key, "org_1.moa_abc")).toBeUndefined()
    expect(OAuthState.verifyState(OAuthState.stateKeyOf(NodeCrypto.randomBytes(32)), state)).toBeUndefined()
  })

  it("builds the base URL from ORGPLANE_PUBLIC_URL, else the request's host", () => {
    expect(PublicUrl.baseUrlOf({ publicUrl: "https://orgplane.example/", host: "0.0.0.0", port: 8787, basePath: "" }, "evil.example")).toBe("https://orgplane.example")
    expect(PublicUrl.baseUrlOf({ publicUrl: undefined, host: "0.0.0.0", port: 8787, basePath: "" }, "127.0.0.1:4000")).toBe("http://127.0.0.1:4000")
    expect(PublicUrl.baseUrlOf({ publicUrl: undefined, host: "0.0.0.0", port: 8787, basePath: "/orgplane" }, "127.0.0.1:4000")).toBe("http://127.0.0.1:4000/orgplane")
    expect(PublicUrl.baseUrlOf({ publicUrl: undefined, host: "127.0.0.1", port: 8787, basePath: "" }, "bad host/../x")).toBe("http://127.0.0.1:8787")
  })
})
