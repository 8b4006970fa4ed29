/**
 * `orgplane sso set | get | delete | request-verification | verify`: the active organization's SSO connection and
 * the DNS verification of its email domain (enterprise plan; owners and admins).
 */
import {
  DomainVerificationResponse,
  OidcSettingsInput,
  SamlSettingsInput,
  SsoConnection,
  SsoConnectionResponse,
  SsoDomain,
  VerifyDomainResponse
} from "@orgplane/schema"
import { Effect, Option, Redacted, Schema } from "effect"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"

const SECRET_VARIABLE = CliConfig.SSO_CLIENT_SECRET_VARIABLE

const readStdin = Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `--client-secret-stdin: ${message}` }))

/** The client secret from stdin or the environment, checked with the API's rule; the message never quotes it. */
const readSecret = (stdin: boolean) =>
  Effect.gen(function*() {
    const text = stdin ? yield* readStdin : Option.getOrUndefined(yield* Effect.orDie(CliConfig.ssoClientSecret))
    if (text === undefined) {
      return yield* new UsageError({ message: `give the OIDC client secret with --client-secret-stdin or ${SECRET_VARIABLE}` })
    }
    const value = Redacted.isRedacted(text) ? Redacted.value(text) : text
    return yield* Schema.decode(OidcSettingsInput.fields.clientSecret)(value).pipe(
      Effect.mapError(() => new UsageError({ message: "the client secret must be 1 to 1024 characters (surrounding spaces are trimmed)" }))
    )
  })

/** A PEM certificate is a few KiB; a file far larger is not one. */
const MAX_CERTIFICATE_BYTES = 256 * 1024

const readCertificate = (path: string) =>
  Effect.mapError(
    Files.readFile(path, MAX_CERTIFICATE_BYTES, "256 KiB"),
    (message) => new UsageError({ message: `--saml-certificate-file: ${message}` })
  )

const describe = (connection: SsoConnection) =>
  [
    `SSO (${connection.protocol}) for ${connection.domain}: domain ${
      connection.domainVerified ? `verified ${connection.domainVerifiedAt?.toISOString()}` : "not verified"
    }.`,
    ...(connection.oidc ? [`  issuer: ${connection.oidc.issuer}`, `  client id: ${connection.oidc.clientId} (secret stored)`] : []),
    ...(connection.saml ? [`  entity id: ${connection.saml.entityId}`, `  sign-on URL: ${connection.saml.ssoUrl}`] : [])
  ].join("\n")

export const set = Commands.endpoint("set", {
  summary: "Create or replace the SSO connection: OIDC or SAML settings and the email domain (owners and admins).",
  details: [
    `OIDC: --oidc-issuer and --oidc-client-id, with the client secret from standard input (--client-secret-stdin) or ${SECRET_VARIABLE}, never from an argument; it is stored encrypted and never shown again. SAML: --saml-entity-id, --saml-sso-url and --saml-certificate-file. Keeping the domain keeps its verification.`
  ],
  inputs: {
    domain: Inputs.text("domain", { placeholder: "<domain>", description: "The email domain people sign in with.", schema: SsoDomain }),
    issuer: Inputs.optional(Inputs.text("oidc-issuer", { placeholder: "<url>", schema: OidcSettingsInput.fields.issuer })),
    clientId: Inputs.optional(Inputs.text("oidc-client-id", { placeholder: "<id>", schema: OidcSettingsInput.fields.clientId })),
    clientSecretStdin: Inputs.boolean("client-secret-stdin", {
      description: `Read the OIDC client secret from standard input (else ${SECRET_VARIABLE}).`
    }),
    entityId: Inputs.optional(Inputs.text("saml-entity-id", { placeholder: "<id>", schema: SamlSettingsInput.fields.entityId })),
    ssoUrl: Inputs.optional(Inputs.text("saml-sso-url", { placeholder: "<url>", schema: SamlSettingsInput.fields.ssoUrl })),
    certificateFile: Inputs.optional(Inputs.text("saml-certificate-file", {
      placeholder: "<file>",
      description: "A file holding the identity provider's signing certificate (PEM)."
    }))
  },
  call: (client, { certificateFile, clientId, clientSecretStdin, domain, entityId, issuer, ssoUrl }) =>
    Effect.gen(function*() {
      const oidc = Option.isSome(issuer) || Option.isSome(clientId)
      const saml = Option.isSome(entityId) || Option.isSome(ssoUrl) || Option.isSome(certificateFile)
      if (oidc === saml) {
        return yield* new UsageError({
          message: "give OIDC settings (--oidc-issuer, --oidc-client-id) or SAML settings (--saml-entity-id, --saml-sso-url, --saml-certificate-file), not both"
        })
      }
      if (oidc) {
        if (Option.isNone(issuer) || Option.isNone(clientId)) {
          return yield* new UsageError({ message: "OIDC needs --oidc-issuer and --oidc-client-id" })
        }
        const clientSecret = yield* readSecret(clientSecretStdin)
        return yield* client.sso.put({
          payload: { protocol: "oidc", domain, oidc: { issuer: issuer.value, clientId: clientId.value, clientSecret } }
        })
      }
      if (Option.isNone(entityId) || Option.isNone(ssoUrl) || Option.isNone(certificateFile)) {
        return yield* new UsageError({ message: "SAML needs --saml-entity-id, --saml-sso-url and --saml-certificate-file" })
      }
      const certificate = yield* Schema.decode(SamlSettingsInput.fields.certificate)(yield* readCertificate(certificateFile.value)).pipe(
        Effect.mapError(() => new UsageError({ message: "--saml-certificate-file: not a PEM certificate of at most 16384 characters" }))
      )
      return yield* client.sso.put({
        payload: { protocol: "saml", domain, saml: { entityId: entityId.value, ssoUrl: ssoUrl.value, certificate } }
      })
    }),
  output: SsoConnectionResponse,
  human: ({ ssoConnection }) => describe(ssoConnection)
})

export const get = Commands.endpoint("get", {
  summary: "Show the SSO connection and whether its domain is verified (never the client secret).",
  inputs: {},
  call: (client) => client.sso.get(),
  output: SsoConnectionResponse,
  human: ({ ssoConnection }) => describe(ssoConnection)
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true) })

export const del = Commands.endpoint("delete", {
  summary: "Delete the SSO connection with its secret and its domain verification.",
  inputs: {},
  call: (client) => client.sso.delete().pipe(Effect.as({ ok: true as const })),
  output: Deleted,
  human: () => "Deleted the SSO connection."
})

export const requestVerification = Commands.endpoint("request-verification", {
  summary: "Show the DNS TXT record to publish to prove the organization owns its SSO domain.",
  inputs: {},
  call: (client) => client.sso.requestDomainVerification(),
  output: DomainVerificationResponse,
  human: ({ verification }) =>
    [
      `Publish this DNS record, then run \`orgplane sso verify\` before ${verification.expiresAt.toISOString()}:`,
      `  ${verification.recordName} TXT "${verification.recordValue}"`
    ].join("\n")
})

export const verify = Commands.endpoint("verify", {
  summary: "Look the TXT record up and mark the SSO domain verified (a signed-in session, not an API key).",
  inputs: {},
  call: (client) => client.sso.verifyDomain(),
  output: VerifyDomainResponse,
  human: ({ domain, verifiedAt }) => `Verified ${domain} (${verifiedAt.toISOString()}).`
})

export const sso = Commands.group("sso", "Manage the organization's SSO connection and verify its domain (enterprise plan; owners and admins).", [
  set,
  get,
  del,
  requestVerification,
  verify
])
