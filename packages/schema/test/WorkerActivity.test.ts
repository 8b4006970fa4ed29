import { describe, expect, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as WorkerActivity from "../src/WorkerActivity.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const WorkerActivity3 = effect3("WorkerActivity")

describe("WorkerActivity on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(WorkerActivity, WorkerActivity3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names).toEqual(expect.arrayContaining(["WorkerHeartbeat", "WorkerTransition", "WorkerActivityEntry", "WorkerActivityPage", "WorkerActivityQuery"]))
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(WorkerActivity.WorkerHeartbeat, WorkerActivity3.WorkerHeartbeat, examplesOfComponent("WorkerHeartbeat"))
    roundTrips(WorkerActivity.WorkerTransition, WorkerActivity3.WorkerTransition, examplesOfComponent("WorkerTransition"))
    roundTrips(WorkerActivity.WorkerActivityEntry, WorkerActivity3.WorkerActivityEntry, [
      ...examplesOfComponent("WorkerHeartbeat"),
      ...examplesOfComponent("WorkerTransition"),
      ...examplesOfComponent("WorkerActivityEntry")
    ])
    roundTrips(WorkerActivity.WorkerActivityPage, WorkerActivity3.WorkerActivityPage, examplesOfComponent("WorkerActivityPage"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    const [heartbeat] = examplesOfComponent("WorkerHeartbeat")
    const [transition] = examplesOfComponent("WorkerTransition")
    const heartbeatFields = typeof heartbeat === "object" && heartbeat !== null && !Array.isArray(heartbeat) ? heartbeat : {}
    sameOn(WorkerActivity.WorkerActivityEntry, WorkerActivity3.WorkerActivityEntry, [
      heartbeat,
      transition,
      { ...heartbeatFields, kind: "transition" },
      { ...heartbeatFields, status: "provisioning" },
      { ...heartbeatFields, openSessions: 1.5 },
      { ...heartbeatFields, id: exampleId("wae") },
      { kind: "other" }
    ])
    sameOn(WorkerActivity.WorkerActivityQuery, WorkerActivity3.WorkerActivityQuery, [
      {}, { kind: "heartbeat" }, { kind: "transition", limit: "10" }, { kind: "both" }, { cursor: "" }
    ])
    expect(WorkerActivity.HEARTBEATS_KEPT).toBe(WorkerActivity3.HEARTBEATS_KEPT)
  })
})
