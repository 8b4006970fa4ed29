/**
 * How the connector reaches GitHub for one instance: the credential of its account (an installation of the app,
 * or the account's decrypted token), and GitHub's failures turned into the API's errors.
 */
import {
  CodeHostApiError,
  Conflict,
  type ConnectorInstance,
  type OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Crypto } from "../platform/Crypto.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { Credential, type GitHubError } from "../integrations/codehost/GitHub.js"
import { ConnectorsRepository } from "./ConnectorsRepository.js"

export const notConfigured = (message = "This server has no GitHub App configured (ORGPLANE_CODEHOST_APP_ID and its private key): only token accounts work.") =>
  new Conflict({ error: "codehost_not_configured", message })
export const accountDisconnected = () =>
  new Conflict({ error: "connector_account_disconnected", message: "The connector account is disconnected; connect it again." })

/** A GitHub failure as the API answers it: 409 for a missing app configuration, else 502 with GitHub's reason. */
export const toApiError = (error: GitHubError): CodeHostApiError | Conflict =>
  error._tag === "CodeHostNotConfigured" ? notConfigured(error.message) : new CodeHostApiError({ message: error.message })

/**
 * "Sync now"'s refusal when the head of a followed branch could not be read: it reads every head before queuing, so
 * nothing was queued, and the message says so and how to go on.
 */
export const nothingQueued = (error: CodeHostApiError | Conflict, branch: string): CodeHostApiError | Conflict =>
  error instanceof CodeHostApiError
    ? new CodeHostApiError({
      message: `Reading the head of branch '${branch}' failed: ${error.message.replace(/\.?$/, ".")} Nothing was queued (sync now reads every followed branch's head before it queues a sync); send it again once the code host answers.`
    })
    : error

const make = Effect.gen(function*() {
  const repository = yield* ConnectorsRepository
  const crypto = yield* Crypto

  /**
   * The credential of the instance's account: 409 `connector_account_disconnected` for a disconnected account.
   * A token that does not decrypt (its key is gone, or the value was altered or moved from another row) is 500
   * `stored_credential_unreadable`, logged once with the key problem.
   */
  const credentialOf = Effect.fn("CodeHostAccess.credentialOf")(function*(organizationId: OrganizationId, instance: ConnectorInstance) {
    const record = yield* repository.findAccount(organizationId, instance.connectorAccountId).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(accountDisconnected()), onSome: Effect.succeed }))
    )
    if (record.account.status !== "active") return yield* Effect.fail(accountDisconnected())
    if (record.account.kind === "token") {
      const token = yield* crypto.decrypt(
        record.tokenCiphertext ?? "",
        bind(SecretColumns.connectorToken, organizationId, record.account.id)
      )
      return Credential.token(token)
    }
    return Credential.installation(Number(record.account.remoteId))
  })

  return { credentialOf } as const
})

export class CodeHostAccess extends Context.Service<CodeHostAccess>()("@orgplane/server/connectors/CodeHostAccess", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(ConnectorsRepository.layer))
}
