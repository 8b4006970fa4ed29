/**
 * The code host's settings: the documented variables read (a key with \\n escapes, or from a file; options on top),
 * and every case of a table read or refused, naming the variable, in the words an operator sees.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import * as CodeHostConfig from "../src/integrations/codehost/CodeHostConfig.js"

const key = (name: string) => NodeFs.readFileSync(new URL(`fixtures/codehost/${name}`, import.meta.url), "utf8")
/** An RSA key (PKCS #1), another (PKCS #8) and a P-256 key (PKCS #8), each PEM with its final newline. */
const pem = key("app-pkcs1.pem")
const pkcs8 = key("app-pkcs8.pem")
const ecKey = key("ec-p256.pem")

const read = (env: Record<string, string>, options: CodeHostConfig.Options = {}) =>
  Effect.result(CodeHostConfig.settings(options)).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

/** Settings as plain values, secrets opened. */
const plain = (settings: { apiUrl: string; app: { appId: string; privateKey: unknown } | undefined; webhookSecret: unknown }, open: (secret: unknown) => string) => ({
  apiUrl: settings.apiUrl,
  app: settings.app === undefined ? undefined : { appId: settings.app.appId, privateKey: open(settings.app.privateKey) },
  webhookSecret: settings.webhookSecret === undefined ? undefined : open(settings.webhookSecret)
})
const openPort = (secret: unknown) => Redacted.isRedacted(secret) ? String(Redacted.value(secret)) : "(not redacted)"

describe("CodeHostConfig", () => {
  it.effect("reads the documented variables: a key with \\n escapes, or from a file", () =>
    Effect.gen(function*() {
      const defaults = yield* read({})
      expect(Result.getOrThrow(defaults)).toMatchObject({ apiUrl: "https://api.github.com", app: undefined, webhookSecret: undefined })
      const escaped = Result.getOrThrow(yield* read({
        ORGPLANE_CODEHOST_API_URL: "https://ghe.example.com/api/v3/",
        ORGPLANE_CODEHOST_APP_ID: "123",
        ORGPLANE_CODEHOST_PRIVATE_KEY: pem.replace(/\n/g, "\\n"),
        ORGPLANE_CODEHOST_WEBHOOK_SECRET: "s3cret"
      }))
      expect(escaped.apiUrl).toBe("https://ghe.example.com/api/v3")
      expect(escaped.app?.appId).toBe("123")
      expect(Redacted.value(escaped.app!.privateKey)).toBe(pem.trim())
      expect(Redacted.value(escaped.webhookSecret!)).toBe("s3cret")
      const dir = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-key-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true })))
      yield* Effect.promise(() => Fs.writeFile(Path.join(dir, "app.pem"), pem))
      const fromFile = Result.getOrThrow(yield* read({ ORGPLANE_CODEHOST_APP_ID: "123", ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: Path.join(dir, "app.pem") }))
      expect(Redacted.value(fromFile.app!.privateKey)).toBe(pem.trim())
      // Code wins over the environment.
      const overridden = Result.getOrThrow(
        yield* read({ ORGPLANE_CODEHOST_API_URL: "https://ghe.example.com/api/v3" }, { codehostApiUrl: "http://127.0.0.1:9/api", codehostAppId: 9, codehostPrivateKey: pem })
      )
      expect(overridden).toMatchObject({ apiUrl: "http://127.0.0.1:9/api", app: { appId: "9" } })
      expect(CodeHostConfig.environment.map(([name]) => name)).toEqual([
        "ORGPLANE_CODEHOST_API_URL",
        "ORGPLANE_CODEHOST_APP_ID",
        "ORGPLANE_CODEHOST_PRIVATE_KEY",
        "ORGPLANE_CODEHOST_PRIVATE_KEY_FILE",
        "ORGPLANE_CODEHOST_WEBHOOK_SECRET"
      ])
    }).pipe(Effect.scoped))

  it.effect("refuses half an app, a key that is not one, an unreadable key file and a URL with credentials", () =>
    Effect.gen(function*() {
      const refused = (env: Record<string, string>) => Effect.map(read(env), Result.isFailure)
      expect(yield* refused({ ORGPLANE_CODEHOST_APP_ID: "1" })).toBe(true)
      expect(yield* refused({ ORGPLANE_CODEHOST_PRIVATE_KEY: pem })).toBe(true)
      expect(yield* refused({ ORGPLANE_CODEHOST_APP_ID: "1", ORGPLANE_CODEHOST_PRIVATE_KEY: "not a key" })).toBe(true)
      expect(yield* refused({ ORGPLANE_CODEHOST_APP_ID: "1", ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: "/nonexistent/app.pem" })).toBe(true)
      expect(yield* refused({ ORGPLANE_CODEHOST_API_URL: "https://user:pass@ghe.example.com/api/v3" })).toBe(true)
      expect(yield* refused({ ORGPLANE_CODEHOST_API_URL: "ftp://ghe.example.com" })).toBe(true)
    }))

  it.effect("reads each case of the table, or refuses it naming the variable", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-key-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true })))
      const keyFile = Path.join(dir, "app.pem")
      const blankFile = Path.join(dir, "blank.pem")
      yield* Effect.promise(() => Promise.all([Fs.writeFile(keyFile, `\n${pkcs8}\n`), Fs.writeFile(blankFile, "  \n")]))
      const cases: ReadonlyArray<readonly [Record<string, string>, CodeHostConfig.Options]> = [
        [{}, {}],
        [{ ORGPLANE_CODEHOST_API_URL: " https://ghe.example.com/api/v3/// " }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "http://127.0.0.1:8080" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "not a url" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "ghe.example.com/api/v3" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "ftp://ghe.example.com" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "https://user:pass@ghe.example.com/api/v3" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "https://ghe.example.com/api/v3?x=1" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "https://ghe.example.com/api/v3#top" }, {}],
        [{ ORGPLANE_CODEHOST_API_URL: "ftp://ghe.example.com" }, { codehostApiUrl: "https://api.example.com/" }],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: pem }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: " 42 ", ORGPLANE_CODEHOST_PRIVATE_KEY: pem.replace(/\n/g, "\\r\\n") }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: pkcs8 }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: ecKey }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: "not a key" }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42" }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "  " }, {}],
        [{ ORGPLANE_CODEHOST_PRIVATE_KEY: pem }, {}],
        [{ ORGPLANE_CODEHOST_PRIVATE_KEY: "  " }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: keyFile }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: blankFile }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: Path.join(dir, "missing.pem") }, {}],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: pem, ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: Path.join(dir, "missing.pem") }, {}],
        [{ ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: keyFile }, { codehostAppId: 7 }],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: "not a key" }, { codehostPrivateKey: Redacted.make(pem) }],
        [{ ORGPLANE_CODEHOST_APP_ID: "42", ORGPLANE_CODEHOST_PRIVATE_KEY: pem }, { codehostAppId: "" }],
        [{ ORGPLANE_CODEHOST_WEBHOOK_SECRET: " s3cret " }, {}],
        [{ ORGPLANE_CODEHOST_WEBHOOK_SECRET: "   " }, {}],
        [{ ORGPLANE_CODEHOST_WEBHOOK_SECRET: "from the environment" }, { codehostWebhookSecret: "from code" }],
        [{ ORGPLANE_CODEHOST_WEBHOOK_SECRET: "from the environment" }, { codehostWebhookSecret: " " }]
      ]
      // What each case reads (its settings, secrets opened) or the words of its refusal.
      const expected: ReadonlyArray<{ readonly settings: unknown } | { readonly refused: string }> = [
        { settings: { apiUrl: "https://api.github.com" } },
        { settings: { apiUrl: "https://ghe.example.com/api/v3" } },
        { settings: { apiUrl: "http://127.0.0.1:8080" } },
        { refused: "ORGPLANE_CODEHOST_API_URL: must be an absolute http(s) URL" },
        { refused: "ORGPLANE_CODEHOST_API_URL: must be an absolute http(s) URL" },
        { refused: "ORGPLANE_CODEHOST_API_URL: must be an absolute http(s) URL" },
        { refused: "ORGPLANE_CODEHOST_API_URL: must not carry credentials, a query or a fragment" },
        { refused: "ORGPLANE_CODEHOST_API_URL: must not carry credentials, a query or a fragment" },
        { refused: "ORGPLANE_CODEHOST_API_URL: must not carry credentials, a query or a fragment" },
        { settings: { apiUrl: "https://api.example.com" } },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "42", privateKey: pem.trim() } } },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "42", privateKey: pem.trim() } } },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "42", privateKey: pkcs8.trim() } } },
        { refused: "ORGPLANE_CODEHOST_PRIVATE_KEY: must be an RSA key" },
        { refused: "ORGPLANE_CODEHOST_PRIVATE_KEY: is not a PEM private key" },
        { refused: "ORGPLANE_CODEHOST_PRIVATE_KEY: is required with an app id (or ORGPLANE_CODEHOST_PRIVATE_KEY_FILE)" },
        { settings: { apiUrl: "https://api.github.com" } },
        { refused: "ORGPLANE_CODEHOST_APP_ID: is required with a private key" },
        { settings: { apiUrl: "https://api.github.com" } },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "42", privateKey: pkcs8.trim() } } },
        { refused: "ORGPLANE_CODEHOST_PRIVATE_KEY: is required with an app id (or ORGPLANE_CODEHOST_PRIVATE_KEY_FILE)" },
        { refused: "ORGPLANE_CODEHOST_PRIVATE_KEY_FILE: cannot be read: ENOENT" },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "42", privateKey: pem.trim() } } },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "7", privateKey: pkcs8.trim() } } },
        { settings: { apiUrl: "https://api.github.com", app: { appId: "42", privateKey: pem.trim() } } },
        { refused: "ORGPLANE_CODEHOST_APP_ID: is required with a private key" },
        { settings: { apiUrl: "https://api.github.com", webhookSecret: "s3cret" } },
        { settings: { apiUrl: "https://api.github.com" } },
        { settings: { apiUrl: "https://api.github.com", webhookSecret: "from code" } },
        { settings: { apiUrl: "https://api.github.com", webhookSecret: "from the environment" } }
      ]
      expect(expected).toHaveLength(cases.length)
      for (const [index, [env, options]] of cases.entries()) {
        const label = JSON.stringify([env, { ...options, codehostPrivateKey: options.codehostPrivateKey === undefined ? undefined : "(key)" }]).slice(0, 300)
        const settings = yield* read(env, options)
        const outcome = expected[index]!
        if ("settings" in outcome) expect(Result.isSuccess(settings) && plain(settings.success, openPort), label).toEqual(outcome.settings)
        else expect(Result.isFailure(settings) && settings.failure.message, label).toContain(outcome.refused)
      }
    }).pipe(Effect.scoped))

  it("puts back the newlines of a key pasted into one line", () => {
    expect(["a\\nb", "a\\r\\nb\\n", "no escapes\n", "\\\\n"].map(CodeHostConfig.unescapePem)).toEqual(["a\nb", "a\nb\n", "no escapes\n", "\\\n"])
  })
})
