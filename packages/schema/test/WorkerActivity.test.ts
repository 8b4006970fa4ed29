/** WorkerActivity.ts: a worker's heartbeats and online/offline transitions, their examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import * as WorkerActivity from "../src/WorkerActivity.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("WorkerActivity", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(WorkerActivity.WorkerHeartbeat, examplesOfComponent("WorkerHeartbeat"))
    roundTrips(WorkerActivity.WorkerTransition, examplesOfComponent("WorkerTransition"))
    roundTrips(WorkerActivity.WorkerActivityEntry, [
      ...examplesOfComponent("WorkerHeartbeat"),
      ...examplesOfComponent("WorkerTransition"),
      ...examplesOfComponent("WorkerActivityEntry")
    ])
    roundTrips(WorkerActivity.WorkerActivityPage, examplesOfComponent("WorkerActivityPage"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const [heartbeat] = examplesOfComponent("WorkerHeartbeat")
    const [transition] = examplesOfComponent("WorkerTransition")
    const heartbeatFields = typeof heartbeat === "object" && heartbeat !== null && !Array.isArray(heartbeat) ? heartbeat : {}
    takes(WorkerActivity.WorkerActivityEntry, [
      heartbeat,
      transition
    ])
    refuses(WorkerActivity.WorkerActivityEntry, [
      { ...heartbeatFields, kind: "transition" },
      { ...heartbeatFields, status: "provisioning" },
      { ...heartbeatFields, openSessions: 1.5 },
      { ...heartbeatFields, id: exampleId("wae") },
      { kind: "other" }
    ])
    takes(WorkerActivity.WorkerActivityQuery, [
      {},
      { kind: "heartbeat" },
      { kind: "transition", limit: "10" }
    ])
    refuses(WorkerActivity.WorkerActivityQuery, [
      { kind: "both" },
      { cursor: "" }
    ])
    expect(WorkerActivity.HEARTBEATS_KEPT).toBe(100)
  })
})
