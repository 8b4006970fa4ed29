/**
 * Coverage of the audit log by construction: every operation
 * that is not a GET declares the action its success records (`audits`) or why it records none (`notAudited`), as the
 * OpenAPI document shows it, so a new operation that changes something fails here until someone decides what its
 * event is. Generic over the API.
 */
import { describe, expect, it } from "@effect/vitest"
import { ActionsExtension, AuditActions, AuditExtension, openApiDocument } from "../src/index.js"

type JsonObject = { readonly [key: string]: unknown }
const asObject = (value: unknown): JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {}

/** An operation's audit declaration: an action of the catalog, or none with a reason. */
const declarationOf = (operation: JsonObject): { readonly action: unknown; readonly reason: unknown } => {
  const declaration = asObject(operation[AuditExtension])
  return { action: declaration["action"], reason: declaration["reason"] }
}
const categoryOf = (action: unknown): unknown =>
  typeof action === "string" && Object.hasOwn(AuditActions, action) ? asObject(Reflect.get(AuditActions, action))["category"] : undefined

const document: JsonObject = asObject(JSON.parse(JSON.stringify(openApiDocument())))
const operations = Object.entries(asObject(document["paths"])).flatMap(([path, item]) =>
  Object.entries(asObject(item)).map(([method, value]) => {
    const operation = asObject(value)
    return { name: `${String(operation["operationId"])} (${method.toUpperCase()} ${path})`, method, operation }
  })
)

describe("the audit declarations", () => {
  it("cover every operation that is not a GET: an action of the catalog, or no action with a reason", () => {
    const undeclared = operations
      .filter(({ method, operation }) => method !== "get" && operation[AuditExtension] === undefined)
      .map(({ name }) => name)
    expect(undeclared).toEqual([])
    for (const { name, method, operation } of operations.filter(({ method }) => method !== "get")) {
      const declaration = declarationOf(operation)
      if (declaration.action === false) expect([name, typeof declaration.reason, String(declaration.reason).length > 10]).toEqual([name, "string", true])
      else expect([name, method, typeof declaration.action === "string" && Object.hasOwn(AuditActions, declaration.action)]).toEqual([name, method, true])
    }
  })

  it("are made on reads only for what the organization protects: a secret, the log's export (access actions)", () => {
    const reads = operations.filter(({ method, operation }) => method === "get" && operation[AuditExtension] !== undefined)
    expect(reads.map(({ name, operation }) => [name, categoryOf(declarationOf(operation).action)])).toEqual([
      ["llmProviders.connect (GET /v1/llm-providers/{llmProviderId}/connect)", "access"],
      ["audit.exportEvents (GET /v1/audit/export)", "access"]
    ])
  })

  it("keep the policy actions an operation declares beside them", () => {
    const changeRole = operations.find(({ operation }) => operation["operationId"] === "members.changeRole")?.operation ?? {}
    expect([changeRole[ActionsExtension], changeRole[AuditExtension]]).toEqual([["members.changeRole", "members.manageOwners"], { action: "member.role.update" }])
    const withActions = operations.filter(({ operation }) => operation[ActionsExtension] !== undefined).length
    expect(withActions).toBeGreaterThan(100)
  })
})
