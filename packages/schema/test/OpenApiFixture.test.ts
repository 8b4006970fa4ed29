/**
 * The OpenAPI document is the one saved in `fixtures/openapi.json`: the contract the Effect 4 move (issue 46) is
 * compared with, whole. A change to the API made on purpose writes the fixture again (`pnpm openapi:fixture`) in the
 * same commit, so the fixture is always today's document and its diff shows what a change did to the contract.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"
import { Api } from "../src/index.js"

describe("the OpenAPI fixture", () => {
  it("is the document the API makes (else: pnpm openapi:fixture, and read its diff)", () => {
    const saved: unknown = JSON.parse(Fs.readFileSync(new URL("./fixtures/openapi.json", import.meta.url), "utf8"))
    const made: unknown = JSON.parse(JSON.stringify(OpenApi.fromApi(Api)))
    expect(made).toEqual(saved)
  })
})
