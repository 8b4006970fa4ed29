import { describe, expect, it } from "@effect/vitest"
import { WorkerActivityApi } from "../src/WorkerActivityApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { effect3 } from "./effect3.js"

const WorkerActivityApi3 = effect3("WorkerActivityApi").WorkerActivityApi

describe("WorkerActivityApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(WorkerActivityApi, WorkerActivityApi3)
    expect(operations).toEqual(["GET /v1/workers/{id}/activity"])
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(WorkerActivityApi, WorkerActivityApi3)).toBeGreaterThan(0)
  })
})
