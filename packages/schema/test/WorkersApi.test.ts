import { describe, expect, it } from "@effect/vitest"
import { WorkerRuntimeApi, WorkersApi } from "../src/WorkersApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { withoutSlugDescriptions } from "./workers.js"
import { effect3 } from "./effect3.js"

const WorkerRuntimeApi3 = effect3("WorkersApi").WorkerRuntimeApi
const WorkersApi3 = effect3("WorkersApi").WorkersApi

describe("WorkersApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(WorkersApi, WorkersApi3, {
      // Workers.test.ts's real difference: Effect 3's override of a slug (sandboxBackend, an instance's provider and
      // status) left its description out; Effect 4 keeps it. Dropped here to compare the rest.
      "POST /v1/workers": withoutSlugDescriptions,
      "PATCH /v1/workers/{id}": withoutSlugDescriptions
    })
    expect(operations).toHaveLength(7)
  })

  it("declares the runtime's operations of the Effect 3 group", () => {
    const operations = sameOperations(WorkerRuntimeApi, WorkerRuntimeApi3, {
      // The same difference, of an instance's provider and status.
      "POST /v1/worker-runtime/instance": withoutSlugDescriptions
    })
    expect(operations).toHaveLength(2)
  })

  it("shows the examples of the Effect 3 groups", () => {
    expect(sameExamples(WorkersApi, WorkersApi3)).toBeGreaterThan(0)
    expect(sameExamples(WorkerRuntimeApi, WorkerRuntimeApi3)).toBeGreaterThan(0)
  })
})
