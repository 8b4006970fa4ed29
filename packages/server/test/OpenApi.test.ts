/**
 * The served OpenAPI document as a reader (the reference UI, a client generator) sees it: every operation has a
 * unique summary, a description and its errors; 400 only where there is input to refuse; every tag is described.
 * Generic over the document: a new operation is checked without touching this file.
 */
import { Http, TestServer } from "@orgplane/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

interface Operation {
  readonly id: string
  /** The id with the method and path, for failure messages. */
  readonly name: string
  readonly summary: unknown
  readonly description: unknown
  readonly tags: ReadonlyArray<string>
  readonly statuses: ReadonlyArray<string>
  readonly takesInput: boolean
}

/**
 * Operations that answer no error at all: /health reads nothing, not even the database, and takes no input; the MCP
 * OAuth client metadata document is built from the configuration alone.
 */
const cannotFail = new Set(["system.health", "mcpAuthorization.clientMetadata"])

let server: TestServer.RunningServer
let document: Record<string, any>
let operations: ReadonlyArray<Operation>

beforeAll(async () => {
  server = await TestServer.start()
  const response = await Http.request(server.url, "GET", "/openapi.json")
  expect(response.status).toBe(200)
  document = response.body
  operations = Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, operation]): Operation => ({
      id: operation.operationId,
      name: `${operation.operationId} (${method.toUpperCase()} ${path})`,
      summary: operation.summary,
      description: operation.description,
      tags: operation.tags ?? [],
      statuses: Object.keys(operation.responses ?? {}),
      takesInput: (operation.parameters ?? []).length > 0 || operation.requestBody !== undefined
    }))
  )
})
afterAll(() => server.close())

const isText = (value: unknown) => typeof value === "string" && value.trim() !== ""

describe("the served OpenAPI document", () => {
  it("has operations to check", () => {
    expect(operations.length).toBeGreaterThan(20)
  })

  it("gives every operation a summary and a description", () => {
    const lacking = operations.flatMap((operation) => [
      ...(isText(operation.summary) ? [] : [`${operation.name}: no summary`]),
      ...(isText(operation.description) ? [] : [`${operation.name}: no description`])
    ])
    expect(lacking).toEqual([])
  })

  it("keeps summaries short titles, unique across the document", () => {
    const bySummary = new Map<unknown, Array<string>>()
    for (const { name, summary } of operations) {
      if (isText(summary)) bySummary.set(summary, [...(bySummary.get(summary) ?? []), name])
    }
    const shared = [...bySummary].filter(([, names]) => names.length > 1).map(([summary, names]) => `${summary}: ${names.join(", ")}`)
    expect(shared).toEqual([])
    const untitled = operations.filter(({ summary }) =>
      typeof summary === "string" && (summary.length > 60 || summary.endsWith(".") || summary[0] !== summary[0]?.toUpperCase())
    )
    expect(untitled.map((operation) => `${operation.name}: ${operation.summary}`)).toEqual([])
  })

  it("documents the errors of every operation", () => {
    const silent = operations.filter((operation) =>
      !cannotFail.has(operation.id) && !operation.statuses.some((status) => !status.startsWith("2"))
    )
    expect(silent.map((operation) => operation.name)).toEqual([])
  })

  it("documents 400 only for operations that take input", () => {
    const without = operations.filter((operation) => !operation.takesInput && operation.statuses.includes("400"))
    expect(without.map((operation) => operation.name)).toEqual([])
    // The rule has something to bite on: the probes take no input.
    expect(operations.filter((operation) => !operation.takesInput).length).toBeGreaterThan(1)
  })

  it("describes every tag an operation uses", () => {
    const described = new Set(
      (document.tags ?? []).filter((tag: any) => isText(tag.description)).map((tag: any) => tag.name as string)
    )
    const used = new Set(operations.flatMap((operation) => operation.tags))
    expect([...used].filter((tag) => !described.has(tag))).toEqual([])
  })
})
