import { defineConfig } from "vitest/config"

// The tests check pure schemas and import two Effect versions each (the differential tests): sharing one worker's
// modules across files (no isolation) keeps the run to seconds, where a fresh import per file took most of a minute
// on a loaded machine.
export default defineConfig({ test: { include: ["test/**/*.test.ts"], isolate: false } })
