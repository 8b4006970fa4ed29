/** Workers.ts: workers, their tokens and runtime instances: the document's examples, requests taken and refused. */
import { describe, expect, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import * as Workers from "../src/Workers.js"
import { examplesOfComponent, operationExamples } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Workers", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Workers.Worker, examplesOfComponent("Worker"))
    roundTrips(Workers.WorkerInstance, examplesOfComponent("WorkerInstance"))
    roundTrips(Workers.WorkerPage, examplesOfComponent("WorkerPage"))
    roundTrips(Workers.WorkerResponse, examplesOfComponent("WorkerResponse"))
    roundTrips(Workers.RuntimeUpgradeResponse, examplesOfComponent("RuntimeUpgradeResponse"))
    roundTrips(Workers.HeartbeatReceipt, examplesOfComponent("HeartbeatReceipt"))
    roundTrips(Workers.RegisteredWorker, operationExamples("POST /v1/workers 201"))
    roundTrips(Workers.WorkerInstanceResponse, operationExamples("POST /v1/worker-runtime/instance 201"))
    roundTrips(Workers.RegisterWorkerRequest, operationExamples("POST /v1/workers request"))
    roundTrips(Workers.UpdateWorkerRequest, operationExamples("PATCH /v1/workers/{id} request"))
    roundTrips(Workers.RuntimeUpgradeRequest, operationExamples("POST /v1/workers/{id}/runtime/upgrade request"))
    roundTrips(Workers.HeartbeatRequest, operationExamples("POST /v1/worker-runtime/heartbeat request"))
    roundTrips(Workers.RegisterInstanceRequest, operationExamples("POST /v1/worker-runtime/instance request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Workers.RegisterWorkerRequest, [
      { name: "Grace's laptop", destination: "local" },
      { name: " Cloud ", description: "", destination: "cloud", sandboxBackend: "micro_sandbox-2", workspacePath: "/srv/work" }
    ])
    refuses(Workers.RegisterWorkerRequest, [
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
    takes(Workers.UpdateWorkerRequest, [
      { name: "Grace's workstation", description: null },
      { workspacePath: null, sandboxBackend: null },
      { sandboxBackend: "none" }
    ])
    refuses(Workers.UpdateWorkerRequest, [
      {},
      { name: null },
      { sandboxBackend: "NONE" }
    ])
    takes(Workers.WorkerListQuery, [{}, { mine: "true" }, { mine: "false", limit: "5" }])
    refuses(Workers.WorkerListQuery, [{ mine: "yes" }, { mine: "TRUE" }])
    takes(Workers.WorkerPath, [{ id: exampleId("wrk") }, { id: "anything" }])
    refuses(Workers.WorkerPath, [{ id: "" }, { id: "x".repeat(256) }])
    takes(Workers.RuntimeUpgradeRequest, [{ version: "2026.11.2" }, {}])
    refuses(Workers.RuntimeUpgradeRequest, [[], "2026.11.2", null])
    takes(Workers.HeartbeatRequest, [
      {},
      { status: "error", imageVersion: "2026.11.1", active: false, sentAt: "2026-11-02T09:30:00Z", lastActivityAt: "2026-11-02T09:29:00Z", openSessions: 0 },
      { openSessions: Workers.MAX_OPEN_SESSIONS }
    ])
    refuses(Workers.HeartbeatRequest, [
      { status: "provisioning" },
      { imageVersion: "" },
      { imageVersion: "v".repeat(129) },
      { active: "true" },
      { sentAt: "yesterday" },
      { openSessions: -1 },
      { openSessions: Workers.MAX_OPEN_SESSIONS + 1 },
      { openSessions: 1.5 }
    ])
    takes(Workers.RegisterInstanceRequest, [
      { provider: "fly", status: "running" },
      { provider: "aws", status: "starting", region: " eu-west-1 ", url: "http://10.0.0.5:8080/base", credential: "rt_9f2c" }
    ])
    refuses(Workers.RegisterInstanceRequest, [
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
    expect(decode(Workers.HeartbeatRequest, { openSessions: -1 })).toMatchObject({ ok: false, message: expect.stringContaining(`must be an integer from 0 to ${Workers.MAX_OPEN_SESSIONS}`) })
    expect(decode(Workers.RegisterInstanceRequest, { provider: "fly", status: "running", credential: "has space" }))
      .toMatchObject({ ok: false, message: expect.stringContaining("must be printable ASCII without spaces") })
    expect([Workers.HEARTBEAT_STALE_MILLIS, Workers.HEARTBEAT_MAX_CLOCK_AHEAD_MILLIS]).toEqual([180_000, 300_000])
  })
})
