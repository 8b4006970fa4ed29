/** Connector fixtures over the public API: a repository on FakeGitHub followed by a token account's instance. */
import type { FakeGitHub } from "./FakeGitHub.js"
import * as GitRepo from "./GitRepo.js"
import * as Http from "./Http.js"

const unique = () => Math.random().toString(36).slice(2, 10)

export interface FollowOptions {
  /** The server's base URL. */
  readonly url: string
  readonly github: FakeGitHub
  /** The repository's first commit. */
  readonly files: GitRepo.Files
  /** Whose organization follows it; default: a new owner's. */
  readonly owner?: Awaited<ReturnType<typeof Http.owner>> | undefined
  readonly branch?: string | undefined
  /** The instance's `config`. */
  readonly config?: object | undefined
}

/**
 * A new git repository served as `acme/<random>` to a token of its own, and in the owner's organization a token
 * account, an instance of that repository and a target following `branch` (default `main`). Remove `repo` when done.
 */
export const followRepository = async (options: FollowOptions) => {
  const { post } = Http.verbs(() => options.url)
  const ok = Http.expectStatus
  const repo = await GitRepo.withFiles(options.files)
  const fullName = `acme/${unique()}`
  options.github.addRepository(fullName, repo)
  const githubToken = `ghp_${unique()}${unique()}`
  options.github.addToken(githubToken, [fullName])
  const org = options.owner ?? await Http.owner(options.url)
  const token = org.token
  const account = ok("account", await post("/v1/connector-accounts", { token, body: { kind: "token", token: githubToken, accountLogin: "acme" } }), 201).item
  const instance = ok("instance", await post("/v1/connector-instances", {
    token,
    body: { connectorAccountId: account.id, name: `Repo ${unique()}`, remoteId: fullName, ...(options.config ? { config: options.config } : {}) }
  }), 201).item
  const target = ok("target", await post(`/v1/connector-instances/${instance.id}/targets`, {
    token,
    body: { externalTargetRef: options.branch ?? "main" }
  }), 201).item
  return { repo, fullName, githubToken, org, token, account, instance, target }
}

/** Polls a sync event until it is no longer queued or running (at most 30 s); answers it. */
export const settled = async (url: string, token: string, eventId: string) => {
  for (let i = 0; i < 600; i++) {
    const event = Http.expectStatus("event", await Http.request(url, "GET", `/v1/connector-sync-events/${eventId}`, { token }), 200).item
    if (event.status !== "queued" && event.status !== "running") return event
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`sync event ${eventId} did not settle`)
}
