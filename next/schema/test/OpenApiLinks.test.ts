import { describe, expect, it } from "@effect/vitest"
import * as OpenApiLinks from "../src/OpenApiLinks.js"
import { fixture } from "./differential.js"
import { type Effect3, effect3 } from "./effect3.js"

const OpenApiLinks3 = effect3("OpenApiLinks")

/** The document as it is before `addLinks`: every response's `links` removed. */
const withoutLinks = (): Record<string, unknown> =>
  JSON.parse(JSON.stringify(fixture), (key, value: unknown) => key === "links" ? undefined : value)

describe("OpenApiLinks on Effect 4", () => {
  it("links the Effect 3 document's operations as Effect 3 did", () => {
    const document = withoutLinks()
    expect(JSON.stringify(document)).not.toContain("\"links\"")
    expect(JSON.stringify(fixture)).toContain("\"links\"")
    expect(OpenApiLinks.addLinks(document)).toEqual(fixture)
    expect(OpenApiLinks.addLinks(withoutLinks())).toEqual(OpenApiLinks3.addLinks(withoutLinks()))
  })

  it("reads the same operations and created ids", () => {
    const operations = OpenApiLinks.operationsOf(fixture)
    const operations3 = OpenApiLinks3.operationsOf(fixture)
    expect(operations.length).toBeGreaterThan(200)
    expect(operations.map(({ id, path, pathIds }) => ({ id, path, pathIds }))).toEqual(
      operations3.map(({ id, path, pathIds }: Effect3) => ({ id, path, pathIds }))
    )
    const team = { $ref: "#/components/schemas/TeamResponse" }
    expect(OpenApiLinks.createdIds(fixture, team)).toEqual(OpenApiLinks3.createdIds(fixture, team))
    expect(OpenApiLinks.createdIds(fixture, team)).toEqual([{ pointer: "/team/id", prefix: "tem" }])
  })
})
