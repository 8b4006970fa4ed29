import { defineConfig } from "vitest/config"

// The fakes and checkers on loopback: no orgplane server and no database, but ResponseContract.test reads the
// server's and schema's sources (`@orgplane/source`).
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { include: ["test/**/*.test.ts"], testTimeout: 30_000, hookTimeout: 60_000 }
})
