/** SsoApi.ts: how the SSO sign-in operations read their requests (the SAML ACS form as identity providers post it). */
import { describe, expect, it } from "@effect/vitest"
import { Context } from "effect"
import { HttpApi } from "effect/http-api"
import { apiOf } from "../src/ApiOf.js"
import { allErrors } from "../src/Common.js"
import { SsoSignInApi } from "../src/SsoApi.js"

describe("SsoApi", () => {
  it("reads the SAML ACS form reporting every issue, its other members ignored", () => {
    const options = new Map<string, unknown>()
    HttpApi.reflect(apiOf(SsoSignInApi), {
      onGroup() {},
      onEndpoint: ({ endpoint }) => options.set(endpoint.identifier, Context.getOrUndefined(endpoint.annotations, HttpApi.PayloadParseOptions))
    })
    expect(options.get("samlAcs")).toEqual(allErrors)
    expect(options.get("exchange")).toBeUndefined()
  })
})
