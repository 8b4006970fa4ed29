import { describe, expect, it } from "@effect/vitest"
import * as ComponentFiles from "../src/ComponentFiles.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const ComponentFiles3 = effect3("ComponentFiles")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("ComponentFiles on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(ComponentFiles, ComponentFiles3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names).toEqual(["ComponentFileKind", "ComponentFile", "ComponentFileList", "ComponentFileQuery"])
    expect([ComponentFiles.MAX_COMPONENT_FILE_BYTES, ComponentFiles.MAX_COMPONENT_FILES_BYTES, ComponentFiles.MAX_COMPONENT_FILES])
      .toEqual([ComponentFiles3.MAX_COMPONENT_FILE_BYTES, ComponentFiles3.MAX_COMPONENT_FILES_BYTES, ComponentFiles3.MAX_COMPONENT_FILES])
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ComponentFiles.ComponentFile, ComponentFiles3.ComponentFile, examplesOfComponent("ComponentFile"))
    roundTrips(ComponentFiles.ComponentFileList, ComponentFiles3.ComponentFileList, examplesOfComponent("ComponentFileList"))
  })

  it("refuses what the Effect 3 schemas refuse, with the same words", () => {
    sameOn(ComponentFiles.ComponentFileQuery, ComponentFiles3.ComponentFileQuery, [
      { path: "skills/deploy/scripts/deploy.sh" },
      { path: "x".repeat(1024) },
      { path: "" },
      { path: "x".repeat(1025) },
      { path: "a\u0000b" },
      {}
    ])
    expect(decode4(ComponentFiles.ComponentFileQuery, { path: "" })).toMatchObject({ message: expect.stringContaining("must be a file path of the version's list") })
    expect(decode4(ComponentFiles.ComponentFileQuery, { path: "x".repeat(1025) })).toMatchObject({ message: expect.stringContaining("must be at most 1024 characters long") })
    sameOn(ComponentFiles.ComponentFile, ComponentFiles3.ComponentFile, [
      { path: "a.md", kind: "entry", size: 1, sha256: null, mediaType: "text/markdown", omitted: null },
      { path: "a.md", kind: "folder", size: 1, sha256: null, mediaType: "text/markdown", omitted: null },
      { path: "a.md", kind: "file", size: 1.5, sha256: null, mediaType: "text/markdown", omitted: null }
    ])
  })
})
