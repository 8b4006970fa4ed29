/**
 * The README's table of namespaces and methods is the API's: a group or endpoint added to the API must be listed.
 * The README is this package's (packages/client's, with the Effect client's request parts, `params`, `query` and
 * `responseMode`, its errors and its bundle's size; and the Promise client's `path` and `urlParams`).
 */
import { Api } from "@orgplane/schema"
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"
import { createClient } from "../src/index.js"

/** `| \`users\` | \`signUp\`, \`signIn\` |` rows → { users: ["signIn", "signUp"] }, methods sorted. */
const readmeTable = () => {
  const text = Fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
  const rows = [...text.matchAll(/^\| `(\w+)` \| (`\w+`(?:, `\w+`)*) \|$/gm)]
  return Object.fromEntries(rows.map(([, namespace, methods]) => [namespace, [...(methods ?? "").matchAll(/`(\w+)`/g)].map(([, m]) => m).sort()]))
}

/** What the client has: one namespace per group (top-level groups' methods sit on the client itself), one method per endpoint. */
const apiTable = () =>
  Object.fromEntries(
    Object.values(Api.groups).map((group) => [group.topLevel ? "(top level)" : group.identifier, Object.keys(group.endpoints).sort()])
  )

describe("client README", () => {
  it("lists every namespace and method of the API, and nothing else", () => {
    expect(readmeTable()).toEqual(apiTable())
  })

  it("the Promise client has those namespaces and methods", async () => {
    const client = createClient({ baseUrl: "http://127.0.0.1:1" })
    try {
      const namespaces: Record<string, unknown> = { ...client }
      const listed = Object.fromEntries(
        Object.keys(readmeTable()).map((namespace) => [namespace, Object.keys(Object(namespaces[namespace])).sort()])
      )
      expect(listed).toEqual(readmeTable())
    } finally {
      await client.close()
    }
  })
})
