import { describe, expect, it } from "@effect/vitest"
import * as Examples from "../src/Examples.js"
import * as Namespaces from "../src/Namespaces.js"
import * as OpenApiExamples from "../src/OpenApiExamples.js"
import * as OpenApiLinks from "../src/OpenApiLinks.js"
import * as ScimAttributes from "../src/ScimAttributes.js"
import { effect3 } from "./effect3.js"

const Namespaces3 = effect3("Namespaces")

describe("Namespaces on Effect 4", () => {
  it("exports the same modules as namespaces, each the port itself", () => {
    expect(Object.keys(Namespaces).sort()).toEqual(Object.keys(Namespaces3).sort())
    expect(Namespaces.Examples).toBe(Examples)
    expect(Namespaces.OpenApiExamples).toBe(OpenApiExamples)
    expect(Namespaces.OpenApiLinks).toBe(OpenApiLinks)
    expect(Namespaces.ScimAttributes).toBe(ScimAttributes)
  })

  it("gives each namespace the names of the Effect 3 one", () => {
    for (const name of Object.keys(Namespaces3) as Array<keyof typeof Namespaces>) {
      expect(Object.keys(Namespaces[name]).sort(), name).toEqual(Object.keys(Namespaces3[name]).sort())
    }
  })
})
