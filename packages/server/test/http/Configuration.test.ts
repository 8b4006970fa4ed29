/** Behaviour that depends on configuration: session lifetime, sign-up switch, bootstrap rate limit, default plan. */
import { environment } from "../../src/Environment.js"
import { layer as configLayer, ServerConfig, settingsConfig } from "../../src/platform/Config.js"
import type { ServerOptions } from "../../src/Server.js"
import type * as Durable from "../../src/platform/Durable.js"
import { calls, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"

const withServer = async (options: TestServer.Options, test: (url: string) => Promise<void>) => {
  const server = await TestServer.start(options)
  try {
    await test(server.url)
  } finally {
    await server.close()
  }
}

describe("configuration", () => {
  it("sessions expire after the configured lifetime", () => {
    const clock = new TestServer.ShiftedClock()
    return withServer({ sessionTtl: Duration.minutes(10), clock }, async (url) => {
      const user = await Http.signUp(url)
      expect((await Http.request(url, "GET", "/v1/me", { token: user.token })).status).toBe(200)
      clock.advance("9 minutes")
      expect((await Http.request(url, "GET", "/v1/me", { token: user.token })).status).toBe(200)
      clock.advance("61 seconds")
      const expired = await Http.request(url, "GET", "/v1/me", { token: user.token })
      expect(expired.status).toBe(401)
      expect(expired.body).toMatchObject({ error: "unauthorized", reason: "session_expired" })
    })
  })

  it("sign-up can be disabled, except for the instance's first account", () =>
    withServer({ signupEnabled: false }, async (url) => {
      await Http.signUp(url, "First")
      const response = await Http.request(url, "POST", "/v1/auth/sign-up", {
        body: { email: "x@example.com", password: "long enough password", name: "X" }
      })
      expect(response.status).toBe(403)
      expect(response.body).toEqual({ reason: "signup_disabled", message: "Sign-up is disabled on this instance." })
    }))

  it("bootstrap is rate-limited per client address, with Retry-After", () =>
    withServer({ bootstrapPerHour: 2 }, async (url) => {
      const { bootstrap } = calls(url)
      const create = () => bootstrap.workspace({ payload: { workspaceName: "Limited" } })
      expect((await create()).status).toBe(201)
      expect((await create()).status).toBe(201)
      const limited = await create()
      const refused = refusal(limited, 429)
      expect(refused).toMatchObject({ error: "rate_limited" })
      expect(Object.keys(refused).sort()).toEqual(["error", "message"])
      const retryAfter = Number(limited.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(3500)
      expect(retryAfter).toBeLessThanOrEqual(3600)
    }))

  it("new organizations get the configured default plan", () =>
    withServer({ defaultPlan: "team" }, async (url) => {
      const owner = await Http.owner(url)
      expect(owner.organization.plan).toBe("team")
    }))

  it("a configured operator organization is the operator: nobody claims another with the setup token", () =>
    withServer({ operatorOrganizationId: "org_01m7xsja0me4fs7gc4ed0s22av" }, async (url) => {
      const first = await Http.owner(url, "First")
      const response = await Http.request(url, "PATCH", `/v1/admin/organizations/${first.organization.id}/plan`, {
        token: first.token,
        body: { plan: "enterprise" }
      })
      expect(response.status).toBe(403)
      const claimed = await calls(url).admin.claimOperator({ token: first.token, payload: { setupToken: Http.SETUP_TOKEN } })
      expect(refusal(claimed, 409)).toMatchObject({ error: "operator_exists" })
    }))

  it("refuses a setup token shorter than 32 characters at start-up", async () => {
    const short = ConfigProvider.fromEnv({ env: { ORGPLANE_SETUP_TOKEN: "too-short" } })
    const read = await Effect.runPromise(Effect.result(ServerConfig.pipe(Effect.provide(configLayer({})), Effect.provideService(ConfigProvider.ConfigProvider, short))))
    expect(read._tag).toBe("Failure")
    expect(String(read._tag === "Failure" ? read.failure : "")).toContain("ORGPLANE_SETUP_TOKEN")
  })

  it("options given in code are plain values, on top of the environment", async () => {
    const environment = ConfigProvider.fromEnv({
      env: { DATABASE_URL: "postgres://env@127.0.0.1/env", ORGPLANE_PUBLIC_URL: "https://env.example.com" }
    })
    const read = (options: Parameters<typeof configLayer>[0]) =>
      Effect.runPromise(ServerConfig.pipe(Effect.provide(configLayer(options)), Effect.provideService(ConfigProvider.ConfigProvider, environment)))

    const given = await read({
      databaseUrl: "postgres://code@127.0.0.1/code",
      encryptionKeys: "k:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      sessionTtl: "7 days",
      dbConnectTimeout: 2500,
      operatorOrganizationId: "org_01m7xsja0me4fs7gc4ed0s22av",
      publicUrl: undefined
    })
    expect(Redacted.value(given.databaseUrl!)).toBe("postgres://code@127.0.0.1/code")
    expect(Redacted.value(given.encryptionKeys!)).toBe("k:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    expect(Duration.toMillis(given.sessionTtl)).toBe(Duration.toMillis(Duration.days(7)))
    expect(Duration.toMillis(given.dbConnectTimeout)).toBe(2500)
    expect(given.operatorOrganizationId).toBe("org_01m7xsja0me4fs7gc4ed0s22av")
    // Left undefined (or out): the environment's value.
    expect(given.publicUrl).toBe("https://env.example.com")

    const fromEnvironment = await read({ databaseUrl: " " })
    expect(Redacted.value(fromEnvironment.databaseUrl!)).toBe("postgres://env@127.0.0.1/env")
    expect(fromEnvironment.operatorOrganizationId).toBeUndefined()
  })

  it("the README's configuration table has every setting: its environment variable and its option", async () => {
    const readme = Fs.readFileSync(new URL("../../../../packages/server/README.md", import.meta.url), "utf8")
    const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| (?:`([\w.]+)`|—) \|/gm)].map(([, variable, option]) => [variable, option])
    expect(rows.map(([variable]) => variable)).toEqual(environment.map(([variable]) => variable))
    const settings = await Effect.runPromise(settingsConfig.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))))
    // The code host's options (ServerOptions) and the durable engine's runner address (`durable.cluster`).
    const codehost = ["codehostApiUrl", "codehostAppId", "codehostPrivateKey", "codehostWebhookSecret"] satisfies ReadonlyArray<keyof ServerOptions>
    const cluster = ["host", "listenHost", "port"] satisfies ReadonlyArray<keyof Durable.ClusterSettings>
    const dns = ["dnsServers", "dnsTimeout"] satisfies ReadonlyArray<keyof ServerOptions>
    const workerRuntime = ["workerRuntimeTimeout"] satisfies ReadonlyArray<keyof ServerOptions>
    const workerActivity = ["workerHeartbeatInterval", "workerOfflineAfter", "workerHeartbeatsPerMinute"] satisfies ReadonlyArray<keyof ServerOptions>
    const mcp = ["mcpPresetsFile", "mcpProbeTimeout"] satisfies ReadonlyArray<keyof ServerOptions>
    const mcpTool = ["mcpToolTimeout"] satisfies ReadonlyArray<keyof ServerOptions>
    const capability = ["capabilityTimeout"] satisfies ReadonlyArray<keyof ServerOptions>
    const templates = ["templateSchemasDir"] satisfies ReadonlyArray<keyof ServerOptions>
    const llm = ["llmCatalogFile", "llmConnectPerMinute"] satisfies ReadonlyArray<keyof ServerOptions>
    const saml = ["samlMetadataRefreshInterval"] satisfies ReadonlyArray<keyof ServerOptions>
    const auditStreams = ["auditStreamPollInterval", "auditStreamTimeout", "auditStreamBackoffBase", "auditStreamBackoffCap", "auditStreamSettle"] satisfies ReadonlyArray<keyof ServerOptions>
    const metrics = ["metricsToken", "metricsPort", "metricsHost", "metricsOrganizationLabels"] satisfies ReadonlyArray<keyof ServerOptions>
    const agents = ["mcp", "mcpAllowedOrigins"] satisfies ReadonlyArray<keyof ServerOptions>
    expect(rows.flatMap(([, option]) => option === undefined ? [] : [option]).sort()).toEqual(
      [...Object.keys(settings), ...codehost, ...dns, ...workerRuntime, ...workerActivity, ...mcp, ...mcpTool, ...capability, ...templates, ...llm, ...saml, ...auditStreams, ...metrics, ...agents, ...cluster.map((name) => `durable.cluster.${name}`)].sort()
    )
  })
})
