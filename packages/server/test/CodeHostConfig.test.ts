/**
 * The code host's settings: the original's two tests (GitHubClient.test.ts's `CodeHostConfig`), and the port held to
 * the Effect 3 module on the same environments and options: the same settings read, the same ones refused, naming
 * the same variable with the same words.
 *
 * The original's side is read from the recorded fixture (test/fixtures/effect3/CodeHostConfig.json, support/Effect3.ts):
 * what 0.1.0's module answered, each value under its function and inputs. The inputs are the ones the recorded keys
 * name: fixed keys (test/fixtures/codehost/*.pem, test keys made once, for nothing else), and a case's temporary
 * folder, written `<folder>` in the key and the value and read back as the run's.
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
import * as Recorded from "./support/Effect3.js"

/** The original's answers, recorded (support/Effect3.ts). */
const effect3 = Recorded.originals("CodeHostConfig")

const key = (name: string) => NodeFs.readFileSync(new URL(`fixtures/codehost/${name}`, import.meta.url), "utf8")
/** An RSA key (PKCS #1), another (PKCS #8) and a P-256 key (PKCS #8), each PEM with its final newline. */
const pem = key("app-pkcs1.pem")
const pkcs8 = key("app-pkcs8.pem")
const ecKey = key("ec-p256.pem")

const read = (env: Record<string, string>, options: CodeHostConfig.Options = {}) =>
  Effect.result(CodeHostConfig.settings(options)).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

/** Settings as plain values, secrets opened, for comparing the port's with the original's. */
const plain = (settings: { apiUrl: string; app: { appId: string; privateKey: unknown } | undefined; webhookSecret: unknown }, open: (secret: unknown) => string) => ({
  apiUrl: settings.apiUrl,
  app: settings.app === undefined ? undefined : { appId: settings.app.appId, privateKey: open(settings.app.privateKey) },
  webhookSecret: settings.webhookSecret === undefined ? undefined : open(settings.webhookSecret)
})
const openPort = (secret: unknown) => Redacted.isRedacted(secret) ? String(Redacted.value(secret)) : "(not redacted)"

/** The options the original was given: the port's, secrets opened (its options took its own Redacted); the recorded keys name them. */
interface OriginalOptions {
  readonly codehostApiUrl?: string | undefined
  readonly codehostAppId?: string | number | undefined
  readonly codehostPrivateKey?: string | undefined
  readonly codehostWebhookSecret?: string | undefined
}

/** What the original read, as recorded: its settings as plain values, secrets opened, or its refusal (`_op`, and the words of InvalidData). */
type OriginalOutcome =
  | { readonly _tag: "Right"; readonly settings: ReturnType<typeof plain> }
  | { readonly _tag: "Left"; readonly _op: string; readonly words: string }

const folderMark = "<folder>"
/** `text` with every `from` written `to`. */
const swapText = (text: string, from: string, to: string) => text.split(from).join(to)

/** The original's outcome on `env` and `options` (recorded; `folder` written `<folder>` in the key and the value). */
const readOriginal = async (env: Record<string, string>, options: OriginalOptions, folder: string): Promise<OriginalOutcome> => {
  const outcome = await effect3.await<OriginalOutcome>(Recorded.call("settings", JSON.parse(swapText(JSON.stringify(env), folder, folderMark)), options))
  return outcome._tag === "Left" ? { ...outcome, words: swapText(outcome.words, folderMark, folder) } : outcome
}

describe("CodeHostConfig", () => {
  it("documents the same variables as the original, in the same words", () => {
    expect(CodeHostConfig.environment).toEqual(effect3("environment"))
    expect(CodeHostConfig.defaultApiUrl).toBe(effect3("defaultApiUrl"))
  })

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

  it.effect("reads and refuses what the original reads and refuses, naming the same variable in the same words", () =>
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
      for (const [env, options] of cases) {
        const label = JSON.stringify([env, { ...options, codehostPrivateKey: options.codehostPrivateKey === undefined ? undefined : "(key)" }]).slice(0, 300)
        // The original's options took its own Redacted: a port's one was given to it opened.
        const originalOptions: OriginalOptions = {
          codehostApiUrl: options.codehostApiUrl,
          codehostAppId: options.codehostAppId,
          codehostPrivateKey: Redacted.isRedacted(options.codehostPrivateKey) ? Redacted.value(options.codehostPrivateKey) : options.codehostPrivateKey,
          codehostWebhookSecret: Redacted.isRedacted(options.codehostWebhookSecret) ? Redacted.value(options.codehostWebhookSecret) : options.codehostWebhookSecret
        }
        const [port, original] = [yield* read(env, options), yield* Effect.promise(() => readOriginal(env, originalOptions, dir))]
        if (original._tag === "Right") {
          expect(Result.isSuccess(port) && plain(port.success, openPort), label).toEqual(original.settings)
        } else {
          expect(original._op, label).toBe("InvalidData")
          expect(Result.isFailure(port) && port.failure.message, label).toContain(original.words)
        }
      }
    }).pipe(Effect.scoped))

  it("puts back the newlines of a key pasted into one line", () => {
    for (const text of ["a\\nb", "a\\r\\nb\\n", "no escapes\n", "\\\\n"]) {
      expect(CodeHostConfig.unescapePem(text)).toBe(effect3(Recorded.call("unescapePem", text)))
    }
  })
})
