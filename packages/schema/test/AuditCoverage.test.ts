/**
 * Coverage of the audit log by construction: every operation that is not a GET declares the action its success
 * records (`audits`) or why it records none (`notAudited`), as the OpenAPI document shows it, so a new operation
 * that changes something fails here until someone decides what its event is. Generic over the API.
 */
import { ActionsExtension, AuditActions, AuditExtension, openApiDocument } from "@orgplane/schema"
import { describe, expect, it } from "vitest"

const document: Record<string, any> = openApiDocument()
const operations = Object.entries<Record<string, any>>(document.paths).flatMap(([path, item]) =>
  Object.entries<any>(item).map(([method, operation]) => ({ name: `${operation.operationId} (${method.toUpperCase()} ${path})`, method, operation }))
)

describe("the audit declarations", () => {
  it("cover every operation that is not a GET: an action of the catalog, or no action with a reason", () => {
    const undeclared = operations
      .filter(({ method, operation }) => method !== "get" && operation[AuditExtension] === undefined)
      .map(({ name }) => name)
    expect(undeclared).toEqual([])
    for (const { name, method, operation } of operations.filter(({ method }) => method !== "get")) {
      const declaration = operation[AuditExtension]
      if (declaration.action === false) expect([name, typeof declaration.reason, declaration.reason.length > 10]).toEqual([name, "string", true])
      else expect([name, method, Object.hasOwn(AuditActions, declaration.action)]).toEqual([name, method, true])
    }
  })

  it("are made on reads only for what the organization protects: a secret, the log's export (access actions)", () => {
    const reads = operations.filter(({ method, operation }) => method === "get" && operation[AuditExtension] !== undefined)
    expect(reads.map(({ name, operation }) => [name, AuditActions[operation[AuditExtension].action as keyof typeof AuditActions]?.category])).toEqual([
      ["llmProviders.connect (GET /v1/llm-providers/{llmProviderId}/connect)", "access"],
      ["audit.exportEvents (GET /v1/audit/export)", "access"]
    ])
  })

  it("keep the policy actions an operation declares beside them", () => {
    const changeRole = operations.find(({ operation }) => operation.operationId === "members.changeRole")!.operation
    expect([changeRole[ActionsExtension], changeRole[AuditExtension]]).toEqual([["members.changeRole", "members.manageOwners"], { action: "member.role.update" }])
    const withActions = operations.filter(({ operation }) => operation[ActionsExtension] !== undefined).length
    expect(withActions).toBeGreaterThan(100)
  })
})
