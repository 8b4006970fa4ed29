import { defineConfig } from "vitest/config"

// The tests drive the MCP server in memory (effect/ai's McpTest) against a real orgplane server started once per file.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { include: ["test/**/*.test.ts"], isolate: false, maxWorkers: 2, silent: "passed-only", testTimeout: 30_000, hookTimeout: 120_000 }
})
