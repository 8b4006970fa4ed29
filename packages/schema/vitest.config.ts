import { defineConfig } from "vitest/config"

// The tests check pure schemas (the differential tests hold them to their Effect 3 originals): sharing one worker's
// modules across files (no isolation) keeps the run to seconds, where a fresh import per file took most of a minute
// on a loaded machine. The Effect 3 side is recorded (test/effect3.ts): the setup file writes each file's records in
// record mode; reading back the whole document's steps takes a few seconds, hence the longer timeout.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { include: ["test/**/*.test.ts"], isolate: false, setupFiles: ["test/effect3Setup.ts"], testTimeout: 30_000 }
})
