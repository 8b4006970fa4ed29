/**
 * What a client written against 0.1.0 calls is still served: every operation 0.1.0 published exists, at the same
 * method and path, under the same `operationId` (generated clients name their methods after it), and every audit
 * action 0.1.0 recorded is still in the catalog (log readers filter on them). Adding operations and actions is free;
 * removing or renaming one breaks 0.1.0's clients.
 *
 * `fixtures/0.1.0/contract.json` is an extract of the document 0.1.0 served, made by `scripts/release-contract.ts`
 * (its header says how); it is never re-recorded from the current API.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import { AuditActions, openApiDocument } from "../src/index.js"
import { isJsonObject, type Json, objectAt } from "./support/SavedDocument.js"

interface Contract {
  readonly operations: Readonly<Record<string, string>>
  readonly auditActions: ReadonlyArray<string>
}

const isContract = (value: Json): value is Json & Contract =>
  isJsonObject(value) && isJsonObject(value["operations"]) && Array.isArray(value["auditActions"])

const parsed: Json = JSON.parse(Fs.readFileSync(new URL("./fixtures/0.1.0/contract.json", import.meta.url), "utf8"))
if (!isContract(parsed)) throw new Error("fixtures/0.1.0/contract.json is no contract extract")
const released: Contract = parsed

const current: Json = JSON.parse(JSON.stringify(openApiDocument()))

/** The generated document's operations, `METHOD /path` to `operationId`. */
const operations = (): Map<string, Json | undefined> => {
  const out = new Map<string, Json | undefined>()
  for (const [path, item] of Object.entries(objectAt(current, "paths"))) {
    for (const [method, operation] of Object.entries(isJsonObject(item) ? item : {})) {
      if (isJsonObject(operation)) out.set(`${method.toUpperCase()} ${path}`, operation["operationId"])
    }
  }
  return out
}

describe("what 0.1.0's clients rely on", () => {
  it("serves every operation 0.1.0 published, under the same operationId", () => {
    expect(Object.keys(released.operations).length).toBeGreaterThan(250)
    const now = operations()
    const missing = Object.entries(released.operations).filter(([at, id]) => now.get(at) !== id).map(([at, id]) => `${at} (${id}): ${String(now.get(at) ?? "gone")}`)
    expect(missing, "operations 0.1.0 published that are gone or renamed").toEqual([])
  })

  it("keeps every audit action 0.1.0 recorded, in the catalog and the document", () => {
    expect(released.auditActions.length).toBeGreaterThan(100)
    expect(released.auditActions.filter((action) => !(action in AuditActions))).toEqual([])
    const documented = objectAt(objectAt(objectAt(current, "components"), "schemas"), "AuditAction")["enum"]
    expect(released.auditActions.filter((action) => !(Array.isArray(documented) && documented.includes(action)))).toEqual([])
  })
})
