import { describe, expect, it } from "@effect/vitest"
import { LlmProvidersApi } from "../src/LlmProvidersApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { atBody, describeMember, withoutDescription } from "./mcpDifferential.js"
import { effect3 } from "./effect3.js"

const LlmProvidersApi3 = effect3("LlmProvidersApi").LlmProvidersApi

describe("LlmProvidersApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    expect(sameOperations(LlmProvidersApi, LlmProvidersApi3, {
      // The real difference LlmProviders.test.ts names, which the document writes as Effect 3 did: Effect 3 described
      // the model list by its last check it could state, its own description lost (as in Effect 4); Effect 4
      // generates none.
      "POST /v1/llm-providers": (operation) =>
        atBody(operation, (body) => describeMember(body, ["models"], "an array of at most 500 item(s)")),
      // A real difference, for the OpenAPI normalisation step: Effect 3 wrote a union request body as its members
      // (there is no LlmCredentialInput component), without the union's own description; Effect 4 refers to the
      // union, which keeps it. Dropped here to compare the rest.
      "PUT /v1/llm-providers/{llmProviderId}/credential": (operation) =>
        atBody(operation, (body) => withoutDescription(body, "The credential: an API key (`type: api_key`) or OAuth tokens (`type: oauth`, with an optional refresh token and expiry). Printable ASCII, 1 to 8192 characters. Stored encrypted; never read back."))
    })).toHaveLength(12)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(LlmProvidersApi, LlmProvidersApi3)).toBeGreaterThan(0)
  })
})
