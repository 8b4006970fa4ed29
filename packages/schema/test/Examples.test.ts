import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { Timestamp } from "../src/Common.js"
import * as Examples from "../src/Examples.js"
import { effect3 } from "./effect3.js"

const Examples3 = effect3("Examples")

describe("Examples on Effect 4", () => {
  it("tells the story of the Effect 3 examples", () => {
    expect(Examples.exampleTime(5)).toEqual(Examples3.exampleTime(5))
    expect(Examples.acme).toEqual(Examples3.acme)
    for (const name of ["ada", "grace", "alan", "edsger"] as const) expect(Examples[name]).toEqual(Examples3[name])
    expect(Examples.examplePassword).toBe(Examples3.examplePassword)
    for (const prefix of ["ops", "opk"]) {
      for (const seed of [1, 2]) expect(Examples.exampleToken(prefix, seed)).toBe(Examples3.exampleToken(prefix, seed))
    }
  })

  it("gives a schema's example typed by its Type, and refuses to make one up", () => {
    expect(Examples.exampleOf(Timestamp)).toEqual(Examples.exampleTime())
    class Pair extends Schema.Class<Pair>("Pair")({ at: Timestamp, name: Schema.String.annotate({ examples: ["Acme"] }) }) {}
    expect(Examples.exampleOf(Pair)).toEqual(new Pair({ at: Examples.exampleTime(), name: "Acme" }))
    expect(() => Examples.exampleOf(Schema.Struct({ name: Schema.String }))).toThrow("no example")
    expect(() => Examples.exampleOf(Schema.String.check(Schema.isMinLength(3)).annotate({ examples: ["a"] }))).toThrow("not one of its values")
  })
})
