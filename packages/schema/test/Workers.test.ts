import { describe, expect, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Workers from "../src/Workers.js"
import { operationExamples } from "./catalog.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { withoutSlugDescriptions } from "./workers.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Workers3 = effect3("Workers")

describe("Workers on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Workers, Workers3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      SandboxBackend: withoutSlugDescriptions,
      InstanceProvider: withoutSlugDescriptions,
      InstanceStatus: withoutSlugDescriptions,
      RegisterWorkerRequest: withoutSlugDescriptions,
      UpdateWorkerRequest: withoutSlugDescriptions,
      RegisterInstanceRequest: withoutSlugDescriptions
    })
    expect(names.length).toBeGreaterThan(20)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Workers.Worker, Workers3.Worker, examplesOfComponent("Worker"))
    roundTrips(Workers.WorkerInstance, Workers3.WorkerInstance, examplesOfComponent("WorkerInstance"))
    roundTrips(Workers.WorkerPage, Workers3.WorkerPage, examplesOfComponent("WorkerPage"))
    roundTrips(Workers.WorkerResponse, Workers3.WorkerResponse, examplesOfComponent("WorkerResponse"))
    roundTrips(Workers.RuntimeUpgradeResponse, Workers3.RuntimeUpgradeResponse, examplesOfComponent("RuntimeUpgradeResponse"))
    roundTrips(Workers.HeartbeatReceipt, Workers3.HeartbeatReceipt, examplesOfComponent("HeartbeatReceipt"))
    roundTrips(Workers.RegisteredWorker, Workers3.RegisteredWorker, operationExamples("POST /v1/workers 201"))
    roundTrips(Workers.WorkerInstanceResponse, Workers3.WorkerInstanceResponse, operationExamples("POST /v1/worker-runtime/instance 201"))
    roundTrips(Workers.RegisterWorkerRequest, Workers3.RegisterWorkerRequest, operationExamples("POST /v1/workers request"))
    roundTrips(Workers.UpdateWorkerRequest, Workers3.UpdateWorkerRequest, operationExamples("PATCH /v1/workers/{id} request"))
    roundTrips(Workers.RuntimeUpgradeRequest, Workers3.RuntimeUpgradeRequest, operationExamples("POST /v1/workers/{id}/runtime/upgrade request"))
    roundTrips(Workers.HeartbeatRequest, Workers3.HeartbeatRequest, operationExamples("POST /v1/worker-runtime/heartbeat request"))
    roundTrips(Workers.RegisterInstanceRequest, Workers3.RegisterInstanceRequest, operationExamples("POST /v1/worker-runtime/instance request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Workers.RegisterWorkerRequest, Workers3.RegisterWorkerRequest, [
      { name: "Grace's laptop", destination: "local" },
      { name: " Cloud ", description: "", destination: "cloud", sandboxBackend: "micro_sandbox-2", workspacePath: "/srv/work" },
      { name: "", destination: "local" },
      { name: "x", destination: "moon" },
      { name: "x" },
      { name: "x", destination: "local", description: "d".repeat(2001) },
      { name: "x", destination: "local", sandboxBackend: "Docker" },
      { name: "x", destination: "local", sandboxBackend: "" },
      { name: "x", destination: "local", sandboxBackend: `d${"x".repeat(32)}` },
      { name: "x", destination: "local", sandboxBackend: "1docker" },
      { name: "x", destination: "local", workspacePath: "" }
    ])
    sameOn(Workers.UpdateWorkerRequest, Workers3.UpdateWorkerRequest, [
      { name: "Grace's workstation", description: null }, { workspacePath: null, sandboxBackend: null }, { sandboxBackend: "none" }, {}, { name: null }, { sandboxBackend: "NONE" }
    ])
    sameOn(Workers.WorkerListQuery, Workers3.WorkerListQuery, [{}, { mine: "true" }, { mine: "false", limit: "5" }, { mine: "yes" }, { mine: "TRUE" }])
    sameOn(Workers.WorkerPath, Workers3.WorkerPath, [{ id: exampleId("wrk") }, { id: "anything" }, { id: "" }, { id: "x".repeat(256) }])
    sameOn(Workers.RuntimeUpgradeRequest, Workers3.RuntimeUpgradeRequest, [{ version: "2026.11.2" }, {}, [], "2026.11.2", null])
    sameOn(Workers.HeartbeatRequest, Workers3.HeartbeatRequest, [
      {},
      { status: "error", imageVersion: "2026.11.1", active: false, sentAt: "2026-11-02T09:30:00Z", lastActivityAt: "2026-11-02T09:29:00Z", openSessions: 0 },
      { openSessions: Workers.MAX_OPEN_SESSIONS },
      { status: "provisioning" },
      { imageVersion: "" },
      { imageVersion: "v".repeat(129) },
      { active: "true" },
      { sentAt: "yesterday" },
      { openSessions: -1 },
      { openSessions: Workers.MAX_OPEN_SESSIONS + 1 },
      { openSessions: 1.5 }
    ])
    sameOn(Workers.RegisterInstanceRequest, Workers3.RegisterInstanceRequest, [
      { provider: "fly", status: "running" },
      { provider: "aws", status: "starting", region: " eu-west-1 ", url: "http://10.0.0.5:8080/base", credential: "rt_9f2c" },
      { provider: "fly" },
      { provider: "Fly", status: "running" },
      { provider: "fly", status: "running", region: "" },
      { provider: "fly", status: "running", url: "https://grace-worker.fly.dev/?x=1" },
      { provider: "fly", status: "running", url: "/runtime" },
      { provider: "fly", status: "running", credential: "" },
      { provider: "fly", status: "running", credential: "has space" },
      { provider: "fly", status: "running", credential: "é" },
      { provider: "fly", status: "running", credential: "c".repeat(4097) }
    ])
    expect(decode4(Workers.HeartbeatRequest, { openSessions: -1 })).toMatchObject({ ok: false, message: expect.stringContaining(`must be an integer from 0 to ${Workers.MAX_OPEN_SESSIONS}`) })
    expect(decode4(Workers.RegisterInstanceRequest, { provider: "fly", status: "running", credential: "has space" }))
      .toMatchObject({ ok: false, message: expect.stringContaining("must be printable ASCII without spaces") })
    expect([Workers.HEARTBEAT_STALE_MILLIS, Workers.HEARTBEAT_MAX_CLOCK_AHEAD_MILLIS]).toEqual([Workers3.HEARTBEAT_STALE_MILLIS, Workers3.HEARTBEAT_MAX_CLOCK_AHEAD_MILLIS])
  })
})
