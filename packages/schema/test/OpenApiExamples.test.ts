import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { Timestamp } from "../src/Common.js"
import { composeExample, encodeExample, ownExamples, wireExamples } from "../src/OpenApiExamples.js"
import { effect3 } from "./effect3.js"

const Option3 = effect3("effect/Option")
const Schema3 = effect3("effect/Schema")
const Common3 = effect3("Common")
const OpenApiExamples3 = effect3("OpenApiExamples")

// The same schemas in both versions: examples on some members, none on others.
const Item = Schema.Struct({
  id: Schema.String.annotate({ examples: ["itm_1"] }),
  at: Timestamp,
  kinds: Schema.Array(Schema.Literals(["plugin", "skill"])),
  note: Schema.optionalKey(Schema.String),
  parent: Schema.NullOr(Schema.String.annotate({ examples: ["itm_0"] })),
  pair: Schema.Tuple([Schema.Literal(1), Schema.Boolean.annotate({ examples: [true] })])
})
const Item3 = Schema3.Struct({
  id: Schema3.String.annotations({ examples: ["itm_1"] }),
  at: Common3.Timestamp,
  kinds: Schema3.Array(Schema3.Literal("plugin", "skill")),
  note: Schema3.optionalWith(Schema3.String, { exact: true }),
  parent: Schema3.NullOr(Schema3.String.annotations({ examples: ["itm_0"] })),
  pair: Schema3.Tuple(Schema3.Literal(1), Schema3.Boolean.annotations({ examples: [true] }))
})
class Holder extends Schema.Class<Holder>("Holder")({ item: Item, count: Schema.Number.annotate({ examples: [2] }) }) {}
// The class itself (its Effect 3 form is recorded: effect3.ts), as a schema.
const Holder3 = Schema3.Class("Holder")({ item: Item3, count: Schema3.Number.annotations({ examples: [2] }) })

const Kind = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("a") }).annotate({ examples: [{ kind: "a" }] }),
  Schema.Struct({ kind: Schema.Literal("b"), n: Schema.Number }).annotate({ examples: [{ kind: "b", n: 1 }] })
])
const Kind3 = Schema3.Union(
  Schema3.Struct({ kind: Schema3.Literal("a") }).annotations({ examples: [{ kind: "a" }] }),
  Schema3.Struct({ kind: Schema3.Literal("b"), n: Schema3.Number }).annotations({ examples: [{ kind: "b", n: 1 }] })
)

describe("OpenApiExamples on Effect 4", () => {
  it("composes the example Effect 3 composes, and encodes it to the same wire form", () => {
    for (const [port, original] of [[Item, Item3], [Holder, Holder3], [Kind, Kind3]] as const) {
      const wire = wireExamples(port.ast)
      expect(wire.length).toBeGreaterThan(0)
      expect(wire).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }
    expect(wireExamples(Item.ast)).toEqual([
      { id: "itm_1", at: "2026-11-02T09:30:00.000Z", kinds: ["plugin"], parent: "itm_0", pair: [1, true] }
    ])
  })

  it("makes a class's example an instance, which Effect 4 encodes (a plain object it refuses)", () => {
    const example = Option.getOrThrow(composeExample(Holder.ast))
    expect(example).toBeInstanceOf(Holder)
    expect(Schema.is(Holder)(example)).toBe(true)
    expect(encodeExample(Holder.ast, { item: {}, count: 2 })._tag).toBe("Failure")
  })

  it("composes nothing where a required part has no example, as Effect 3", () => {
    const Bare = Schema.Struct({ id: Schema.String, n: Schema.optionalKey(Schema.Number) })
    const Bare3 = Schema3.Struct({ id: Schema3.String, n: Schema3.optionalWith(Schema3.Number, { exact: true }) })
    expect(Option.isNone(composeExample(Bare.ast))).toBe(true)
    expect(Option3.isNone(OpenApiExamples3.composeExample(Bare3.ast))).toBe(true)
    expect(wireExamples(Bare.ast)).toEqual([])
  })

  it("lists every member's own examples of a union", () => {
    expect(Option.getOrThrow(ownExamples(Kind.ast))).toEqual(Option3.getOrThrow(OpenApiExamples3.ownExamples(Kind3.ast)))
    expect(Option.isNone(ownExamples(Item.ast))).toBe(true)
  })
})
