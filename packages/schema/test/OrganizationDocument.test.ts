/**
 * The organization document's JSON Schema, as the package publishes it (`organization-document.schema.json`), is the
 * one the schema makes (`pnpm openapi:fixture` writes it), and holds what the document's schema holds.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import { OrganizationDocument, organizationDocumentJsonSchema } from "../src/index.js"

const published: unknown = JSON.parse(Fs.readFileSync(new URL("../organization-document.schema.json", import.meta.url), "utf8"))
const decode = Schema.decodeUnknownExit(OrganizationDocument, { onExcessProperty: "error" })

describe("the organization document", () => {
  it("is published as the JSON Schema its schema makes (run pnpm openapi:fixture after a change)", () => {
    expect(published).toEqual(organizationDocumentJsonSchema())
  })

  it("takes its example, and refuses an unknown member, an unknown version and a bad role", () => {
    const example = OrganizationDocument.ast.annotations?.["examples"]
    expect(Array.isArray(example) && example.length).toBe(1)
    const document = (example as ReadonlyArray<unknown>)[0]
    expect(decode(document)._tag).toBe("Success")
    const base = document as Record<string, unknown>
    expect(decode({ ...base, extra: true })._tag).toBe("Failure")
    expect(decode({ ...base, version: 2 })._tag).toBe("Failure")
    expect(decode({ ...base, members: [{ email: "ada@example.com", role: "king" }] })._tag).toBe("Failure")
    expect(decode({ ...base, invitations: [{ email: "not an email", role: "member", delivery: "shown" }] })._tag).toBe("Failure")
  })
})
