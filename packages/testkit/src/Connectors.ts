/**
 * Connector fixtures over the public API, answered in the API's wire types: a repository served by FakeGitHub to a
 * token of its own, an organization connected to a repository (an account, an instance, a target following a
 * branch), the two together, and a sync event waited for.
 */
import type {
  ConnectorAccount,
  ConnectorAccountResponse,
  ConnectorInstanceResponse,
  ConnectorSyncEventDetail,
  ConnectorTargetResponse,
  CreateConnectorAccountRequest,
  CreateConnectorInstanceRequest
} from "@orgplane/schema"
import type { FakeGitHub } from "./FakeGitHub.js"
import * as GitRepo from "./GitRepo.js"
import * as Http from "./Http.js"

const unique = () => Math.random().toString(36).slice(2, 10)

/** The owner of a new organization, as `Http.owner` answers one. */
export type Owner = Awaited<ReturnType<typeof Http.owner>>

/**
 * `files` as a new git repository served as `fullName` (default `acme/<random>`), and a new token that reads it.
 * Remove `repo` when done.
 */
export const serve = async (github: FakeGitHub, files: GitRepo.Files, fullName = `acme/${unique()}`) => {
  const repo = await GitRepo.withFiles(files)
  github.addRepository(fullName, repo)
  const githubToken = `ghp_${unique()}${unique()}`
  github.addToken(githubToken, [fullName])
  return { repo, fullName, githubToken }
}

export interface ConnectOptions {
  /** The account the instance reads through: one the organization has, or a new one made of this body. */
  readonly account: typeof CreateConnectorAccountRequest.Encoded | typeof ConnectorAccount.Encoded
  /** The repository, `owner/name`. */
  readonly remoteId: string
  /** The branch the target follows; default `main`. */
  readonly branch?: string | undefined
  /** The instance's `config`. */
  readonly config?: typeof CreateConnectorInstanceRequest.Encoded["config"] | undefined
}

/**
 * In the active organization of `token` (an owner's or an admin's): the account (made unless given), an instance of
 * `remoteId` named `Repo <random>`, and a target following `branch`.
 */
export const connect = async (url: string, token: string, options: ConnectOptions) => {
  const { post } = Http.verbs(() => url)
  const account = "id" in options.account
    ? options.account
    : Http.expectStatus<typeof ConnectorAccountResponse.Encoded>(
      "account",
      await post("/v1/connector-accounts", { token, body: options.account }),
      201
    ).item
  const instance = Http.expectStatus<typeof ConnectorInstanceResponse.Encoded>("instance", await post("/v1/connector-instances", {
    token,
    body: { connectorAccountId: account.id, name: `Repo ${unique()}`, remoteId: options.remoteId, ...(options.config ? { config: options.config } : {}) }
  }), 201).item
  const target = Http.expectStatus<typeof ConnectorTargetResponse.Encoded>("target", await post(`/v1/connector-instances/${instance.id}/targets`, {
    token,
    body: { externalTargetRef: options.branch ?? "main" }
  }), 201).item
  return { account, instance, target }
}

export interface FollowOptions {
  /** The server's base URL. */
  readonly url: string
  readonly github: FakeGitHub
  /** The repository's first commit. */
  readonly files: GitRepo.Files
  readonly branch?: string | undefined
  /** The instance's `config`. */
  readonly config?: ConnectOptions["config"]
}

/**
 * `files` served (`serve`) and, in the active organization of `person` (an owner or an admin), a token account of
 * the repository's token, an instance of it and a target following `branch` (default `main`). Remove `repo` when done.
 */
export const followRepositoryAs = async (person: { readonly token: string }, options: FollowOptions) => {
  const served = await serve(options.github, options.files)
  const connected = await connect(options.url, person.token, {
    account: { kind: "token", token: served.githubToken, accountLogin: "acme" },
    remoteId: served.fullName,
    branch: options.branch,
    config: options.config
  })
  return { ...served, token: person.token, ...connected }
}

/** `followRepositoryAs` by `owner`, default a new owner's organization; answers the owner too. Remove `repo` when done. */
export const followRepository = async (options: FollowOptions & { readonly owner?: Owner | undefined }) => {
  const owner = options.owner ?? await Http.owner(options.url)
  return { owner, ...await followRepositoryAs(owner, options) }
}

/** Polls a sync event until it is no longer queued or running (at most 30 s); answers it. */
export const settled = async (url: string, token: string, eventId: string) => {
  for (let i = 0; i < 600; i++) {
    const event = Http.expectStatus<typeof ConnectorSyncEventDetail.Encoded>(
      "event",
      await Http.request(url, "GET", `/v1/connector-sync-events/${eventId}`, { token }),
      200
    ).item
    if (event.status !== "queued" && event.status !== "running") return event
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`sync event ${eventId} did not settle`)
}
