/**
 * The code host's settings: GitHub's API (or a GitHub Enterprise Server's), the GitHub App that installations
 * authenticate as, and the secret its webhooks are signed with. Environment variables, with code on top.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import { invalidSetting } from "../../platform/Config.js"

export interface CodeHostApp {
  readonly appId: string
  /** PEM (PKCS#1 as GitHub hands it out, or PKCS#8). */
  readonly privateKey: Redacted.Redacted<string>
}

export interface CodeHostSettings {
  /** The REST API's base URL, without a trailing slash (`https://ghe.example.com/api/v3` for Enterprise Server). */
  readonly apiUrl: string
  /** Absent: only token accounts work; installation accounts fail with `CodeHostNotConfigured`. */
  readonly app: CodeHostApp | undefined
  /** Absent: webhooks cannot be verified, so the receiver refuses them all. */
  readonly webhookSecret: Redacted.Redacted<string> | undefined
}

export class CodeHostConfig extends Context.Service<CodeHostConfig, CodeHostSettings>()("@orgplane/server/integrations/codehost/CodeHostConfig") {}

export const defaultApiUrl = "https://api.github.com"

/** The documented environment variables, in the style of platform/Config.ts's (for `serve --help` and the README). */
export const environment = [
  ["ORGPLANE_CODEHOST_API_URL", defaultApiUrl, "GitHub's REST API; for GitHub Enterprise Server, https://<host>/api/v3."],
  ["ORGPLANE_CODEHOST_APP_ID", "(unset)", "The GitHub App's id. Unset: only token accounts can connect."],
  ["ORGPLANE_CODEHOST_PRIVATE_KEY", "(unset)", "The GitHub App's private key (PEM; `\\n` escapes accepted)."],
  ["ORGPLANE_CODEHOST_PRIVATE_KEY_FILE", "(unset)", "A file holding the GitHub App's private key, instead of ORGPLANE_CODEHOST_PRIVATE_KEY."],
  ["ORGPLANE_CODEHOST_WEBHOOK_SECRET", "(unset)", "The GitHub App's webhook secret. Unset: webhooks are refused."]
] as const

/** Settings given in code (tests, an embedding host), as plain values; `undefined` keeps the environment's. */
export interface Options {
  readonly codehostApiUrl?: string | undefined
  readonly codehostAppId?: string | number | undefined
  readonly codehostPrivateKey?: string | Redacted.Redacted<string> | undefined
  readonly codehostWebhookSecret?: string | Redacted.Redacted<string> | undefined
}

const optional = <A>(config: Config.Config<A>) => Config.option(config).pipe(Config.map(Option.getOrUndefined))
const nonEmpty = (value: string | undefined) => value === undefined || value.trim() === "" ? undefined : value.trim()
const secretText = (value: string | Redacted.Redacted<string> | undefined) => {
  const text = value === undefined ? undefined : Redacted.isRedacted(value) ? Redacted.value(value) : value
  return nonEmpty(text)
}

/** Keys pasted into one-line variables arrive with `\n` written out: put the newlines back. */
export const unescapePem = (pem: string) => pem.replace(/\\r\\n|\\n/g, "\n")

/** A refused setting, named in its message (`ORGPLANE_X: …`). */
const invalid = invalidSetting

const apiUrlFrom = (value: string): Result.Result<string, Config.ConfigError> => {
  const trimmed = value.trim().replace(/\/+$/, "")
  let url: URL
  try {
    url = new URL(trimmed)
  } catch {
    return Result.fail(invalid("ORGPLANE_CODEHOST_API_URL", "must be an absolute http(s) URL"))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return Result.fail(invalid("ORGPLANE_CODEHOST_API_URL", "must be an absolute http(s) URL"))
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return Result.fail(invalid("ORGPLANE_CODEHOST_API_URL", "must not carry credentials, a query or a fragment"))
  }
  return Result.succeed(trimmed)
}

const raw = Config.all({
  apiUrl: Config.String("ORGPLANE_CODEHOST_API_URL").pipe(Config.withDefault(defaultApiUrl)),
  appId: optional(Config.String("ORGPLANE_CODEHOST_APP_ID")),
  privateKey: optional(Config.Redacted("ORGPLANE_CODEHOST_PRIVATE_KEY")),
  privateKeyFile: optional(Config.String("ORGPLANE_CODEHOST_PRIVATE_KEY_FILE")),
  webhookSecret: optional(Config.Redacted("ORGPLANE_CODEHOST_WEBHOOK_SECRET"))
})

/** The `code` of a failed file system call (`ENOENT`, `EACCES`, ...), else the error as text. */
const codeOf = (error: unknown) => {
  const code = typeof error === "object" && error !== null ? Reflect.get(error, "code") : undefined
  return typeof code === "string" ? code : String(error)
}

/** Reads the key file named by the environment; a file that cannot be read is a configuration error. */
const readKeyFile = (path: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(path, "utf8"),
    catch: (error) => invalid("ORGPLANE_CODEHOST_PRIVATE_KEY_FILE", `cannot be read: ${codeOf(error)}`)
  })

/** Half an app (an id without a key, or the reverse) or a key that is not one fails at start-up, not at the first sync. */
const appFrom = (appId: string | undefined, privateKey: string | undefined): Result.Result<CodeHostApp | undefined, Config.ConfigError> => {
  if (appId === undefined && privateKey === undefined) return Result.succeed(undefined)
  if (appId === undefined) return Result.fail(invalid("ORGPLANE_CODEHOST_APP_ID", "is required with a private key"))
  if (privateKey === undefined) return Result.fail(invalid("ORGPLANE_CODEHOST_PRIVATE_KEY", "is required with an app id (or ORGPLANE_CODEHOST_PRIVATE_KEY_FILE)"))
  const pem = unescapePem(privateKey).trim()
  try {
    const key = NodeCrypto.createPrivateKey(pem)
    if (key.asymmetricKeyType !== "rsa") return Result.fail(invalid("ORGPLANE_CODEHOST_PRIVATE_KEY", "must be an RSA key"))
  } catch {
    return Result.fail(invalid("ORGPLANE_CODEHOST_PRIVATE_KEY", "is not a PEM private key"))
  }
  return Result.succeed({ appId, privateKey: Redacted.make(pem) })
}

/** The settings from the environment, with `options` on top. */
export const settings = Effect.fn("CodeHostConfig.settings")(function*(options: Options = {}) {
  const env = yield* raw
  const apiUrl = yield* Effect.fromResult(apiUrlFrom(options.codehostApiUrl ?? env.apiUrl))
  const appId = nonEmpty(options.codehostAppId === undefined ? env.appId : String(options.codehostAppId))
  let privateKey = secretText(options.codehostPrivateKey) ?? secretText(env.privateKey)
  const file = nonEmpty(env.privateKeyFile)
  if (privateKey === undefined && file !== undefined) privateKey = nonEmpty(yield* readKeyFile(file))
  const app = yield* Effect.fromResult(appFrom(appId, privateKey))
  const webhookSecret = secretText(options.codehostWebhookSecret) ?? secretText(env.webhookSecret)
  return { apiUrl, app, webhookSecret: webhookSecret === undefined ? undefined : Redacted.make(webhookSecret) } satisfies CodeHostSettings
})

export const layer = (options: Options = {}) => Layer.effect(CodeHostConfig, settings(options))
