import { describe, expect, it } from "@effect/vitest"
import * as ConnectorsApi from "../src/ConnectorsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import type { Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const ConnectorsApi3 = effect3("ConnectorsApi")

describe("ConnectorsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 groups", () => {
    expect(sameOperations(ConnectorsApi.ConnectorAccountsApi, ConnectorsApi3.ConnectorAccountsApi, {})).toHaveLength(4)
    expect(sameOperations(ConnectorsApi.ConnectorInstancesApi, ConnectorsApi3.ConnectorInstancesApi, {
      // The real difference Connectors.test.ts names: the description of `remoteId`, a member of the transformed named
      // schema RepositoryFullName, does not reach Effect 4's JSON Schema (as a Timestamp member's). Added back here.
      "POST /v1/connector-instances/{connectorInstanceId}/targets": (operation: Json): Json => {
        const member = `"remoteId":{"$ref":"ref:RepositoryFullName"}`
        const text = JSON.stringify(operation)
        expect(text).toContain(member)
        return JSON.parse(text.replace(member, `"remoteId":{"$ref":"ref:RepositoryFullName","description":"The repository; default: the instance's."}`))
      }
    })).toHaveLength(17)
    expect(sameOperations(ConnectorsApi.ConnectorTargetsApi, ConnectorsApi3.ConnectorTargetsApi, {})).toHaveLength(5)
    expect(sameOperations(ConnectorsApi.ConnectorMappingsApi, ConnectorsApi3.ConnectorMappingsApi, {})).toHaveLength(3)
    expect(sameOperations(ConnectorsApi.ConnectorSyncEventsApi, ConnectorsApi3.ConnectorSyncEventsApi, {})).toHaveLength(1)
    expect(sameOperations(ConnectorsApi.WebhooksApi, ConnectorsApi3.WebhooksApi, {})).toHaveLength(1)
    expect(ConnectorsApi.WEBHOOK_BODY_BYTES).toBe(ConnectorsApi3.WEBHOOK_BODY_BYTES)
  })

  it("shows the examples of the Effect 3 groups", () => {
    expect(sameExamples(ConnectorsApi.ConnectorAccountsApi, ConnectorsApi3.ConnectorAccountsApi)).toBeGreaterThan(0)
    expect(sameExamples(ConnectorsApi.ConnectorInstancesApi, ConnectorsApi3.ConnectorInstancesApi)).toBeGreaterThan(0)
    expect(sameExamples(ConnectorsApi.ConnectorTargetsApi, ConnectorsApi3.ConnectorTargetsApi)).toBeGreaterThan(0)
    expect(sameExamples(ConnectorsApi.ConnectorMappingsApi, ConnectorsApi3.ConnectorMappingsApi)).toBeGreaterThan(0)
    expect(sameExamples(ConnectorsApi.ConnectorSyncEventsApi, ConnectorsApi3.ConnectorSyncEventsApi)).toBeGreaterThan(0)
    expect(sameExamples(ConnectorsApi.WebhooksApi, ConnectorsApi3.WebhooksApi)).toBeGreaterThan(0)
  })
})
