/**
 * Sso.ts: the document's examples of SSO connections, domains and policies decode and encode back unchanged, the
 * requests taken and refused, the domain rule, and where a sign-in may return to.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Sso from "../src/Sso.js"
import { documentExamples, examplesOfComponent, type Json } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"


type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `schema` with each open record of any values (`{ type: "object" }` alone, as Effect 4 writes it) as the document
 * writes it, with `additionalProperties: {}`: the same objects.
 */
const openRecordsAsDocumented = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(openRecordsAsDocumented)
  if (!isObject(schema)) return schema
  if (schema["type"] === "object" && schema["properties"] === undefined && schema["additionalProperties"] === undefined) {
    return { ...schema, additionalProperties: {} }
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, openRecordsAsDocumented(value)]))
}

describe("Sso", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Sso.SsoTestReport, examplesOfComponent("SsoTestReport"))
    roundTrips(Sso.SsoConnection, examplesOfComponent("SsoConnection"))
    roundTrips(Sso.DomainVerificationRecord, examplesOfComponent("DomainVerificationRecord"))
    roundTrips(Sso.SsoOrganizationDomain, examplesOfComponent("SsoOrganizationDomain"))
    roundTrips(Sso.SsoPolicy, examplesOfComponent("SsoPolicy"))
    roundTrips(Sso.SsoTestResponse, examplesOfComponent("SsoTestResponse"))
    roundTrips(Sso.SsoConnectionResponse, examplesOfComponent("SsoConnectionResponse"))
    roundTrips(Sso.SsoConnectionList, examplesOfComponent("SsoConnectionList"))
    roundTrips(Sso.UpdateSsoConnectionRequest, examplesOfComponent("UpdateSsoConnectionRequest"))
    roundTrips(Sso.DomainVerificationResponse, examplesOfComponent("DomainVerificationResponse"))
    roundTrips(Sso.SsoDomainList, examplesOfComponent("SsoDomainList"))
    roundTrips(Sso.VerifyDomainResponse, examplesOfComponent("VerifyDomainResponse"))
    roundTrips(Sso.SsoPolicyResponse, examplesOfComponent("SsoPolicyResponse"))
    roundTrips(Sso.SetSsoPolicyRequest, examplesOfComponent("SetSsoPolicyRequest"))
    roundTrips(Sso.SsoDiscoverRequest, examplesOfComponent("SsoDiscoverRequest"))
    roundTrips(Sso.SsoDiscovery, examplesOfComponent("SsoDiscovery"))
    roundTrips(Sso.SsoSignInRequest, examplesOfComponent("SsoSignInRequest"))
    roundTrips(Sso.SsoCallbackResult, examplesOfComponent("SsoCallbackResult"))
    roundTrips(Sso.SsoExchangeRequest, examplesOfComponent("SsoExchangeRequest"))
    // The union of the two kinds is no component: its examples are the request's.
    const created = documentExamples().filter(({ at }) => at === "POST /v1/sso/connections request application/json")
    expect(created.length).toBe(2)
    roundTrips(Sso.CreateSsoConnectionRequest, created.map(({ value }) => value))
    // Those the document shows in no body of its own: the schemas' own.
    roundTrips(Sso.StartedSsoTest, wireExamples(Sso.StartedSsoTest.ast))
    roundTrips(Sso.StartedSsoSignIn, wireExamples(Sso.StartedSsoSignIn.ast))
    roundTrips(Sso.SsoCallbackQuery, wireExamples(Sso.SsoCallbackQuery.ast))
    roundTrips(Sso.SamlAcsForm, wireExamples(Sso.SamlAcsForm.ast))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Sso.SsoDomain, [
      "acme.example",
      "  Acme.EXAMPLE\n",
      "sub.acme-corp.example"
    ])
    refuses(Sso.SsoDomain, [
      "com",
      "-acme.example",
      "acme-.example",
      "acme.c0m",
      "acme..example",
      "acme.example.",
      `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}.example`,
      `${"a".repeat(64)}.example`,
      "",
      42
    ])
    // The decoded side holds the rule too (constructors, Schema.is): lower case, trimmed.
    expect(["acme.example", "Acme.example", " acme.example", "com"].map((text) => Schema.is(Sso.SsoDomain)(text))).toEqual([true, false, false, false])
    const pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"
    takes(Sso.PemCertificate, [
      pem,
      `\n  ${pem}\n`,
      "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----",
      // 16384 characters, and one more.
      `-----BEGIN CERTIFICATE-----\n${"A".repeat(16330)}\n-----END CERTIFICATE-----`
    ])
    refuses(Sso.PemCertificate, [
      "-----BEGIN CERTIFICATE-----\nMII#\n-----END CERTIFICATE-----",
      `-----BEGIN CERTIFICATE-----\n${"A".repeat(16331)}\n-----END CERTIFICATE-----`,
      "MIIBszCCAVmgAwIBAgIU"
    ])
    const oidc = { issuer: "https://login.acme.example", clientId: "orgplane", clientSecret: "secret" }
    takes(Sso.CreateSsoConnectionRequest, [
      { kind: "oidc", name: "Acme Okta", domains: ["Acme.Example"], oidc },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, scopes: ["openid", " groups "], tokenEndpointAuthMethod: "client_secret_post" } },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, endpoints: { authorization: "https://a.example/auth", token: "https://a.example/token", jwks: "https://a.example/jwks" } } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "metadataUrl", url: "https://idp.acme.example/metadata" } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", entityId: "urn:idp", ssoUrl: "https://idp.acme.example/sso", certificates: [pem] } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", allowIdpInitiated: true, relayStateAllowList: ["http://127.0.0.1:8080/done", "/app/sso-done"] } }
    ])
    refuses(Sso.CreateSsoConnectionRequest, [
      { kind: "ldap", name: "Acme", oidc },
      { kind: "oidc", name: "Acme Okta" },
      { kind: "oidc", name: "", oidc },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, issuer: "ftp://login.acme.example" } },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, scopes: [] } },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, scopes: Array.from({ length: 21 }, (_, i) => `s${i}`) } },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, clientSecret: undefined } },
      { kind: "oidc", name: "Acme Okta", domains: ["com"], oidc },
      { kind: "oidc", name: "Acme Okta", jit: { defaultRole: "owner" }, oidc },
      { kind: "oidc", name: "Acme Okta", mapping: { groupRules: Array.from({ length: 101 }, () => ({ group: "g", teamId: "tem_01m6dsg7e0f6xbks25eta8m5bm" })) }, oidc },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", certificates: [] } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", certificates: [pem, pem, pem, pem, pem, pem] } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", relayStateAllowList: ["https://evil.example/"] } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "ldap" } }
    ])
    takes(Sso.UpdateSsoConnectionRequest, [
      { name: "Acme Okta (production)" },
      { jit: {} },
      { jit: { enabled: false, defaultTeamIds: [] } },
      { oidc: { issuer: "https://login.acme.example", clientId: "orgplane" } },
      { mapping: { email: " mail " } }
    ])
    refuses(Sso.UpdateSsoConnectionRequest, [
      {},
      { name: "" },
      { jit: { defaultTeamIds: Array.from({ length: 21 }, () => "tem_01m6dsg7e0f6xbks25eta8m5bm") } },
      { oidc: { issuer: "https://login.acme.example" } },
      { domains: Array.from({ length: 51 }, (_, i) => `d${i}.example`) }
    ])
    takes(Sso.SsoSignInRequest, [
      { email: "ada@acme.example" },
      { email: "ada@acme.example", returnTo: "http://127.0.0.1:53682/callback" },
      { email: "ada@acme.example", returnTo: " /app/sso-done " }
    ])
    refuses(Sso.SsoSignInRequest, [
      { email: "ada@acme.example", returnTo: "https://evil.example/" },
      { email: "ada@acme.example", returnTo: "//evil.example/" },
      { email: "a" }
    ])
    takes(Sso.SsoCallbackQuery, [
      { state: "s", code: "c", iss: "https://login.acme.example" },
      { state: "s", error: "access_denied", error_description: "no" }
    ])
    refuses(Sso.SsoCallbackQuery, [
      { state: "" },
      { state: "s", code: "c".repeat(4097) },
      { state: "s", error: "e".repeat(256) }
    ])
    takes(Sso.SamlAcsForm, [
      { SAMLResponse: "PHNhbWxwOlJlc3BvbnNlIC8+" },
      { SAMLResponse: "PHNhbWxwOlJlc3BvbnNlIC8+", RelayState: "/app", other: "ignored" }
    ])
    refuses(Sso.SamlAcsForm, [
      { SAMLResponse: "" },
      { SAMLResponse: "x".repeat(Sso.SAML_RESPONSE_MAX_CHARS + 1) },
      { SAMLResponse: "x", RelayState: "r".repeat(2049) }
    ])
    takes(Sso.SetSsoPolicyRequest, [
      { requireSso: true },
      { requireSso: false, ownersPasswordFallback: false }
    ])
    refuses(Sso.SetSsoPolicyRequest, [
      { ownersPasswordFallback: true },
      { requireSso: "yes" }
    ])
    takes(Sso.SsoExchangeRequest, [{ code: "ssx_1" }])
    refuses(Sso.SsoExchangeRequest, [{ code: " " }, { code: "c".repeat(257) }])
    expect(decode(Sso.SsoDomain, "com")).toMatchObject({ ok: false, message: expect.stringContaining("must be a domain name such as example.com") })
    // A sign-in returns to a loopback listener or a path of this server only.
    expect(["http://localhost:8080/cb", "/app", "https://evil.example/", "//evil.example"].map(Sso.isSsoReturnTo)).toEqual([true, true, false, false])
  })
})
