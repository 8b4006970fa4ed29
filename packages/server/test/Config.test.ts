/**
 * platform/Config.ts: the server's settings read from the environment (the defaults, values, refusals naming the
 * variable); the variables it documents are `orgplane serve --help`'s (the CLI's Usage.test.ts holds its help pages).
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Config from "../src/platform/Config.js"

const read = (env: Record<string, string>) =>
  Effect.runPromiseExit(
    Effect.gen(function*() {
      return yield* Config.settingsConfig
    }).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
  )

const settings = async (env: Record<string, string>) => {
  const exit = await read(env)
  if (exit._tag === "Failure") throw new Error(String(exit.cause))
  return exit.value
}

const refusal = async (env: Record<string, string>) => {
  const exit = await read(env)
  if (exit._tag === "Success") throw new Error(`accepted ${JSON.stringify(env)}`)
  return String(exit.cause)
}

describe("Config", () => {
  it("reads the defaults", async () => {
    const read = await settings({})
    expect(read.port).toBe(8787)
    expect(read.defaultPlan).toBe("free")
    expect(Duration.toMillis(read.sessionTtl)).toBe(Duration.toMillis(Duration.days(30)))
    expect(read.passwordCost).toBe(15)
    expect(read.logLevel).toBe("info")
    expect(read.logFormat).toBe("pretty")
    expect(read.maxBodyBytes).toBe(Config.defaultMaxBodyBytes)
    expect(read.setupToken).toBeUndefined()
    expect(read.smtpUrl).toBeUndefined()
  })

  it("reads the environment", async () => {
    const read = await settings({
      ORGPLANE_DEFAULT_PLAN: "team",
      ORGPLANE_LOG_LEVEL: " WARN ",
      ORGPLANE_SESSION_TTL: "7 days",
      ORGPLANE_SETUP_TOKEN: "x".repeat(40),
      ORGPLANE_SMTP_URL: "smtp://u:p@mail.example:587",
      ORGPLANE_MAIL_FROM: " orgplane <no-reply@example.com> "
    })
    expect(read.defaultPlan).toBe("team")
    expect(read.logLevel).toBe("warn")
    expect(Duration.toMillis(read.sessionTtl)).toBe(Duration.toMillis(Duration.days(7)))
    expect(read.setupToken && Redacted.value(read.setupToken)).toBe("x".repeat(40))
    expect(read.mailFrom).toBe("orgplane <no-reply@example.com>")
  })

  it("takes a blank secret for unset", async () => {
    const read = await settings({ ORGPLANE_SETUP_TOKEN: "  ", DATABASE_URL: "", ORGPLANE_SMTP_URL: " " })
    expect(read.setupToken).toBeUndefined()
    expect(read.databaseUrl).toBeUndefined()
    expect(read.smtpUrl).toBeUndefined()
  })

  it.each([
    [{ ORGPLANE_DEFAULT_PLAN: "gold" }, "must be free, team or enterprise"],
    [{ ORGPLANE_PASSWORD_COST: "9" }, "must be between 10 and 20"],
    [{ ORGPLANE_SESSION_IDLE_TIMEOUT: "0 seconds" }, "must be a positive duration"],
    [{ ORGPLANE_SIGN_IN_WINDOW: "2 days" }, "must be at most 1 day"],
    [{ ORGPLANE_API_KEYS_PER_MEMBER: "0" }, "must be a whole number, at least 1"],
    [{ ORGPLANE_LOG_FORMAT: "xml" }, "must be pretty, json or logfmt"],
    [{ ORGPLANE_SETUP_TOKEN: "short" }, "ORGPLANE_SETUP_TOKEN must be at least 32 characters"],
    [{ ORGPLANE_SMTP_URL: "http://mail.example" }, "ORGPLANE_SMTP_URL must be an smtp:// or smtps:// URL"],
    [{ ORGPLANE_SMTP_URL: "smtp://mail.example" }, "ORGPLANE_MAIL_FROM must be set with ORGPLANE_SMTP_URL"],
    [{ ORGPLANE_TELEMETRY_RETENTION_MONTHS: "121" }, "from 1 to 120"],
    [{ ORGPLANE_MAX_BODY_BYTES: "0" }, "must be a positive number of bytes"]
  ])("refuses %j", async (env, message) => {
    expect(await refusal(env)).toContain(message)
  })

  it("puts options given in code on top of the environment", async () => {
    const read = Config.withOptions(await settings({ ORGPLANE_PORT: "9000" }), {
      sessionTtl: "1 hour",
      setupToken: "y".repeat(32),
      signupEnabled: false,
      port: undefined
    })
    expect(read.port).toBe(9000)
    expect(read.signupEnabled).toBe(false)
    expect(Duration.toMillis(read.sessionTtl)).toBe(3_600_000)
    expect(read.setupToken && Redacted.value(read.setupToken)).toBe("y".repeat(32))
    expect(Config.publicUrl({ ...read, publicUrl: "https://op.example/" })).toBe("https://op.example")
    expect(Config.publicUrl(read)).toBe("http://127.0.0.1:9000")
    expect(Config.publicUrl({ ...read, basePath: "/orgplane" })).toBe("http://127.0.0.1:9000/orgplane")
    expect(Config.publicUrl({ ...read, basePath: "/orgplane", publicUrl: "https://op.example/orgplane" })).toBe("https://op.example/orgplane")
  })

  it("reads the mount path without its trailing slash, the root as empty, and refuses what is not a path", async () => {
    expect((await settings({})).basePath).toBe("")
    expect((await settings({ ORGPLANE_BASE_PATH: "/orgplane/" })).basePath).toBe("/orgplane")
    expect((await settings({ ORGPLANE_BASE_PATH: "/" })).basePath).toBe("")
    expect(await refusal({ ORGPLANE_BASE_PATH: "orgplane" })).toContain("must be a path starting with /")
    expect(await refusal({ ORGPLANE_BASE_PATH: "/a//b" })).toContain("must be a path starting with /")
    expect(Config.withOptions(await settings({}), { basePath: "/api/orgplane/" }).basePath).toBe("/api/orgplane")
    const given = await Effect.runPromiseExit(
      Effect.provideService(Effect.scoped(Layer.build(Config.layer({ basePath: "https://host/orgplane" }))), ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
    )
    expect(given._tag === "Failure" ? String(given.cause) : "accepted").toContain("basePath: must be a path starting with /")
  })
})
