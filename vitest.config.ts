import { configDefaults, defineConfig } from "vitest/config"

/**
 * Test files that start no orgplane server and no database (pure logic, fakes on loopback): the "no-database"
 * project runs them without the database template's global setup (seconds) and without the tenancy check (they run
 * no SQL). Every other test file runs in the "database" project, so a new file gets both unless it is listed here;
 * a file listed here that starts a test database fails at once (`TestDatabase` refuses under
 * `ORGPLANE_TEST_PROJECT=no-database`), so the tenancy check is never skipped silently.
 */
const withoutDatabase = [
  "packages/schema/test/**/*.test.ts",
  "packages/testkit/test/**/*.test.ts",
  ...["Bundle", "Options", "Readme", "Retry"].map((name) => `packages/client/test/${name}.test.ts`),
  ...[
    "AddressGuard",
    "ComponentFileSelection",
    "Crypto",
    "ClaudeContent",
    "DataFolder",
    "Discovery",
    "DnsResolver",
    "GitHubClient",
    "HttpErrors",
    "McpInspection",
    "McpReadiness",
    "McpResolveRules",
    "McpSession",
    "McpToolRunner",
    "OutboundGuard",
    "Parsing",
    "SamlEngine",
    "RequestGuard",
    "ScimFilter",
    "ScimGroupPatch",
    "ScimPatch",
    "ScimProjection",
    "ServiceKeys",
    "TemplateSchemas",
    "TokenTiming",
    "WorkerRuntime"
  ].map((name) => `packages/server/test/${name}.test.ts`)
]

export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: {
    // Every answer the fast response encoding makes is also encoded by its schema and compared (a difference is a
    // 500): the whole suite checks `platform/ResponseEncoding.ts` against the schemas it stands in for.
    env: { ORGPLANE_CHECK_RESPONSE_ENCODING: "1" },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite runs on the main thread: one worker per core keeps each server responsive.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      {
        extends: true,
        test: {
          name: "database",
          include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...withoutDatabase],
          globalSetup: ["packages/testkit/src/globalSetup.ts"],
          setupFiles: ["packages/testkit/src/tenancySetup.ts", "packages/testkit/src/contractSetup.ts"]
        }
      },
      {
        extends: true,
        test: {
          name: "no-database",
          include: withoutDatabase,
          env: { ORGPLANE_TEST_PROJECT: "no-database" }
        }
      }
    ]
  }
})
