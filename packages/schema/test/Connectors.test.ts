/**
 * Connectors.ts: the document's examples of connectors, accounts, mappings and syncs decode and encode back
 * unchanged, the requests, queries and paths taken and refused, and a sync summary stored by an earlier release read
 * with the defaults.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Connectors from "../src/Connectors.js"
import { exampleId } from "../src/Ids.js"
import { examplesOfComponent, operationExamples } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Connectors", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Connectors.ConnectorAccount, examplesOfComponent("ConnectorAccount"))
    roundTrips(Connectors.ConnectorInstance, examplesOfComponent("ConnectorInstance"))
    roundTrips(Connectors.ConnectorTarget, examplesOfComponent("ConnectorTarget"))
    roundTrips(Connectors.ConnectorMapping, examplesOfComponent("ConnectorMapping"))
    roundTrips(Connectors.ConnectorSyncEvent, examplesOfComponent("ConnectorSyncEvent"))
    roundTrips(Connectors.DiscoveryResult, examplesOfComponent("DiscoveryResult"))
    roundTrips(Connectors.DiscoveryResponse, examplesOfComponent("DiscoveryResponse"))
    roundTrips(Connectors.ApplyDiscoveryResponse, examplesOfComponent("ApplyDiscoveryResponse"))
    roundTrips(Connectors.ConnectorMappingPage, examplesOfComponent("ConnectorMappingPage"))
    roundTrips(Connectors.TreeEntryPage, examplesOfComponent("TreeEntryPage"))
    roundTrips(Connectors.WebhookResponse, [...examplesOfComponent("WebhookAccepted"), ...examplesOfComponent("WebhookIgnored")])
    const at = (operation: string) => operationExamples(operation)
    roundTrips(Connectors.CreateConnectorAccountRequest, at("POST /v1/connector-accounts request"))
    roundTrips(Connectors.ConnectorAccountResponse, at("POST /v1/connector-accounts 201"))
    roundTrips(Connectors.DisconnectConnectorAccountRequest, at("POST /v1/connector-accounts/{connectorAccountId}/disconnect request"))
    roundTrips(Connectors.DisconnectConnectorAccountResponse, at("POST /v1/connector-accounts/{connectorAccountId}/disconnect 200"))
    roundTrips(Connectors.CreateConnectorInstanceRequest, at("POST /v1/connector-instances request"))
    roundTrips(Connectors.UpdateConnectorInstanceRequest, at("PATCH /v1/connector-instances/{connectorInstanceId} request"))
    roundTrips(Connectors.RemoveConnectorInstanceResponse, at("POST /v1/connector-instances/{connectorInstanceId}/remove 200"))
    roundTrips(Connectors.CreateConnectorTargetRequest, at("POST /v1/connector-instances/{connectorInstanceId}/targets request"))
    roundTrips(Connectors.UpdateConnectorTargetRequest, at("PATCH /v1/connector-targets/{connectorTargetId} request"))
    roundTrips(Connectors.CreateConnectorMappingRequest, at("POST /v1/connector-targets/{connectorTargetId}/mappings request"))
    roundTrips(Connectors.UpdateConnectorMappingRequest, at("PATCH /v1/connector-mappings/{connectorMappingId} request"))
    roundTrips(Connectors.ApplyDiscoveryRequest, at("POST /v1/connector-instances/{connectorInstanceId}/discovery/apply request"))
    roundTrips(Connectors.SyncNowResponse, at("POST /v1/connector-instances/{connectorInstanceId}/sync 202"))
    roundTrips(Connectors.ResyncResponse, at("POST /v1/connector-targets/{connectorTargetId}/resync 202"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Connectors.CreateConnectorAccountRequest, [
      { kind: "app_installation", installationId: 51234567 },
      { kind: "app_installation", installationId: 1, connectorType: "codehost", displayName: " Acme ", accountLogin: "acme" },
      { kind: "token", token: " github_pat_x " }
    ])
    refuses(Connectors.CreateConnectorAccountRequest, [
      { kind: "app_installation", installationId: 0 },
      { kind: "app_installation", installationId: 1.5 },
      { kind: "app_installation", installationId: Number.MAX_SAFE_INTEGER + 2 },
      { kind: "app_installation", token: "x" },
      { kind: "token", token: "" },
      { kind: "token", token: "x", connectorType: "gitlab" },
      { kind: "oauth", token: "x" }
    ])
    const account = exampleId("cac")
    takes(Connectors.CreateConnectorInstanceRequest, [
      { connectorAccountId: account, name: "Agent plugins", remoteId: "acme/agent-plugins" },
      { connectorAccountId: account, name: "Agent plugins", remoteId: "  acme/agent-plugins\n", config: { a: 1 } }
    ])
    refuses(Connectors.CreateConnectorInstanceRequest, [
      { connectorAccountId: account, name: "Agent plugins", remoteId: "acme" },
      { connectorAccountId: account, name: "Agent plugins", remoteId: "acme/agent plugins" },
      { connectorAccountId: account, name: "Agent plugins", remoteId: `acme/${"x".repeat(101)}` },
      { connectorAccountId: account, name: "", remoteId: "acme/agent-plugins" },
      { connectorAccountId: account, name: "Agent plugins", remoteId: "acme/agent-plugins", config: [] }
    ])
    takes(Connectors.UpdateConnectorInstanceRequest, [
      { name: "Renamed" },
      { config: {} },
      { remoteId: "acme/other" }
    ])
    refuses(Connectors.UpdateConnectorInstanceRequest, [
      {},
      { remoteId: "nope" }
    ])
    takes(Connectors.CreateConnectorTargetRequest, [
      { externalTargetRef: "main" },
      { externalTargetRef: " release/2026.11 ", targetKind: "repository_branch", remoteId: "acme/agent-plugins" },
      { externalTargetRef: "feature/a-b_c" }
    ])
    refuses(Connectors.CreateConnectorTargetRequest, [
      { externalTargetRef: "" },
      { externalTargetRef: "-main" },
      { externalTargetRef: "/main" },
      { externalTargetRef: "main/" },
      { externalTargetRef: "a..b" },
      { externalTargetRef: "main.lock" },
      { externalTargetRef: "ma in" },
      { externalTargetRef: "ma~in" },
      { externalTargetRef: "ma\u0001in" },
      { externalTargetRef: "main", targetKind: "tag" }
    ])
    takes(Connectors.UpdateConnectorTargetRequest, [
      { externalTargetRef: "main" },
      { config: { a: 1 } }
    ])
    refuses(Connectors.UpdateConnectorTargetRequest, [
      {},
      { externalTargetRef: "a..b" }
    ])
    takes(Connectors.CreateConnectorMappingRequest, [
      { mappingKind: "path", selector: "skills/**", objectType: "skill" },
      { mappingKind: "api", selector: " x ", objectType: "mcp", pluginId: null, autoAddToPlugin: true, config: null },
      { mappingKind: "path", selector: "skills/**", objectType: "skill", pluginId: exampleId("plg"), config: { a: 1 } }
    ])
    refuses(Connectors.CreateConnectorMappingRequest, [
      { mappingKind: "file", selector: "skills/**", objectType: "skill" },
      { mappingKind: "path", selector: "", objectType: "skill" },
      { mappingKind: "path", selector: "x".repeat(256), objectType: "skill" },
      { mappingKind: "path", selector: "skills/**", objectType: "skill", pluginId: exampleId("cob") }
    ])
    takes(Connectors.UpdateConnectorMappingRequest, [
      { selector: "a/**" },
      { pluginId: null },
      { autoAddToPlugin: false }
    ])
    refuses(Connectors.UpdateConnectorMappingRequest, [
      {},
      { objectType: "plugin" }
    ])
    takes(Connectors.ConnectorMappingListQuery, [
      {},
      { cursor: "c", limit: "100", mappingKind: "path", objectType: "skill", pluginId: exampleId("plg"), q: "skills" }
    ])
    refuses(Connectors.ConnectorMappingListQuery, [
      { cursor: "" },
      { cursor: "x".repeat(256) },
      { limit: "101" },
      { mappingKind: "file" },
      { q: "" }
    ])
    takes(Connectors.ConnectorSyncEventListQuery, [
      {},
      { status: "queued", connectorTargetId: exampleId("ctg") }
    ])
    refuses(Connectors.ConnectorSyncEventListQuery, [
      { status: "done" }
    ])
    takes(Connectors.DiscoveryTreeQuery, [
      {},
      { limit: "500", prefix: "skills/", cursor: "c" }
    ])
    refuses(Connectors.DiscoveryTreeQuery, [
      { limit: "501" },
      { prefix: "" },
      { prefix: "x".repeat(1025) },
      { cursor: "" }
    ])
    takes(Connectors.ApplyDiscoveryRequest, [
      { keys: ["manifest:root"] },
      { keys: [" manifest:root "], connectorTargetId: exampleId("ctg") },
      { keys: Array.from({ length: 500 }, (_, i) => `k${i}`) }
    ])
    refuses(Connectors.ApplyDiscoveryRequest, [
      { keys: [] },
      { keys: Array.from({ length: 501 }, (_, i) => `k${i}`) },
      { keys: [""] },
      { keys: ["x".repeat(1025)] }
    ])
  })

  it("reads a sync summary stored by an earlier release (no outcome, no skipped files) with the defaults", () => {
    const old = { created: 1, updated: 0, deleted: 0, unchanged: 0, skipped: 0, warnings: [], importedPluginKeys: [] }
    takes(Connectors.SyncSummary, [
      old,
      { ...old, outcome: "partial", skippedFiles: [{ path: "a", reason: "b", connectorMappingId: exampleId("cmp") }] }
    ])
    refuses(Connectors.SyncSummary, [
      { ...old, outcome: "done" },
      { ...old, skippedFiles: [{ path: "a" }] }
    ])
    expect(decode(Connectors.SyncSummary, old)).toMatchObject({ ok: true, value: { outcome: "complete", skippedFiles: [] } })
    expect(Connectors.SyncSummary.make(old)).toMatchObject({ outcome: "complete", skippedFiles: [] })
  })
})
