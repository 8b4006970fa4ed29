import * as Os from "node:os"
import * as Path from "node:path"
import { defineConfig } from "vitest/config"
import { DurationSequencer } from "../testkit/src/Sequencer.js"

// Each test file starts servers on real sockets and databases (PGlite in this process, or Postgres at DATABASE_URL),
// and a test may take a few seconds (a 2-second readiness deadline, PGlite's start). Files share their worker's
// module graph (`isolate: false`): the server's modules, the OpenAPI document and its compiled checks, PGlite's
// compiled engine and the migrated template are made once per worker, not once per file (each file's setup checks
// only what its own servers did: test/support/). No test replaces a module or a global.
// A passing test's console output (the servers' log lines among it) is not printed; a failing one's is.
// `memory` databases keep their migrated template in a test cache folder of their own, apart from the OS cache
// folder a developer's `orgplane serve` uses (saving a template removes those of other migration sets:
// platform/EmbeddedTemplate.ts).
// Two workers on two cores (vitest's default there is one): a third of the suite's wall time is files waiting (on a
// database that is down on purpose, a receiver's backoff, a child process), which the second worker fills with
// another file's work. `pnpm test` runs the CLI's two beside them (scripts/test.mjs), and four processes fill the
// two cores: with three each, the whole `pnpm test` took 492.4 s and 940.9 CPU-s, with two 412.2 s and 774.1
// (2026-11-29, back to back). `ORGPLANE_TEST_WORKERS` sets another count (`.ci/run`'s Postgres run, alone, four).
// `@orgplane/schema` and `@orgplane/client` resolve to their sources (`@orgplane/source`), so the tests need no build.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: {
    // Longest files first, a fresh clone too (testkit's Sequencer.ts, from test/durations.json).
    sequence: { sequencer: DurationSequencer },
    include: ["test/**/*.test.ts"],
    // Every answer of a test server held to the OpenAPI document (test/support/Contract.ts: @orgplane/schema's, which
    // the schema's Api.test holds equal to the saved document), and every statement it ran to the tenancy rule
    // (test/support/Tenancy.ts).
    setupFiles: ["../testkit/src/FileTimes.ts", "test/support/contractSetup.ts", "test/support/tenancySetup.ts"],
    maxWorkers: Number(process.env["ORGPLANE_TEST_WORKERS"] ?? 2),
    isolate: false,
    silent: "passed-only",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      ORGPLANE_CACHE_DIR: process.env["ORGPLANE_CACHE_DIR"] ?? Path.join(Os.tmpdir(), "orgplane-test-cache"),
      // Every answer checked by its schema (platform/ResponseEncoding.ts); `0` runs the suite on the server's own
      // path, the checks skipped.
      ORGPLANE_CHECK_RESPONSE_ENCODING: process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"] ?? "1",
      // With DATABASE_URL every server a test starts is a cluster runner; one given no runner port of its own
      // (`makeWebHandler`, `makeNodeListener`) would bind the documented default, 34431, which a server of the other
      // worker's file may hold at that moment (CI's Postgres run, stop 52: RequestLog.test's two embeddings died
      // with RunnerPortInUse). A free port each, as the tests that pass `cluster: { port: 0 }` ask.
      ORGPLANE_CLUSTER_PORT: process.env["ORGPLANE_CLUSTER_PORT"] ?? "0"
    }
  }
})
