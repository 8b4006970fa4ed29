/**
 * What each suite is (pure): its default endpoints, the features it offers, the scopes each feature needs and how
 * granted scopes are compared, and what its authorization URL adds to a standard one.
 *
 * - `suite-a` (Microsoft 365): the Microsoft identity platform's v2 endpoints for the tenant, Graph scopes in their
 *   short form (`Mail.ReadWrite`: the platform takes them as Microsoft Graph's, in whichever cloud the endpoints
 *   are) plus `offline_access` for a refresh token. Scopes compare without case and without a resource prefix.
 * - `suite-b` (Google Workspace): Google's endpoints, full scope URIs, `access_type=offline` and `prompt=consent`
 *   for a refresh token every time.
 */
import type { Suite, SuiteFeature } from "@orgplane/schema"

export const DEFAULT_TENANT = "organizations"

export interface Endpoints {
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly apiBaseUrl: string
}

const MICROSOFT_LOGIN = "https://login.microsoftonline.com"
const GOOGLE_SCOPE = "https://www.googleapis.com/auth/"

export const defaultEndpoints = (suite: Suite, tenant: string | null): Endpoints =>
  suite === "suite-a"
    ? {
      authorizationEndpoint: `${MICROSOFT_LOGIN}/${encodeURIComponent(tenant ?? DEFAULT_TENANT)}/oauth2/v2.0/authorize`,
      tokenEndpoint: `${MICROSOFT_LOGIN}/${encodeURIComponent(tenant ?? DEFAULT_TENANT)}/oauth2/v2.0/token`,
      apiBaseUrl: "https://graph.microsoft.com/v1.0"
    }
    : {
      authorizationEndpoint: "https://accounts.google.com/o/oauth2/v2/auth",
      tokenEndpoint: "https://oauth2.googleapis.com/token",
      apiBaseUrl: "https://www.googleapis.com"
    }

/** The endpoints in use: those configured, else the suite's defaults. */
export const endpointsOf = (client: {
  readonly suite: Suite
  readonly tenant: string | null
  readonly authorizationEndpoint: string | null
  readonly tokenEndpoint: string | null
  readonly apiBaseUrl: string | null
}): Endpoints => {
  const defaults = defaultEndpoints(client.suite, client.tenant)
  return {
    authorizationEndpoint: client.authorizationEndpoint ?? defaults.authorizationEndpoint,
    tokenEndpoint: client.tokenEndpoint ?? defaults.tokenEndpoint,
    apiBaseUrl: client.apiBaseUrl ?? defaults.apiBaseUrl
  }
}

export const featuresOf: Record<Suite, ReadonlyArray<SuiteFeature>> = {
  "suite-a": ["mailDraft", "mailRead"],
  "suite-b": ["calendarWrite"]
}

export const suiteOf = (feature: SuiteFeature): Suite => (feature === "calendarWrite" ? "suite-b" : "suite-a")

interface Need {
  /** What connecting asks for. */
  readonly request: string
  /** Any of these granted covers the need. */
  readonly anyOf: ReadonlyArray<string>
  /** How a message names it. */
  readonly label: string
}

/** What each feature needs, and how a person would name it. */
export const needs: Record<SuiteFeature, { readonly need: Need; readonly what: string }> = {
  mailDraft: {
    need: { request: "Mail.ReadWrite", anyOf: ["Mail.ReadWrite"], label: "Mail.ReadWrite" },
    what: "mail drafts"
  },
  mailRead: {
    need: { request: "Mail.Read", anyOf: ["Mail.Read", "Mail.ReadWrite"], label: "Mail.Read" },
    what: "mail reading"
  },
  calendarWrite: {
    need: {
      request: `${GOOGLE_SCOPE}calendar.events`,
      anyOf: [`${GOOGLE_SCOPE}calendar.events`, `${GOOGLE_SCOPE}calendar`],
      label: "calendar.events"
    },
    what: "calendar changes"
  }
}

/** A scope as compared: suite-a's without case and without a `https://…/` resource prefix. */
export const normalizeScope = (suite: Suite, scope: string): string =>
  suite === "suite-a" ? scope.replace(/^https?:\/\/[^/]+\//i, "").toLowerCase() : scope

/** Whether the granted scopes cover what the feature needs. */
export const grants = (suite: Suite, granted: ReadonlyArray<string>, feature: SuiteFeature): boolean => {
  const held = new Set(granted.map((scope) => normalizeScope(suite, scope)))
  return needs[feature].need.anyOf.some((scope) => held.has(normalizeScope(suite, scope)))
}

/** The scopes connecting asks for with these features enabled (in the suite's order, each once). */
export const scopesFor = (suite: Suite, features: ReadonlyArray<SuiteFeature>): ReadonlyArray<string> => {
  const asked = featuresOf[suite].filter((feature) => features.includes(feature)).map((feature) => needs[feature].need.request)
  return suite === "suite-a" ? ["offline_access", ...asked] : asked
}

/** What the suite's authorization URL carries beyond the standard parameters. */
export const authorizationExtras = (suite: Suite): Readonly<Record<string, string>> =>
  suite === "suite-a" ? {} : { access_type: "offline", prompt: "consent", include_granted_scopes: "true" }

/** The error code of a suite. */
export const apiErrorCode = (suite: Suite) => (suite === "suite-a" ? "suite_a_api_error" as const : "suite_b_api_error" as const)

/** A suite as people read it in messages. */
export const suiteName = (suite: Suite) => (suite === "suite-a" ? "mail suite (suite-a)" : "calendar suite (suite-b)")
