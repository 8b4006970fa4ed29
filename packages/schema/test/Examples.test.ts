/** Examples.ts: the one story the document's examples tell, and a schema's example made from its own annotations. */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { Timestamp } from "../src/Common.js"
import * as Examples from "../src/Examples.js"

describe("Examples", () => {
  it("tells one story: fixed times, ids, people and tokens, the same on every run", () => {
    expect(Examples.exampleTime(5)).toEqual(new Date("2026-11-02T09:35:00.000Z"))
    expect(Examples.acme).toEqual({ id: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: "Acme" })
    expect(Examples.ada).toEqual({ userId: "usr_01m6dsg7e0fp28mz11s94rrak7", membershipId: "om_01m6dsg7e0e149zv53hej0fvry", name: "Ada Lovelace", email: "ada@acme.example" })
    expect([Examples.grace.name, Examples.alan.name, Examples.edsger.name]).toEqual(["Grace Hopper", "Alan Turing", "Edsger Dijkstra"])
    expect(new Set([Examples.ada, Examples.grace, Examples.alan, Examples.edsger].map(({ userId }) => userId)).size).toBe(4)
    expect(Examples.examplePassword).toBe("correct horse battery staple")
    expect(Examples.exampleToken("ops", 1)).toBe("ops_J9UZTLNp7fvSJ2eFW_YxcFlTB9gHAaMITXyYO-Zp1f9")
    expect(Examples.exampleToken("opk", 2)).toBe("opk_HhdolCAOBomf2V1QOLdJTw64eO5lA4YBsQrGLhDBPHd")
    expect(Examples.exampleToken("ops", 2)).not.toBe(Examples.exampleToken("ops", 1))
  })

  it("gives a schema's example typed by its Type, and refuses to make one up", () => {
    expect(Examples.exampleOf(Timestamp)).toEqual(Examples.exampleTime())
    class Pair extends Schema.Class<Pair>("Pair")({ at: Timestamp, name: Schema.String.annotate({ examples: ["Acme"] }) }) {}
    expect(Examples.exampleOf(Pair)).toEqual(new Pair({ at: Examples.exampleTime(), name: "Acme" }))
    expect(() => Examples.exampleOf(Schema.Struct({ name: Schema.String }))).toThrow("no example")
    expect(() => Examples.exampleOf(Schema.String.check(Schema.isMinLength(3)).annotate({ examples: ["a"] }))).toThrow("not one of its values")
  })
})
