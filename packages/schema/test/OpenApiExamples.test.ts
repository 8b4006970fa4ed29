/**
 * OpenApiExamples.ts: the examples the document shows, composed from the members' own examples and encoded to their
 * wire form; nothing made up where a required part has none.
 */
import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { Timestamp } from "../src/Common.js"
import { composeExample, encodeExample, ownExamples, wireExamples } from "../src/OpenApiExamples.js"

// Examples on some members, none on others.
const Item = Schema.Struct({
  id: Schema.String.annotate({ examples: ["itm_1"] }),
  at: Timestamp,
  kinds: Schema.Array(Schema.Literals(["plugin", "skill"])),
  note: Schema.optionalKey(Schema.String),
  parent: Schema.NullOr(Schema.String.annotate({ examples: ["itm_0"] })),
  pair: Schema.Tuple([Schema.Literal(1), Schema.Boolean.annotate({ examples: [true] })])
})
class Holder extends Schema.Class<Holder>("Holder")({ item: Item, count: Schema.Number.annotate({ examples: [2] }) }) {}

const Kind = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("a") }).annotate({ examples: [{ kind: "a" }] }),
  Schema.Struct({ kind: Schema.Literal("b"), n: Schema.Number }).annotate({ examples: [{ kind: "b", n: 1 }] })
])
describe("OpenApiExamples", () => {
  it("composes an example from the members' own, and encodes it to its wire form", () => {
    const item = { id: "itm_1", at: "2026-11-02T09:30:00.000Z", kinds: ["plugin"], parent: "itm_0", pair: [1, true] }
    expect(wireExamples(Item.ast)).toEqual([item])
    expect(wireExamples(Holder.ast)).toEqual([{ item, count: 2 }])
    expect(wireExamples(Kind.ast)).toEqual([{ kind: "a" }, { kind: "b", n: 1 }])
  })

  it("makes a class's example an instance, which encodes (a plain object is refused)", () => {
    const example = Option.getOrThrow(composeExample(Holder.ast))
    expect(example).toBeInstanceOf(Holder)
    expect(Schema.is(Holder)(example)).toBe(true)
    expect(encodeExample(Holder.ast, { item: {}, count: 2 })._tag).toBe("Failure")
  })

  it("composes nothing where a required part has no example", () => {
    const Bare = Schema.Struct({ id: Schema.String, n: Schema.optionalKey(Schema.Number) })
    expect(Option.isNone(composeExample(Bare.ast))).toBe(true)
    expect(wireExamples(Bare.ast)).toEqual([])
  })

  it("lists every member's own examples of a union", () => {
    expect(Option.getOrThrow(ownExamples(Kind.ast))).toEqual([{ kind: "a" }, { kind: "b", n: 1 }])
    expect(Option.isNone(ownExamples(Item.ast))).toBe(true)
  })
})
