import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Sso from "../src/Sso.js"
import {
  decode3,
  decode4,
  documentExamples,
  examplesOfComponent,
  type Json,
  roundTrips,
  sameOn,
  sameSchemas
} from "./differential.js"
import { type Effect3, effect3 } from "./effect3.js"

const Schema3 = effect3("effect/Schema")
const OpenApiExamples3 = effect3("OpenApiExamples")
const Sso3 = effect3("Sso")

type JsonObject = { readonly [key: string]: Json }
const Schema3Is = (schema: Effect3, value: unknown) => Schema3.is(schema)(value)

const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * `schema` with each open record of any values (`{ type: "object" }` alone, Effect 4's) as Effect 3 wrote it, with
 * `additionalProperties: {}`: the same objects.
 */
const openRecordsAsDocumented = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(openRecordsAsDocumented)
  if (!isObject(schema)) return schema
  if (schema["type"] === "object" && schema["properties"] === undefined && schema["additionalProperties"] === undefined) {
    return { ...schema, additionalProperties: {} }
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, openRecordsAsDocumented(value)]))
}

describe("Sso on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    // A real difference, for the OpenAPI normalisation step: an open record of any values (a test's `claims`) is
    // `{ type: "object" }` in Effect 4, `{ type: "object", additionalProperties: {} }` in the document; the same objects.
    const claims = (schema: Json) => {
      expect(schema).toMatchObject({ properties: { claims: { anyOf: [{ type: "object" }, { type: "null" }] } } })
      return openRecordsAsDocumented(schema)
    }
    const names = sameSchemas(Sso, Sso3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: Effect 3 described a bounded array by its check ("an
      // array of at most 20 item(s)", `relayStateAllowList`); Effect 4 generates no description.
      SamlSettingsInput: (schema) => {
        const properties = isObject(schema) ? schema["properties"] : undefined
        const list = isObject(properties) ? properties["relayStateAllowList"] : undefined
        expect(list).toMatchObject({ type: "array", maxItems: 20 })
        expect(list).not.toHaveProperty("description")
        if (!isObject(schema) || !isObject(properties) || !isObject(list)) return schema
        return { ...schema, properties: { ...properties, relayStateAllowList: { ...list, description: "an array of at most 20 item(s)" } } }
      },
      SsoTestReport: claims
    })
    expect(names.length).toBeGreaterThan(40)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Sso.SsoTestReport, Sso3.SsoTestReport, examplesOfComponent("SsoTestReport"))
    roundTrips(Sso.SsoConnection, Sso3.SsoConnection, examplesOfComponent("SsoConnection"))
    roundTrips(Sso.DomainVerificationRecord, Sso3.DomainVerificationRecord, examplesOfComponent("DomainVerificationRecord"))
    roundTrips(Sso.SsoOrganizationDomain, Sso3.SsoOrganizationDomain, examplesOfComponent("SsoOrganizationDomain"))
    roundTrips(Sso.SsoPolicy, Sso3.SsoPolicy, examplesOfComponent("SsoPolicy"))
    roundTrips(Sso.SsoTestResponse, Sso3.SsoTestResponse, examplesOfComponent("SsoTestResponse"))
    roundTrips(Sso.SsoConnectionResponse, Sso3.SsoConnectionResponse, examplesOfComponent("SsoConnectionResponse"))
    roundTrips(Sso.SsoConnectionList, Sso3.SsoConnectionList, examplesOfComponent("SsoConnectionList"))
    roundTrips(Sso.UpdateSsoConnectionRequest, Sso3.UpdateSsoConnectionRequest, examplesOfComponent("UpdateSsoConnectionRequest"))
    roundTrips(Sso.DomainVerificationResponse, Sso3.DomainVerificationResponse, examplesOfComponent("DomainVerificationResponse"))
    roundTrips(Sso.SsoDomainList, Sso3.SsoDomainList, examplesOfComponent("SsoDomainList"))
    roundTrips(Sso.VerifyDomainResponse, Sso3.VerifyDomainResponse, examplesOfComponent("VerifyDomainResponse"))
    roundTrips(Sso.SsoPolicyResponse, Sso3.SsoPolicyResponse, examplesOfComponent("SsoPolicyResponse"))
    roundTrips(Sso.SetSsoPolicyRequest, Sso3.SetSsoPolicyRequest, examplesOfComponent("SetSsoPolicyRequest"))
    roundTrips(Sso.SsoDiscoverRequest, Sso3.SsoDiscoverRequest, examplesOfComponent("SsoDiscoverRequest"))
    roundTrips(Sso.SsoDiscovery, Sso3.SsoDiscovery, examplesOfComponent("SsoDiscovery"))
    roundTrips(Sso.SsoSignInRequest, Sso3.SsoSignInRequest, examplesOfComponent("SsoSignInRequest"))
    roundTrips(Sso.SsoCallbackResult, Sso3.SsoCallbackResult, examplesOfComponent("SsoCallbackResult"))
    roundTrips(Sso.SsoExchangeRequest, Sso3.SsoExchangeRequest, examplesOfComponent("SsoExchangeRequest"))
    // The union of the two kinds is no component: its examples are the request's.
    const created = documentExamples().filter(({ at }) => at === "POST /v1/sso/connections request application/json")
    expect(created.length).toBe(2)
    roundTrips(Sso.CreateSsoConnectionRequest, Sso3.CreateSsoConnectionRequest, created.map(({ value }) => value))
    // Those the document shows in no body of its own: the schemas' own.
    roundTrips(Sso.StartedSsoTest, Sso3.StartedSsoTest, wireExamples(Sso.StartedSsoTest.ast))
    roundTrips(Sso.StartedSsoSignIn, Sso3.StartedSsoSignIn, wireExamples(Sso.StartedSsoSignIn.ast))
    roundTrips(Sso.SsoCallbackQuery, Sso3.SsoCallbackQuery, wireExamples(Sso.SsoCallbackQuery.ast))
    roundTrips(Sso.SamlAcsForm, Sso3.SamlAcsForm, wireExamples(Sso.SamlAcsForm.ast))
  })

  it("takes and refuses what the Effect 3 schemas take and refuse", () => {
    sameOn(Sso.SsoDomain, Sso3.SsoDomain, [
      "acme.example",
      "  Acme.EXAMPLE\n",
      "sub.acme-corp.example",
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
    // The decoded side holds the rule too, as Effect 3's refinement did (constructors, Schema.is): lower case, trimmed.
    for (const text of ["acme.example", "Acme.example", " acme.example", "com"]) {
      expect(Schema.is(Sso.SsoDomain)(text), text).toBe(Schema3Is(Sso3.SsoDomain, text))
    }
    const pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"
    sameOn(Sso.PemCertificate, Sso3.PemCertificate, [
      pem,
      `\n  ${pem}\n`,
      "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----",
      "-----BEGIN CERTIFICATE-----\nMII#\n-----END CERTIFICATE-----",
      // 16384 characters, and one more.
      `-----BEGIN CERTIFICATE-----\n${"A".repeat(16330)}\n-----END CERTIFICATE-----`,
      `-----BEGIN CERTIFICATE-----\n${"A".repeat(16331)}\n-----END CERTIFICATE-----`,
      "MIIBszCCAVmgAwIBAgIU"
    ])
    const oidc = { issuer: "https://login.acme.example", clientId: "orgplane", clientSecret: "secret" }
    sameOn(Sso.CreateSsoConnectionRequest, Sso3.CreateSsoConnectionRequest, [
      { kind: "oidc", name: "Acme Okta", domains: ["Acme.Example"], oidc },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, scopes: ["openid", " groups "], tokenEndpointAuthMethod: "client_secret_post" } },
      { kind: "oidc", name: "Acme Okta", oidc: { ...oidc, endpoints: { authorization: "https://a.example/auth", token: "https://a.example/token", jwks: "https://a.example/jwks" } } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "metadataUrl", url: "https://idp.acme.example/metadata" } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", entityId: "urn:idp", ssoUrl: "https://idp.acme.example/sso", certificates: [pem] } },
      { kind: "saml", name: "Acme ADFS", saml: { source: "manual", allowIdpInitiated: true, relayStateAllowList: ["http://127.0.0.1:8080/done", "/app/sso-done"] } },
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
    sameOn(Sso.UpdateSsoConnectionRequest, Sso3.UpdateSsoConnectionRequest, [
      { name: "Acme Okta (production)" },
      { jit: {} },
      { jit: { enabled: false, defaultTeamIds: [] } },
      { oidc: { issuer: "https://login.acme.example", clientId: "orgplane" } },
      { mapping: { email: " mail " } },
      {},
      { name: "" },
      { jit: { defaultTeamIds: Array.from({ length: 21 }, () => "tem_01m6dsg7e0f6xbks25eta8m5bm") } },
      { oidc: { issuer: "https://login.acme.example" } },
      { domains: Array.from({ length: 51 }, (_, i) => `d${i}.example`) }
    ])
    sameOn(Sso.SsoSignInRequest, Sso3.SsoSignInRequest, [
      { email: "ada@acme.example" },
      { email: "ada@acme.example", returnTo: "http://127.0.0.1:53682/callback" },
      { email: "ada@acme.example", returnTo: " /app/sso-done " },
      { email: "ada@acme.example", returnTo: "https://evil.example/" },
      { email: "ada@acme.example", returnTo: "//evil.example/" },
      { email: "a" }
    ])
    sameOn(Sso.SsoCallbackQuery, Sso3.SsoCallbackQuery, [
      { state: "s", code: "c", iss: "https://login.acme.example" },
      { state: "s", error: "access_denied", error_description: "no" },
      { state: "" },
      { state: "s", code: "c".repeat(4097) },
      { state: "s", error: "e".repeat(256) }
    ])
    sameOn(Sso.SamlAcsForm, Sso3.SamlAcsForm, [
      { SAMLResponse: "PHNhbWxwOlJlc3BvbnNlIC8+" },
      { SAMLResponse: "PHNhbWxwOlJlc3BvbnNlIC8+", RelayState: "/app", other: "ignored" },
      { SAMLResponse: "" },
      { SAMLResponse: "x".repeat(Sso.SAML_RESPONSE_MAX_CHARS + 1) },
      { SAMLResponse: "x", RelayState: "r".repeat(2049) }
    ])
    sameOn(Sso.SetSsoPolicyRequest, Sso3.SetSsoPolicyRequest, [
      { requireSso: true },
      { requireSso: false, ownersPasswordFallback: false },
      { ownersPasswordFallback: true },
      { requireSso: "yes" }
    ])
    sameOn(Sso.SsoExchangeRequest, Sso3.SsoExchangeRequest, [{ code: "ssx_1" }, { code: " " }, { code: "c".repeat(257) }])
    expect(decode4(Sso.SsoDomain, "com")).toMatchObject({ ok: false, message: expect.stringContaining("must be a domain name such as example.com") })
    expect(decode3(Sso3.SsoDomain, "com").ok).toBe(false)
    for (const url of ["http://localhost:8080/cb", "/app", "https://evil.example/", "//evil.example"]) {
      expect(Sso.isSsoReturnTo(url), url).toBe(Sso3.isSsoReturnTo(url))
    }
  })
})
