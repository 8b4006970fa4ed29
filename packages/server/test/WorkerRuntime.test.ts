/** The worker runtime client's pure parts: how a runtime's answer is read and where the request goes. */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { RuntimeUrl } from "@orgplane/schema"
import { endpoint, readAnswer } from "../src/workers/Runtime.js"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("a runtime's answer", () => {
  it("is its JSON as sent, any JSON value included", () => {
    expect(readAnswer(bytes("{\"ok\":true}"))).toEqual({ ok: true })
    expect(readAnswer(bytes("[1,2]"))).toEqual([1, 2])
    expect(readAnswer(bytes("false"))).toBe(false)
    expect(readAnswer(bytes("null"))).toBeNull()
  })

  it("is {message} for text that is not JSON, cut at 2000 characters", () => {
    expect(readAnswer(bytes("Bad Gateway"))).toEqual({ message: "Bad Gateway" })
    const long = readAnswer(bytes("x".repeat(5000))) as { message: string }
    expect(long.message).toBe(`${"x".repeat(2000)}…`)
  })

  it("is null when empty or only white space", () => {
    expect(readAnswer(new Uint8Array(0))).toBeNull()
    expect(readAnswer(bytes(" \n"))).toBeNull()
  })
})

describe("a runtime's URL", () => {
  it("gets the operation's path after its own, without doubled slashes", () => {
    expect(endpoint("https://w.example.com", "/runtime/upgrade")).toBe("https://w.example.com/runtime/upgrade")
    expect(endpoint("https://w.example.com/base//", "/runtime/upgrade")).toBe("https://w.example.com/base/runtime/upgrade")
  })

  it("is http(s) without credentials, query or fragment", () => {
    const valid = Schema.is(RuntimeUrl)
    expect(valid("http://127.0.0.1:4000")).toBe(true)
    expect(valid("https://w.example.com/base/")).toBe(true)
    for (const url of ["file:///etc/passwd", "https://a:b@w.example.com", "https://w.example.com/?", "https://w.example.com/#", "//w.example.com", ""]) {
      expect(valid(url)).toBe(false)
    }
  })
})
