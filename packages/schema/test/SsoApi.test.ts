import { describe, expect, it } from "@effect/vitest"
import { Context } from "effect"
import { HttpApi } from "effect/http-api"
import { apiOf } from "../src/ApiOf.js"
import { allErrors } from "../src/Common.js"
import { SsoApi, SsoSignInApi } from "../src/SsoApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { componentSchema, type Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const SsoApi3 = effect3("SsoApi").SsoApi
const SsoSignInApi3 = effect3("SsoApi").SsoSignInApi

describe("SsoApi on Effect 4", () => {
  it("declares the operations of the Effect 3 groups", () => {
    // The real difference differential.ts names for Timestamp and BooleanFromString members: a member's own
    // description of a transformed named schema (the `domain` query parameter, an SsoDomain) does not reach Effect 4's
    // document; Effect 3 wrote it beside the reference. For the OpenAPI normalisation step; added here to compare the rest.
    const domainQuery = (operation: Json): Json =>
      JSON.parse(
        JSON.stringify(operation).replace(
          `"schema":{"$ref":"ref:SsoDomain"}`,
          `"schema":{"$ref":"ref:SsoDomain","description":"The domain; default: the organization's only unverified domain."}`
        )
      )
    // A real difference, for the OpenAPI normalisation step: the path's SsoDomain (with an example of its own) refers to
    // the named schema, where Effect 3 inlined a copy of it.
    const domainPath = (operation: Json): Json =>
      JSON.parse(JSON.stringify(operation).replace(`"schema":{"$ref":"ref:SsoDomain"}`, `"schema":${JSON.stringify(componentSchema("SsoDomain"))}`))
    expect(sameOperations(SsoApi, SsoApi3, {
      "POST /v1/sso/request-domain-verification": domainQuery,
      "POST /v1/sso/verify-domain": domainQuery,
      "DELETE /v1/sso/domains/{domain}": domainPath
    })).toHaveLength(16)
    expect(sameOperations(SsoSignInApi, SsoSignInApi3)).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 groups", () => {
    expect(sameExamples(SsoApi, SsoApi3)).toBeGreaterThan(0)
    expect(sameExamples(SsoSignInApi, SsoSignInApi3)).toBeGreaterThan(0)
  })

  it("reads the ACS form with every issue and other members ignored, as Effect 3's SamlAcsForm said", () => {
    const options = new Map<string, unknown>()
    HttpApi.reflect(apiOf(SsoSignInApi), {
      onGroup() {},
      onEndpoint: ({ endpoint }) => options.set(endpoint.identifier, Context.getOrUndefined(endpoint.annotations, HttpApi.PayloadParseOptions))
    })
    expect(options.get("samlAcs")).toEqual(allErrors)
    expect(options.get("exchange")).toBeUndefined()
  })
})
