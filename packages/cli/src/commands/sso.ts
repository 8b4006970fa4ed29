/**
 * `orgplane sso domains | request-verification | verify | connections …`: the active organization's SSO domains and
 * their DNS verification, and its SSO connections (enterprise plan; owners and admins).
 *
 * A value `connections update` refuses before sending (a RelayState that is neither a path nor a loopback URL, a name
 * too long) is told as each problem's path and message (`saml.relayStateAllowList.0 must be …`).
 */
import { DomainVerificationResponse, exampleId, OidcSettingsInput, PemCertificate, type SamlSettings, type SamlSettingsInput, SsoApi, type SsoConnection, SsoConnectionId, SsoConnectionList, SsoConnectionResponse, SsoDomain, SsoDomainList, SsoJitRole, type SsoPolicy, SsoPolicyResponse, TeamId, UpdateSsoConnectionRequest, VerifyDomainResponse } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import { test } from "./ssoTest.js"

const SECRET_VARIABLE = CliConfig.SSO_CLIENT_SECRET_VARIABLE

const readStdin = Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `--client-secret-stdin: ${message}` }))

/** The client secret from stdin or the environment, checked with the API's rule; the message never quotes it. */
const readSecret = Effect.fn("sso.readSecret")(function*(stdin: boolean) {
  const text = stdin ? yield* readStdin : Option.getOrUndefined(yield* Effect.orDie(CliConfig.ssoClientSecret))
  if (text === undefined) return undefined
  const value = Redacted.isRedacted(text) ? Redacted.value(text) : text
  return yield* Schema.decodeEffect(OidcSettingsInput.fields.clientSecret)(value).pipe(
    Effect.mapError(() => new UsageError({ message: "the client secret must be 1 to 1024 characters (surrounding spaces are trimmed)" }))
  )
})

/** The client secret, which must be given. */
const requireSecret = (stdin: boolean) =>
  Effect.flatMap(readSecret(stdin), (secret) =>
    secret === undefined
      ? Effect.fail(new UsageError({ message: `give the OIDC client secret with --client-secret-stdin or ${SECRET_VARIABLE}` }))
      : Effect.succeed(secret))

/** A PEM certificate is a few KiB; a file far larger is not one. */
const MAX_CERTIFICATE_BYTES = 256 * 1024

const readCertificate = (path: string) =>
  Effect.flatMap(
    Effect.mapError(Files.readFile(path, MAX_CERTIFICATE_BYTES, "256 KiB"), (message) => new UsageError({ message: `--saml-certificate-file: ${message}` })),
    (text) =>
      Schema.decodeEffect(PemCertificate)(text).pipe(
        Effect.mapError(() => new UsageError({ message: `--saml-certificate-file ${path}: not a PEM certificate of at most 16384 characters` }))
      )
  )

export const describe = (connection: SsoConnection) =>
  [
    `${connection.name} (${connection.id}): ${connection.kind}, ${connection.state}, revision ${connection.configRevision}`,
    `  domains: ${connection.domains.length === 0 ? "none" : connection.domains.map((d) => `${d.domain}${d.verified ? "" : " (not verified)"}`).join(", ")}`,
    ...(connection.oidc
      ? [
        `  issuer: ${connection.oidc.issuer}`,
        `  client id: ${connection.oidc.clientId} (${connection.oidc.clientSecretSet ? "secret stored" : "no secret: set one"})`,
        `  redirect URL to register: ${connection.sp.redirectUrl}`
      ]
      : []),
    ...(connection.saml
      ? [
        `  IdP: ${connection.saml.source}${connection.saml.entityId ? ` ${connection.saml.entityId}` : ""}`,
        ...connection.saml.certificates.map((c) => `  certificate ${c.subject}, expires ${c.notAfter.toISOString()}`),
        ...(connection.saml.metadataRefresh === null ? [] : [
          `  metadata fetched: ${connection.saml.metadataRefresh.at.toISOString()}${
            connection.saml.metadataRefresh.ok ? "" : `, failed: ${connection.saml.metadataRefresh.message}`
          }`
        ]),
        `  ACS URL: ${connection.sp.acsUrl}`,
        `  SP entity id / metadata: ${connection.sp.entityId}`,
        `  IdP-initiated sign-in: ${
          connection.saml.allowIdpInitiated ? `on, RelayState allowed: ${connection.saml.relayStateAllowList.join(", ")}` : "off"
        }`
      ]
      : []),
    `  JIT: ${connection.jit.enabled ? `on, role ${connection.jit.defaultRole}` : "off"}`,
    `  last test: ${
      connection.lastTest === null
        ? "none"
        : `${connection.lastTest.status} (revision ${connection.lastTest.configRevision})${
          connection.lastTest.failure ? `: ${connection.lastTest.failure.code}: ${connection.lastTest.failure.message}` : ""
        }`
    }`
  ].join("\n")

const connectionId = Inputs.argument("connectionId", { schema: SsoConnectionId, description: "The connection (ssc_…)." })
const domainFlag = Inputs.optional(Inputs.text("domain", { placeholder: "<domain>", description: "The domain (default: the organization's only unverified one).", schema: SsoDomain }))

const shared = {
  domains: Inputs.repeatedText("domain", { placeholder: "<domain>", description: "An email domain the connection serves.", schema: Schema.Array(SsoDomain) }),
  jitRole: Inputs.optional(Inputs.choice("jit-role", SsoJitRole.literals, { description: "The role of members made at sign-in (default member)." })),
  noJit: Inputs.boolean("no-jit", { description: "Do not make members at sign-in (people must be members already)." }),
  jitTeams: Inputs.repeatedText("jit-team", { placeholder: "<teamId>", description: "A team members made at sign-in join.", schema: Schema.Array(TeamId) }),
  clientSecretStdin: Inputs.boolean("client-secret-stdin", {
    description: `Read the OIDC client secret from standard input (else ${SECRET_VARIABLE}).`
  }),
  idpInitiated: Inputs.optional(Inputs.choice("saml-idp-initiated", ["on", "off"], {
    description: "SAML: accept sign-ins the IdP starts (a tile in its portal), with a RelayState of --saml-relay-state (default off)."
  })),
  relayStates: Inputs.repeatedText("saml-relay-state", {
    placeholder: "<path|url>",
    description: "SAML: a RelayState an IdP-initiated sign-in may carry (exact match; a path on the server or a loopback URL); replaces the list."
  })
}

/** The IdP-initiated settings the flags give: `{}` when they give none. */
const idpInitiatedOf = (input: { readonly idpInitiated: Option.Option<"on" | "off">; readonly relayStates: ReadonlyArray<string> }) => ({
  ...(Option.isSome(input.idpInitiated) ? { allowIdpInitiated: input.idpInitiated.value === "on" } : {}),
  ...(input.relayStates.length > 0 ? { relayStateAllowList: input.relayStates } : {})
})

/** The SAML settings to send again on update: the stored IdP as given (by URL, XML or by hand), with `changes`. */
const samlInputOf = (saml: SamlSettings, changes: ReturnType<typeof idpInitiatedOf>): SamlSettingsInput => ({
  source: saml.source,
  ...(saml.source === "metadataUrl" && saml.metadataUrl !== null ? { url: saml.metadataUrl } : {}),
  ...(saml.source === "metadataXml" && saml.metadataXml !== null ? { xml: saml.metadataXml } : {}),
  ...(saml.source === "manual"
    ? {
      ...(saml.entityId === null ? {} : { entityId: saml.entityId }),
      ...(saml.ssoUrl === null ? {} : { ssoUrl: saml.ssoUrl }),
      certificates: saml.certificates.map((c) => c.pem)
    }
    : {}),
  allowIdpInitiated: saml.allowIdpInitiated,
  relayStateAllowList: saml.relayStateAllowList,
  ...changes
})

const jitOf = (input: { readonly jitRole: Option.Option<"member" | "admin">; readonly noJit: boolean; readonly jitTeams: ReadonlyArray<TeamId> }) => {
  const jit = {
    ...(input.noJit ? { enabled: false } : {}),
    ...Inputs.ifSome("defaultRole", input.jitRole),
    ...(input.jitTeams.length > 0 ? { defaultTeamIds: input.jitTeams } : {})
  }
  return Object.keys(jit).length === 0 ? {} : { jit }
}

export const create = Commands.endpoint("create", {
  examples: [
    ["An OIDC connection for a domain (the client secret from ORGPLANE_SSO_CLIENT_SECRET).", ["sso", "connections", "create", "Okta", "--domain", "example.com", "--oidc-issuer", "https://example.okta.com", "--oidc-client-id", "0oa1b2c3d4e5f6"]],
  ],
  summary: "Create a draft SSO connection: OIDC (issuer, client id, secret) or SAML (metadata URL, XML file, or entity id, SSO URL and certificates).",
  details: [
    `OIDC: --oidc-issuer and --oidc-client-id, with the client secret from standard input (--client-secret-stdin) or ${SECRET_VARIABLE}, never from an argument; it is stored encrypted and never shown again. SAML: --saml-metadata-url, or --saml-metadata-file, or --saml-entity-id with --saml-sso-url and --saml-certificate-file (repeatable); IdP-initiated sign-in stays off unless --saml-idp-initiated on with at least one --saml-relay-state. Then verify its domains, test it and activate it.`
  ],
  inputs: {
    name: Inputs.argument("name", { description: "A name for people (`Okta`)." }),
    ...shared,
    issuer: Inputs.optional(Inputs.text("oidc-issuer", { placeholder: "<url>", schema: OidcSettingsInput.fields.issuer })),
    clientId: Inputs.optional(Inputs.text("oidc-client-id", { placeholder: "<id>", schema: OidcSettingsInput.fields.clientId })),
    authMethod: Inputs.optional(Inputs.choice("oidc-token-auth", ["client_secret_basic", "client_secret_post"], {
      description: "How orgplane authenticates at the token endpoint (default client_secret_basic)."
    })),
    metadataUrl: Inputs.optional(Inputs.text("saml-metadata-url", { placeholder: "<url>", description: "The IdP's metadata URL." })),
    metadataFile: Inputs.optional(Inputs.text("saml-metadata-file", { placeholder: "<file>", description: "A file holding the IdP's metadata XML." })),
    entityId: Inputs.optional(Inputs.text("saml-entity-id", { placeholder: "<id>", description: "The IdP's entity id." })),
    ssoUrl: Inputs.optional(Inputs.text("saml-sso-url", { placeholder: "<url>", description: "The IdP's single sign-on URL." })),
    certificateFiles: Inputs.repeatedText("saml-certificate-file", {
      placeholder: "<file>",
      description: "A file holding an IdP signing certificate (PEM); repeat during a rotation."
    })
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const common = { name: input.name, ...(input.domains.length > 0 ? { domains: input.domains } : {}), ...jitOf(input) }
      const oidc = Option.isSome(input.issuer) || Option.isSome(input.clientId)
      const saml = Option.isSome(input.metadataUrl) || Option.isSome(input.metadataFile) || Option.isSome(input.entityId) ||
        Option.isSome(input.ssoUrl) || input.certificateFiles.length > 0
      if (oidc === saml) {
        return yield* new UsageError({
          message: "give OIDC settings (--oidc-issuer, --oidc-client-id) or SAML settings (--saml-metadata-url, --saml-metadata-file, or --saml-entity-id, --saml-sso-url, --saml-certificate-file), not both"
        })
      }
      if (oidc) {
        if (Option.isNone(input.issuer) || Option.isNone(input.clientId)) {
          return yield* new UsageError({ message: "OIDC needs --oidc-issuer and --oidc-client-id" })
        }
        const clientSecret = yield* requireSecret(input.clientSecretStdin)
        return yield* client.sso.createConnection({
          payload: {
            kind: "oidc",
            ...common,
            oidc: {
              issuer: input.issuer.value,
              clientId: input.clientId.value,
              clientSecret,
              ...Inputs.ifSome("tokenEndpointAuthMethod", input.authMethod)
            }
          }
        })
      }
      const idpInitiated = idpInitiatedOf(input)
      if (Object.keys(idpInitiated).length > 0 && !saml) {
        return yield* new UsageError({ message: "--saml-idp-initiated and --saml-relay-state are for SAML connections" })
      }
      if (Option.isSome(input.metadataUrl)) {
        return yield* client.sso.createConnection({
          payload: { kind: "saml", ...common, saml: { source: "metadataUrl", url: input.metadataUrl.value, ...idpInitiated } }
        })
      }
      if (Option.isSome(input.metadataFile)) {
        const xml = yield* Effect.mapError(
          Files.readFile(input.metadataFile.value, 1_000_000, "1 MB"),
          (message) => new UsageError({ message: `--saml-metadata-file: ${message}` })
        )
        return yield* client.sso.createConnection({ payload: { kind: "saml", ...common, saml: { source: "metadataXml", xml, ...idpInitiated } } })
      }
      if (Option.isNone(input.entityId) || Option.isNone(input.ssoUrl) || input.certificateFiles.length === 0) {
        return yield* new UsageError({ message: "manual SAML needs --saml-entity-id, --saml-sso-url and --saml-certificate-file" })
      }
      const certificates = yield* Effect.forEach(input.certificateFiles, readCertificate)
      return yield* client.sso.createConnection({
        payload: { kind: "saml", ...common, saml: { source: "manual", entityId: input.entityId.value, ssoUrl: input.ssoUrl.value, certificates, ...idpInitiated } }
      })
    }),
  output: SsoConnectionResponse,
  human: ({ connection }) => `Created:\n${describe(connection)}`
})

export const list = Commands.endpoint("list", {
  summary: "List the organization's SSO connections.",
  inputs: {},
  call: (client) => client.sso.listConnections(),
  output: SsoConnectionList,
  human: ({ connections }) => connections.length === 0 ? "No SSO connections." : connections.map(describe).join("\n")
})

export const get = Commands.endpoint("get", {
  summary: "Show an SSO connection (never its client secret).",
  inputs: { connectionId },
  call: (client, { connectionId }) => client.sso.getConnection({ params: { connectionId } }),
  output: SsoConnectionResponse,
  human: ({ connection }) => describe(connection)
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Rename a connection.", ["sso", "connections", "update", exampleId("ssc"), "--name", "Okta (EU)"]],
  ],
  summary: "Change an SSO connection's name, domains, JIT settings, OIDC client secret or SAML IdP-initiated sign-in.",
  details: [
    "A change of domains, of the client secret or of the SAML settings (IdP-initiated sign-in, its RelayState allow-list) makes the connection need a new test; an active connection refuses such changes (create a second connection instead). The SAML IdP is sent again as stored (a metadata URL is fetched again)."
  ],
  inputs: {
    connectionId,
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", description: "A new name." })),
    ...shared
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const secret = yield* readSecret(input.clientSecretStdin)
      const idpInitiated = idpInitiatedOf(input)
      const samlChange = Object.keys(idpInitiated).length > 0
      const current = secret === undefined && !samlChange
        ? undefined
        : (yield* client.sso.getConnection({ params: { connectionId: input.connectionId } })).connection
      if (current !== undefined && secret !== undefined && current.oidc === null) {
        return yield* new UsageError({ message: "a client secret is for OIDC connections" })
      }
      if (current !== undefined && samlChange && current.saml === null) {
        return yield* new UsageError({ message: "--saml-idp-initiated and --saml-relay-state are for SAML connections" })
      }
      const payload = {
        ...Inputs.ifSome("name", input.name),
        ...(input.domains.length > 0 ? { domains: input.domains } : {}),
        ...jitOf(input),
        ...(current?.oidc && secret !== undefined
          ? {
            oidc: {
              issuer: current.oidc.issuer,
              clientId: current.oidc.clientId,
              clientSecret: secret,
              scopes: current.oidc.scopes,
              tokenEndpointAuthMethod: current.oidc.tokenEndpointAuthMethod,
              ...(current.oidc.endpoints === null ? {} : {
                endpoints: {
                  authorization: current.oidc.endpoints.authorization,
                  token: current.oidc.endpoints.token,
                  jwks: current.oidc.endpoints.jwks,
                  ...(current.oidc.endpoints.userinfo === null ? {} : { userinfo: current.oidc.endpoints.userinfo })
                }
              })
            }
          }
          : {}),
        ...(current?.saml && samlChange ? { saml: samlInputOf(current.saml, idpInitiated) } : {})
      }
      if (Object.keys(payload).length === 0) {
        return yield* new UsageError({
          message: "give something to change (--name, --domain, --jit-role, --no-jit, --jit-team, --client-secret-stdin, --saml-idp-initiated, --saml-relay-state)"
        })
      }
      // A bad value says which (a RelayState that is neither a path nor a loopback URL), not "give something".
      const checked = yield* Schema.decodeUnknownEffect(Schema.toType(UpdateSsoConnectionRequest))(payload).pipe(
        Effect.mapError((error) => new UsageError({ message: problems(error) }))
      )
      return yield* client.sso.updateConnection({ params: { connectionId: input.connectionId }, payload: checked })
    }),
  output: SsoConnectionResponse,
  human: ({ connection }) => `Updated:\n${describe(connection)}`
})

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** Each problem of a refused request, as its path and message. */
const problems = (error: Schema.SchemaError) =>
  formatIssue(error.issue).issues.map((issue) =>
    `${(issue.path ?? []).map((segment) => typeof segment === "object" ? String(segment.key) : String(segment)).join(".")} ${issue.message}`.trim()
  ).join("; ")

const Deleted = Schema.Struct({ ok: Schema.Literal(true) })

export const del = Commands.endpoint("delete", {
  summary: "Delete an SSO connection with its secret and identity links.",
  inputs: { connectionId },
  call: (client, { connectionId }) => client.sso.deleteConnection({ params: { connectionId } }).pipe(Effect.as({ ok: true as const })),
  output: Deleted,
  human: () => "Deleted the SSO connection."
})

export const activate = Commands.endpoint("activate", {
  summary: "Activate an SSO connection (after a successful test of its current revision, with its domains verified).",
  inputs: { connectionId },
  call: (client, { connectionId }) => client.sso.activateConnection({ params: { connectionId } }),
  output: SsoConnectionResponse,
  human: ({ connection }) => `Activated:\n${describe(connection)}`
})

export const deactivate = Commands.endpoint("deactivate", {
  summary: "Deactivate an SSO connection: nobody signs in through it any more.",
  inputs: { connectionId },
  call: (client, { connectionId }) => client.sso.deactivateConnection({ params: { connectionId } }),
  output: SsoConnectionResponse,
  human: ({ connection }) => `Deactivated:\n${describe(connection)}`
})

export const refreshMetadata = Commands.endpoint("refresh-metadata", {
  summary: "Fetch a SAML connection's IdP metadata URL now, as the schedule does every 6 hours.",
  details: [
    "Rotated signing certificates and a moved SSO URL are taken without a new test; a fetch that fails, a document that does not parse or one naming another entity id keeps the settings and is shown as the last refresh's error."
  ],
  inputs: { connectionId },
  call: (client, { connectionId }) => client.sso.refreshMetadata({ params: { connectionId } }),
  output: SsoConnectionResponse,
  human: ({ connection }) => `Refreshed:\n${describe(connection)}`
})

export const domains = Commands.endpoint("domains", {
  summary: "List the organization's SSO domains and whether each is verified.",
  inputs: {},
  call: (client) => client.sso.listDomains(),
  output: SsoDomainList,
  human: ({ domains }) =>
    domains.length === 0 ? "No domains." : domains.map((d) => `${d.domain}: ${d.verified ? `verified ${d.verifiedAt?.toISOString()}` : "not verified"}`).join("\n")
})

export const requestVerification = Commands.endpoint("request-verification", {
  summary: "Show the DNS TXT record to publish to prove the organization owns a domain.",
  inputs: { domain: domainFlag },
  call: (client, { domain }) => client.sso.requestDomainVerification({ query: Option.isSome(domain) ? { domain: domain.value } : {} }),
  output: DomainVerificationResponse,
  human: ({ verification }) =>
    [
      `Publish this DNS record, then run \`orgplane sso verify --domain ${verification.domain}\` before ${verification.expiresAt.toISOString()}:`,
      `  ${verification.recordName} TXT "${verification.recordValue}"`
    ].join("\n")
})

export const verify = Commands.endpoint("verify", {
  summary: "Look the TXT record up and mark the domain verified (a signed-in session, not an API key).",
  inputs: { domain: domainFlag },
  call: (client, { domain }) => client.sso.verifyDomain({ query: Option.isSome(domain) ? { domain: domain.value } : {} }),
  output: VerifyDomainResponse,
  human: ({ domain, verifiedAt }) => `Verified ${domain} (${verifiedAt.toISOString()}).`
})

const describePolicy = (policy: SsoPolicy) =>
  [
    `SSO required: ${policy.requireSso ? "yes (for the domains an active connection serves)" : "no"}`,
    `Owners' password break-glass: ${policy.ownersPasswordFallback ? "on" : "off"}`
  ].join("\n")

export const policyGet = Commands.endpoint("get", {
  summary: "Show whether the organization requires SSO, and the owners' password break-glass.",
  inputs: {},
  call: (client) => client.sso.getPolicy(),
  output: SsoPolicyResponse,
  human: ({ policy }) => describePolicy(policy)
})

export const policySet = Commands.endpoint("set", {
  summary: "Require SSO (on) or not (off) for the domains the organization's active connections serve.",
  details: [
    "While on, password sign-in for those domains is refused (except owners, unless --no-owners-password-fallback) and the organization refuses sessions its own SSO did not authenticate. Sign in through SSO first (`orgplane login --sso`): a policy that would refuse your own session is refused. API keys are not affected."
  ],
  inputs: {
    requireSso: Inputs.argumentChoice("require", ["on", "off"], { description: "on: require SSO; off: do not." }),
    noOwnersPasswordFallback: Inputs.boolean("no-owners-password-fallback", {
      description: "Owners too must sign in through SSO (no password break-glass)."
    })
  },
  call: (client, input) =>
    client.sso.setPolicy({ payload: { requireSso: input.requireSso === "on", ownersPasswordFallback: !input.noOwnersPasswordFallback } }),
  output: SsoPolicyResponse,
  human: ({ policy }) => `Set:\n${describePolicy(policy)}`
})

export const policy = Commands.group("policy", "The organization's SSO enforcement.", [policyGet, policySet])

export const connections = Commands.group("connections", "The organization's SSO connections.", [
  create,
  list,
  get,
  update,
  del,
  test,
  activate,
  deactivate,
  refreshMetadata
])

export const sso = Commands.group("sso", "Manage the organization's SSO domains and connections (enterprise plan; owners and admins).", [
  domains,
  requestVerification,
  verify,
  connections,
  policy
], [SsoApi])
