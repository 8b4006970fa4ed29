/**
 * What can go wrong in a command, and how each failure is reported: a one-line message on stderr (or the API's
 * error body as JSON with `--json`) and a stable exit code (see the README).
 */
import { unreachableMessage } from "@orgplane/client"
import { errorResponseOf, InvalidRequest, RateLimited, SsoSignInFailed, Unauthorized } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Output from "./Output.js"
import { VERSION } from "./Version.js"

export const ExitCodes = {
  ok: 0,
  error: 1,
  usage: 2,
  unauthenticated: 3,
  notFound: 4,
  connection: 5
} as const

/** A flag or argument is missing or invalid in a way the parser could not see. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** No credential for the target server: nothing to send. */
export class NotAuthenticated extends Data.TaggedError("NotAuthenticated")<{
  readonly url: string
  readonly profile: string
}> {}

/**
 * The server could not be reached at the CLI's default address (`http://127.0.0.1:8787`), which the command went to
 * because no `--url`, `ORGPLANE_URL` or profile named another: the message says so.
 */
export class DefaultUnreachable extends Data.TaggedError("DefaultUnreachable")<{
  readonly cause: unknown
  readonly profile: string
}> {}

/** The server refused the credential the command sent (401): which one it was, for the hint. */
export class Rejected extends Data.TaggedError("Rejected")<{
  readonly cause: unknown
  readonly kind: "token" | "apiKey"
  readonly source: "flag" | "environment" | "profile"
  readonly profile: string
}> {}

/** What answers at the target URL is not an orgplane server (its `/health` is not orgplane's). */
export class NotOrgplane extends Data.TaggedError("NotOrgplane")<{
  readonly url: string
  /** What it answered `GET /health` with, when it answered HTTP. */
  readonly status: number | undefined
}> {}

/** An orgplane server answered with something this CLI cannot read: another version, or a bug. */
export class UnreadableAnswer extends Data.TaggedError("UnreadableAnswer")<{
  readonly url: string
  readonly serverVersion: string
  readonly cause: unknown
}> {}

/**
 * A response the client could not decode: a body of the wrong shape for its status, or a status the endpoint does
 * not have. Inputs are validated before anything is sent, so a parse error here is always a response's.
 */
export const isUnreadableResponse = (error: unknown) =>
  Schema.isSchemaError(error) ||
  (HttpClientError.isHttpClientError(error) && error.reason._tag === "DecodeError")

/**
 * `auth login` was refused: the server does not say which of the two was wrong. `refusal` is its answer, whose body
 * (with its `reason`) `--json` prints as the server sent it.
 */
export class WrongPassword extends Data.TaggedError("WrongPassword")<{ readonly refusal: Unauthorized }> {}

/** The profile file cannot be read or written. */
export class ProfileError extends Data.TaggedError("ProfileError")<{ readonly path: string; readonly message: string }> {}

/** A command could not do its job, for a reason it explains (`error` is the JSON name, for example `port_in_use`). */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly error: string; readonly message: string }> {}

/** Already reported: carries only the exit code the process should end with. */
export class Reported extends Data.TaggedError("Reported")<{ readonly code: number }> {}

interface Report {
  readonly code: number
  readonly message: string
  /** What `--json` prints on stderr: the API's own error body when there is one. */
  readonly body: unknown
}

const local = (code: number, error: string, message: string): Report => ({ code, message, body: { error, message } })

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return url
  }
}

const codeForStatus = (status: number) =>
  status === 401 ? ExitCodes.unauthenticated : status === 404 ? ExitCodes.notFound : ExitCodes.error

const hintFor = (status: number, error: string, detail?: string, body: Record<string, unknown> = {}): string | undefined => {
  if (error === "needs_connection" || error === "suite_not_configured") {
    // `needs_connection` names the suite and the reason; `suite_not_configured` (connect) names the suite in its message.
    const suite = typeof body.suite === "string" ? body.suite : /suite-[ab]/.exec(detail ?? "")?.[0] ?? "<suite>"
    if (error === "suite_not_configured" || body.reason === "suite_not_configured" || body.reason === "feature_disabled") {
      return `ask an owner or admin to configure it with 'orgplane connections ${suite} client set'`
    }
    return suite === "<suite>"
      ? "connect with 'orgplane connections suite-a connect' (mail) or 'orgplane connections suite-b connect' (calendar)"
      : `run 'orgplane connections ${suite} connect'`
  }
  if (error === "sso_sign_in_failed") return "sign in again with 'orgplane auth login --sso', or ask an admin of your organization about the code"
  if (status === 401) return "log in with 'orgplane auth login'"
  if (error === "session_required") return "this needs a session: run 'orgplane auth login' instead of using an API key"
  // A caller in no organization is told what to do by the server's message, which names the commands.
  if (error === "organization_not_found") {
    return detail?.includes("orgplane orgs create") === true ? undefined : "create one with 'orgplane orgs create <name>' or pick one with 'orgplane orgs switch <id>'"
  }
  if (error === "insufficient_role") {
    // The server's message names the role the action needs: who to ask follows from it.
    return /requires the owner role/.test(detail ?? "") ? "ask an owner of the organization" : "ask an owner or admin of the organization"
  }
  if (error === "operator_only") return "switch to the operator organization ('orgplane orgs switch <id>') as one of its owners or admins"
  return undefined
}

/** A client error's reason as the messages name it (`Transport`, `Decode`), from its class's name (`TransportError`). */
const reasonName = (tag: string) => tag.replace(/Error$/, "")

/** A `Retry-After` as a person reads it: seconds up to a minute and a half, then whole minutes (rounded up). */
export const waitFor = (seconds: number) => seconds <= 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`

const detailsOf = (error: InvalidRequest) =>
  error.details.map((detail) => detail.path.length === 0 ? detail.message : `${detail.path.join(".")}: ${detail.message}`).join("; ")

/** The status an error's wire schema declares (`HttpApiSchema.status`); Effect 4 keeps its reader internal. */
const statusOf = (ast: SchemaAST.AST) => SchemaAST.resolveAt<number>("httpApiStatus")(ast) ?? ast.context?.annotations?.httpApiStatus ?? 500

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** An error the API declares: its wire body, its status, and a message built from its members. */
const apiReport = (error: object, wire: Schema.Top): Report => {
  // Error wire schemas need no services: they are plain transformations.
  const encoded: unknown = Schema.encodeUnknownSync(wire as Schema.Codec<unknown, unknown>)(error)
  const body = isRecord(encoded) ? encoded : {}
  const status = statusOf(wire.ast)
  const name = String(body.error ?? body.reason ?? "error")
  const detail = error instanceof InvalidRequest
    ? detailsOf(error)
    : error instanceof SsoSignInFailed
    ? `${error.code}: ${error.message}`
    : typeof body.message === "string"
    ? body.message
    : undefined
  const retry = error instanceof RateLimited && error.retryAfterSeconds !== undefined
    ? `retry in ${waitFor(error.retryAfterSeconds)}`
    : undefined
  const hint = retry ?? hintFor(status, name, detail, body)
  return {
    code: codeForStatus(status),
    message: `${name} (${status})${detail ? `: ${detail}` : ""}${hint ? ` — ${hint}` : ""}`,
    body
  }
}

/** A status the API does not declare for this endpoint (a 500, a proxy's 502): show what the server said. */
const statusReport = (error: HttpClientError.StatusCodeError) =>
  Effect.gen(function*() {
    const status = error.response.status
    const text = yield* Effect.orElseSucceed(error.response.text, () => "")
    let body: unknown = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    const fields = isRecord(body) ? body : {}
    const name = typeof fields.error === "string" ? fields.error : "http_error"
    const detail = typeof fields.message === "string" ? fields.message : text.slice(0, 200).replace(/\s+/g, " ").trim()
    return {
      code: codeForStatus(status),
      message: `${name} (${status})${detail ? `: ${detail}` : ""}`,
      body: body ?? { error: name, status, message: detail }
    } satisfies Report
  })

/**
 * Where a refused credential came from, why the server refused it (its 401's `reason`, in the CLI's terms; a reason
 * this CLI does not know by the server's own `message`; neither, a wording that guesses nothing), and what to do.
 */
const rejectedHint = (error: Rejected) => {
  const where = error.source === "flag"
    ? `the ${error.kind === "token" ? "--token" : "--api-key"} flag`
    : error.source === "environment"
    ? error.kind === "token" ? "ORGPLANE_TOKEN" : "ORGPLANE_API_KEY"
    : `profile '${error.profile}'`
  const reason = error.cause instanceof Unauthorized ? error.cause.reason : undefined
  const told = error.cause instanceof Unauthorized && error.cause.message.trim() !== ""
    ? `was not accepted (${error.cause.message.trim().replace(/\.$/, "")})`
    : "was not accepted (unknown, expired or revoked)"
  if (error.kind === "token") {
    const why = reason === "session_unknown"
      ? "is not a session this server issued"
      : reason === "session_expired"
      ? "has expired"
      : reason === "session_revoked"
      ? "was signed out or revoked"
      : told
    return `the session token from ${where} ${why}: log in again with 'orgplane auth login'`
  }
  const why = reason === "api_key_unknown"
    ? "was revoked or never existed"
    : reason === "api_key_expired"
    ? "has expired"
    : reason === "api_key_inactive"
    ? "no longer acts for anyone (its member was removed or suspended, or its organization deleted)"
    : told
  return `the API key from ${where} ${why}: create a new one with 'orgplane api-keys create <name>' (as an owner or admin)`
}

/** A usage error's report: exit code 2, `{"error": "usage", "message"}` with `--json`. */
export const usageReport = (error: UsageError): Report => local(ExitCodes.usage, "usage", error.message)

/** Turns any failure of a command into its report. */
export const describe = (error: unknown): Effect.Effect<Report> =>
  Effect.gen(function*() {
    if (error instanceof Rejected) {
      // The server's message words the same reason for an API caller: the hint says it in the CLI's terms.
      const report = yield* describe(error.cause)
      return { ...report, message: `${report.message.replace(/^(.*?\(\d{3}\)).*$/s, "$1")} — ${rejectedHint(error)}` }
    }
    if (error instanceof DefaultUnreachable) {
      const report = yield* describe(error.cause)
      return {
        ...report,
        message: `${report.message} — this is the CLI's default address: no --url, ORGPLANE_URL or profile '${error.profile}' names a server (pass --url, or set ORGPLANE_URL)`
      }
    }
    const wire = errorResponseOf(error)
    if (wire !== undefined) return apiReport(error as object, wire)
    if (error instanceof UsageError) return usageReport(error)
    if (error instanceof CommandFailed) return local(ExitCodes.error, error.error, error.message)
    if (error instanceof NotAuthenticated) {
      return local(
        ExitCodes.unauthenticated,
        "not_authenticated",
        `not logged in to ${error.url} (profile '${error.profile}') — run 'orgplane auth login', or set ORGPLANE_TOKEN or ORGPLANE_API_KEY`
      )
    }
    if (error instanceof NotOrgplane) {
      const answered = error.status === undefined ? "" : ` (GET /health answered ${error.status})`
      return local(
        ExitCodes.connection,
        "not_orgplane",
        `${error.url} is not an orgplane server${answered} — check --url, ORGPLANE_URL or the profile's URL`
      )
    }
    if (error instanceof UnreadableAnswer) {
      const response = HttpClientError.isHttpClientError(error.cause) ? error.cause.response : undefined
      const status = response !== undefined ? ` (${response.status})` : ""
      return local(
        ExitCodes.error,
        "unexpected_response",
        error.serverVersion === VERSION
          ? `the orgplane server at ${error.url} sent an answer${status} this CLI cannot read, though both are version ${VERSION}: please report it`
          : `the orgplane server at ${error.url} is version ${error.serverVersion} and sent an answer${status} this CLI (version ${VERSION}) cannot read — use the CLI of the server's version: npm install -g @orgplane/cli@${error.serverVersion}`
      )
    }
    if (error instanceof WrongPassword) {
      const wire = errorResponseOf(error.refusal)
      const body = wire === undefined ? { error: "unauthorized" } : apiReport(error.refusal, wire).body
      return { code: ExitCodes.unauthenticated, message: "unauthorized (401): wrong email or password", body }
    }
    if (error instanceof ProfileError) return local(ExitCodes.error, "profile_error", `${error.path}: ${error.message}`)
    if (HttpClientError.isHttpClientError(error)) {
      const reason = error.reason
      if (reason._tag === "TransportError" || reason._tag === "EncodeError" || reason._tag === "InvalidUrlError") {
        const where = originOf(reason.request.url)
        return reason._tag === "TransportError"
          ? local(ExitCodes.connection, "connection_failed", unreachableMessage(reason.request.url, reason.cause, Cause.isTimeoutError(reason.cause) ? reason.description : undefined))
          : local(ExitCodes.usage, "invalid_url", `cannot send a request to ${where}: ${reason.description ?? reasonName(reason._tag)}`)
      }
      if (reason._tag === "StatusCodeError") return yield* statusReport(reason)
      return local(
        ExitCodes.error,
        "unexpected_response",
        `unexpected response from ${originOf(reason.request.url)} (${reason.response.status}): ${reason.description ?? reasonName(reason._tag)}`
      )
    }
    if (error instanceof Config.ConfigError) {
      return local(ExitCodes.error, "invalid_configuration", `invalid configuration: ${String(error).replace(/^\((.*)\)$/s, "$1")}`)
    }
    if (Cause.isTimeoutError(error)) {
      return local(ExitCodes.connection, "timeout", "the server did not answer in time")
    }
    if (Schema.isSchemaError(error)) {
      // Inputs are validated before anything is sent, so this is a response that is not orgplane's.
      return local(ExitCodes.error, "unexpected_response", `unexpected response from the server: ${error.message.split("\n")[0]}`)
    }
    if (error instanceof Error) {
      // Platform errors (a port in use, an unreadable data folder) often carry their story in the cause only.
      const tag: unknown = "_tag" in error ? error._tag : undefined
      const name = error.message || String(tag ?? error.name)
      const cause = error.cause instanceof Error && error.cause.message !== error.message ? error.cause.message : undefined
      return local(ExitCodes.error, "error", cause ? `${name}: ${cause}` : name)
    }
    return local(ExitCodes.error, "error", String(error))
  })

/**
 * Reports a command's failure on stderr and fails with `Reported`, so the process ends with the right code.
 * Interruption (Ctrl-C) is not a failure and passes through.
 */
export const reported = (options: { readonly json: boolean; readonly color?: boolean }) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Reported, R> =>
  Effect.catch(effect, (error) =>
    Effect.flatMap(describe(error), (report) =>
      Effect.andThen(
        options.json
          ? Console.error(JSON.stringify(report.body))
          : Console.error(`${Output.red({ color: options.color ?? false }, "error:")} ${report.message}`),
        Effect.fail(new Reported({ code: report.code }))
      )))
