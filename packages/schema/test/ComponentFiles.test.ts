/** ComponentFiles.ts: a version's file list and a file's query, their examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import * as ComponentFiles from "../src/ComponentFiles.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("ComponentFiles", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ComponentFiles.ComponentFile, examplesOfComponent("ComponentFile"))
    roundTrips(ComponentFiles.ComponentFileList, examplesOfComponent("ComponentFileList"))
  })

  it("takes the file queries and files it documents, refuses the others and says why", () => {
    takes(ComponentFiles.ComponentFileQuery, [
      { path: "skills/deploy/scripts/deploy.sh" },
      { path: "x".repeat(1024) }
    ])
    refuses(ComponentFiles.ComponentFileQuery, [
      { path: "" },
      { path: "x".repeat(1025) },
      { path: "a\u0000b" },
      {}
    ])
    expect(decode(ComponentFiles.ComponentFileQuery, { path: "" })).toMatchObject({ message: expect.stringContaining("must be a file path of the version's list") })
    expect(decode(ComponentFiles.ComponentFileQuery, { path: "x".repeat(1025) })).toMatchObject({ message: expect.stringContaining("must be at most 1024 characters long") })
    takes(ComponentFiles.ComponentFile, [
      { path: "a.md", kind: "entry", size: 1, sha256: null, mediaType: "text/markdown", omitted: null, executable: false },
      { path: "run.sh", kind: "file", size: 1, sha256: null, mediaType: "text/x-shellscript", omitted: null, executable: true }
    ])
    refuses(ComponentFiles.ComponentFile, [
      { path: "a.md", kind: "folder", size: 1, sha256: null, mediaType: "text/markdown", omitted: null, executable: false },
      { path: "a.md", kind: "file", size: 1.5, sha256: null, mediaType: "text/markdown", omitted: null, executable: false },
      { path: "run.sh", kind: "file", size: 1, sha256: null, mediaType: "text/x-shellscript", omitted: null, executable: "100755" },
      { path: "a.md", kind: "entry", size: 1, sha256: null, mediaType: "text/markdown", omitted: null }
    ])
  })
})
