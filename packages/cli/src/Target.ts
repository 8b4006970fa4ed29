/**
 * The server a command talks to and the credential it presents, resolved from flags, then the environment, then
 * the profile file; and the typed client built from them.
 */
import * as Client from "@orgplane/client"
import { Forbidden, Unauthorized } from "@orgplane/schema"
import * as Prompt from "effect/cli/Prompt"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as CliConfig from "./Config.js"
import { DefaultUnreachable, isUnreadableResponse, NotAuthenticated, NotOrgplane, Rejected, UnreadableAnswer, UsageError, WrongPassword } from "./Errors.js"
import type { GlobalOptions } from "./GlobalOptions.js"
import * as Probe from "./Probe.js"
import * as Profiles from "./Profiles.js"
import * as Sessions from "./Sessions.js"
import { VERSION } from "./Version.js"

export interface Credential {
  readonly kind: "token" | "apiKey"
  readonly value: Redacted.Redacted<string>
  readonly source: "flag" | "environment" | "profile"
}

export interface Target {
  readonly url: string
  /**
   * Where `url` came from, for messages: `--url`, `ORGPLANE_URL`, a profile, or `undefined` for the CLI's default
   * address, which no flag, variable or profile named.
   */
  readonly urlFrom: string | undefined
  readonly profileName: string
  /** The selected profile as stored, if it exists. */
  readonly profile: Option.Option<Profiles.Profile>
  readonly credential: Option.Option<Credential>
}

/** `http(s)://host[:port][/base]` without a trailing slash, or a usage error. */
export const normalizeUrl = (input: string, origin: string) => {
  let url: URL
  try {
    url = new URL(input.trim())
  } catch {
    return Effect.fail(new UsageError({ message: `${origin}: '${input}' is not a URL (for example http://127.0.0.1:8787)` }))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Effect.fail(new UsageError({ message: `${origin}: '${input}' must be an http:// or https:// URL` }))
  }
  return Effect.succeed(url.toString().replace(/\/+$/, ""))
}

/** The token if there is one, else the API key: the server tries a bearer token first anyway. */
const pick = (
  source: Credential["source"],
  token: Option.Option<Redacted.Redacted<string>>,
  apiKey: Option.Option<Redacted.Redacted<string>>
): Option.Option<Credential> =>
  Option.orElse(
    Option.map(token, (value): Credential => ({ kind: "token", value, source })),
    () => Option.map(apiKey, (value): Credential => ({ kind: "apiKey", value, source }))
  )

export const resolve = (global: GlobalOptions) =>
  Effect.gen(function*() {
    const env = yield* Effect.orDie(CliConfig.environment)
    const profileName = Option.getOrElse(Option.orElse(global.profile, () => env.profile), () => Profiles.DEFAULT_PROFILE)
    const file = yield* Profiles.load
    const profile = Option.fromNullishOr(file.profiles[profileName])

    // A profile `--profile` names for the first time takes its server from the profile in use without the flag
    // (ORGPLANE_PROFILE's, else the default one): `auth login --profile work` signs in where `orgplane` points.
    const usedName = Option.getOrElse(env.profile, () => Profiles.DEFAULT_PROFILE)
    const used = Option.isNone(profile) && usedName !== profileName ? Option.fromNullishOr(file.profiles[usedName]) : Option.none()
    // The first of these that names a server, with where it came from (for messages); none: the CLI's default.
    const named = [
      ["--url", global.url],
      ["ORGPLANE_URL", env.url],
      [`profile '${profileName}'`, Option.map(profile, (stored) => stored.url)],
      [`profile '${usedName}' (profile '${profileName}' is new)`, Option.map(used, (stored) => stored.url)]
    ] as const
    const found = named.find(([, value]) => Option.isSome(value))
    const urlFrom = found?.[0]
    const url = found !== undefined && Option.isSome(found[1]) ? yield* normalizeUrl(found[1].value, found[0]) : CliConfig.DEFAULT_URL

    // A profile's credentials only go to the server they were issued by, never to another --url.
    const fromProfile = Option.flatMap(profile, (stored) =>
      Profiles.isFor(stored, url)
        ? pick(
          "profile",
          Option.map(Option.fromNullishOr(stored.token), (token) => Redacted.make(token)),
          Option.map(Option.fromNullishOr(stored.apiKey), (key) => Redacted.make(key))
        )
        : Option.none())

    const credential = pick("flag", global.token, global.apiKey).pipe(
      Option.orElse(() => pick("environment", env.token, env.apiKey)),
      Option.orElse(() => fromProfile)
    )
    return { url, urlFrom, profileName, profile, credential } satisfies Target
  })

/**
 * The API groups the running command calls (declared by its command group, see Commands.group): their clients are
 * built from these alone. A group not declared is still served, from the whole API, loaded when first called.
 */
export const ApiGroups = Context.Reference<ReadonlyArray<ApiGroup>>("@orgplane/cli/ApiGroups", {
  defaultValue: () => []
})

/** One group of the API, as a command group declares it (`Commands.group`). */
export type ApiGroup = HttpApiGroup.Constraint

/** A group's client, as the proxy below calls it: a method by name, with the request. */
type GroupClient = Record<string, (request?: unknown) => Effect.Effect<unknown, unknown>>

const isGroupClient = (value: unknown): value is GroupClient => typeof value === "object" && value !== null

/**
 * The client of the whole API whose groups are each built when first called: a command calls one or two groups, and
 * the client of all of them reads the schemas of every endpoint first (a fifth of a command's start), from the
 * schemas of the whole API (a third more).
 */
const lazyClient = (options: Client.ClientOptions) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<HttpClient.HttpClient>()
    const declared = new Map<string, ApiGroup>((yield* ApiGroups).map((group) => [group.identifier, group]))
    const built = new Map<string, Effect.Effect<GroupClient>>()
    const build = (name: string): Effect.Effect<GroupClient> => {
      const known = declared.get(name)
      const group: Effect.Effect<ApiGroup> = known !== undefined
        ? Effect.succeed(known)
        : Effect.flatMap(Effect.promise(() => import("./WholeApi.js")), ({ groups }) => {
          const found = groups.find((group) => group.identifier === name)
          return found === undefined ? Effect.die(new Error(`no API group '${name}'`)) : Effect.succeed(found)
        })
      return Effect.cached(Effect.flatMap(group, (group) =>
        Effect.map(Client.makeFor([group], options), (client): GroupClient => {
          const methods: unknown = Object.hasOwn(client, name) ? Object.getOwnPropertyDescriptor(client, name)?.value : undefined
          return isGroupClient(methods) ? methods : {}
        })
      ).pipe(Effect.provide(context))).pipe(Effect.runSync)
    }
    const groupClient = (name: string) => {
      const cached = built.get(name)
      if (cached !== undefined) return cached
      const client = build(name)
      built.set(name, client)
      return client
    }
    const handler: ProxyHandler<object> = {
      get: (_, name) =>
        typeof name !== "string" ? undefined : new Proxy({}, {
          get: (_, method) =>
            typeof method !== "string" ? undefined : (request?: unknown) =>
              Effect.flatMap(groupClient(name), (client) => {
                const call = client[method]
                return call === undefined ? Effect.die(new Error(`no method '${name}.${method}'`)) : call(request)
              })
        })
    }
    return lazyApiClient(new Proxy({}, handler))
  })

/**
 * The proxy, typed as the client it stands for: every group and method of the whole API answers as the typed client's
 * would (built from the same API, with the same options). A cast TypeScript cannot check.
 */
const lazyApiClient = (proxy: object): Client.OrgplaneApiClient => proxy as Client.OrgplaneApiClient

/**
 * The typed client for the target; with `authenticated`, fails with `NotAuthenticated` when there is no credential.
 * Its type is written out: inferred, it is too long for the declaration the bundle's build emits.
 */
export const connect = (
  target: Target,
  options: { readonly authenticated: boolean }
): Effect.Effect<Client.OrgplaneApiClient, NotAuthenticated> =>
  Effect.gen(function*() {
    if (options.authenticated && Option.isNone(target.credential)) {
      return yield* new NotAuthenticated({ url: target.url, profile: target.profileName })
    }
    const credential = Option.getOrUndefined(target.credential)
    return yield* lazyClient({
      baseUrl: target.url,
      userAgent: `orgplane-cli/${VERSION}`,
      ...(credential?.kind === "token" ? { token: Redacted.value(credential.value) } : {}),
      ...(credential?.kind === "apiKey" ? { apiKey: Redacted.value(credential.value) } : {})
    }).pipe(Effect.provide(FetchHttpClient.layer))
  })

/**
 * Runs a command's body against its resolved target. A 401 is told apart by the credential that was sent, so the
 * hint fits it (log in again, or replace the API key). An answer that cannot be read, and a missing credential, are
 * explained by asking who answers at the URL (see Probe.ts): nothing (the server is down), not orgplane (a wrong
 * URL), or an orgplane server, whose version is then named.
 */
export const run = <A, E, R>(global: GlobalOptions, body: (target: Target) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(resolve(global), (target) =>
    body(target).pipe(
      Effect.catch((error) =>
        needsRecentSignIn(error)
          ? Effect.flatMap(signInAgain(global, target, error), body)
          : Effect.fail(error)
      ),
      Effect.catch((error) => explain(target, error))
    ))

/** A request that never reached a server: refused, unresolved, reset or timed out on the way. */
const isTransportError = (error: unknown): error is HttpClientError.HttpClientError =>
  HttpClientError.isHttpClientError(error) && error.reason._tag === "TransportError"

/** 403 `recent_authentication_required`: the action needs a session younger than the server's setting. */
const needsRecentSignIn = (error: unknown): error is Forbidden =>
  error instanceof Forbidden && error.reason === "recent_authentication_required"

/**
 * The re-sign-in prompt, as `sudo` or GitHub's sudo mode asks: for the profile's saved session of a known email, the
 * password (ORGPLANE_PASSWORD, else a prompt when a person is at the keyboard) signs in again, the new session
 * replaces the old in the profile, and the command runs once more with it. Otherwise (a token or key from a flag or
 * the environment, no email, no terminal), the refusal stands, with its message: sign in again.
 */
const signInAgain = (global: GlobalOptions, target: Target, refusal: Forbidden) =>
  Effect.gen(function*() {
    const credential = Option.getOrUndefined(target.credential)
    const email = Option.getOrUndefined(target.profile)?.email
    if (credential?.kind !== "token" || credential.source !== "profile" || email === undefined) return yield* refusal
    const fromEnvironment = yield* Effect.orDie(CliConfig.password)
    if (Option.isNone(fromEnvironment) && !process.stdin.isTTY) return yield* refusal
    const password = Option.isSome(fromEnvironment)
      ? fromEnvironment.value
      : yield* Prompt.run(Prompt.Password({ message: `${refusal.message}\nPassword for ${email}` }))
    const client = yield* connect(target, { authenticated: false })
    const result = yield* client.users.signIn({ payload: { email, password: Redacted.value(password) } }).pipe(
      Effect.catchTag("Unauthorized", (refusal) => new WrongPassword({ refusal }))
    )
    yield* Sessions.save(target, result)
    return yield* resolve(global)
  })

type Explained<E> = E | Rejected | NotOrgplane | UnreadableAnswer | DefaultUnreachable | HttpClientError.HttpClientError

const explain = <E>(target: Target, error: E): Effect.Effect<never, Explained<E>> =>
  Effect.catch(explained(target, error), (error): Effect.Effect<never, Explained<E>> =>
    target.urlFrom === undefined && isTransportError(error)
      ? Effect.fail(new DefaultUnreachable({ cause: error, profile: target.profileName }))
      : Effect.fail(error))

const explained = <E>(target: Target, error: E): Effect.Effect<never, Explained<E>> => {
  if (error instanceof Unauthorized && Option.isSome(target.credential)) {
    const credential = target.credential.value
    return Effect.fail(new Rejected({ cause: error, kind: credential.kind, source: credential.source, profile: target.profileName }))
  }
  if (error instanceof NotAuthenticated || isUnreadableResponse(error)) {
    return Effect.flatMap(Probe.identify(target.url), (identity): Effect.Effect<never, Explained<E>> => {
      if (identity._tag === "Other") return Effect.fail(new NotOrgplane({ url: target.url, status: identity.status }))
      if (error instanceof NotAuthenticated) return Effect.fail(error)
      return Effect.fail(new UnreadableAnswer({ url: target.url, serverVersion: identity.version, cause: error }))
    })
  }
  return Effect.fail(error)
}
