import { defineConfig } from "vitest/config"

// Each test file starts servers on real sockets and databases (PGlite in this process, or Postgres at DATABASE_URL):
// files run in their own workers, and a test may take a few seconds (a 2-second readiness deadline, PGlite's start).
export default defineConfig({ test: { include: ["test/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 60_000 } })
