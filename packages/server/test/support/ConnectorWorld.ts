/**
 * What the connector HTTP tests share (test/http/: Connector*.test.ts but the Postgres-only ConnectorSyncDurable,
 * Webhook.test.ts, ComponentFiles.test.ts): testkit's FakeGitHub, and a server on a fresh migrated database that has
 * it as its code host (API, GitHub App and webhook secret) and shares the database with the test (`sql`); with the
 * requests those tests make again and again, answered in the API's wire types (testkit's Connectors.ts): a repository
 * followed by an organization, an organization connected to a repository, "sync now", a sync event waited for.
 * `forFile` is a test file's world, started before its first test and closed after its last, with the repositories
 * it served.
 */
import type { SyncNowResponse } from "@orgplane/schema"
import type * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll } from "vitest"
import * as Connectors from "../../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../../packages/testkit/src/FakeGitHub.js"
import type * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "./HttpServer.js"

export interface Options {
  /** FakeGitHub's `treeLimit`: the entries a recursive tree listing gives before it says `truncated`. */
  readonly treeLimit?: number | undefined
}

/** The settings that make `github` a server's code host: its API, its GitHub App and its webhook secret. */
export const codeHostOf = (github: FakeGitHub.FakeGitHub) => ({
  codehostApiUrl: github.url,
  codehostAppId: github.appId,
  codehostPrivateKey: github.privateKeyPem,
  codehostWebhookSecret: github.webhookSecret
})

/**
 * How `follow` follows: testkit's `followRepository` choices (whose organization, the branch, the instance's config),
 * and `url`, another server of the test's that has this world's code host (default: the world's server).
 */
export interface FollowOptions {
  readonly owner?: Connectors.Owner | undefined
  readonly branch?: Connectors.FollowOptions["branch"]
  readonly config?: Connectors.FollowOptions["config"]
  readonly url?: string | undefined
}

interface Running {
  readonly github: FakeGitHub.FakeGitHub
  readonly server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
}

/** A world not started yet: `start` starts FakeGitHub and the server, `close` closes them and removes what was served. */
export const make = (options: Options = {}) => {
  let running: Running | undefined
  const served: Array<GitRepo.GitRepo> = []
  const current = () => {
    if (running === undefined) throw new Error("ConnectorWorld: not started (read before the file's beforeAll ran?)")
    return running
  }
  const url = () => current().server.url
  const verbs = Http.verbs(url)
  const kept = <A extends { readonly repo: GitRepo.GitRepo }>(repository: A) => {
    served.push(repository.repo)
    return repository
  }

  /** Polls the event until it is no longer queued or running; answers it. */
  const settled = (token: string, eventId: string) => Connectors.settled(url(), token, eventId)

  /** "Sync now" of the instance: its targets' events, as the 202 answers them (queued, or the pending ones). */
  const syncNow = async (token: string, instanceId: string) =>
    Http.expectStatus<typeof SyncNowResponse.Encoded>("sync", await verbs.post(`/v1/connector-instances/${instanceId}/sync`, { token }), 202).items

  return {
    ...verbs,
    start: async (): Promise<void> => {
      const github = await FakeGitHub.start(options.treeLimit === undefined ? {} : { treeLimit: options.treeLimit })
      try {
        running = { github, server: await TestServer.startSharingDatabase(codeHostOf(github)) }
      } catch (error) {
        await github.close()
        throw error
      }
    },
    close: async (): Promise<void> => {
      const stopping = running
      running = undefined
      await stopping?.server.close()
      await stopping?.github.close()
      await Promise.all(served.splice(0).map((repo) => repo.remove()))
    },
    /** The server's base URL, `http://127.0.0.1:<port>`. */
    get url() {
      return url()
    },
    get github() {
      return current().github
    },
    /** The settings that make this world's FakeGitHub the code host of another server of the test's. */
    get codeHost() {
      return codeHostOf(current().github)
    },
    /** Runs statements on the server's database, for what no endpoint writes or reads. */
    sql: <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => current().server.sql(use),
    /**
     * `files` served as a new repository (`fullName`, default `acme/<random>`) with a token of its own; removed with
     * the world.
     */
    serve: async (files: GitRepo.Files, fullName?: string) => kept(await Connectors.serve(current().github, files, fullName)),
    /**
     * `files` served as a new repository and followed, in `owner`'s organization (default a new owner's), by a token
     * account of the repository's token, an instance and a target on `branch` (default `main`); the repository is
     * removed with the world.
     */
    follow: async (files: GitRepo.Files, how: FollowOptions = {}) =>
      kept(await Connectors.followRepository({ ...how, url: how.url ?? url(), github: current().github, files })),
    /** As `follow`, in the active organization of `person`, an owner or an admin. */
    followAs: async (person: { readonly token: string }, files: GitRepo.Files, how: Omit<FollowOptions, "owner"> = {}) =>
      kept(await Connectors.followRepositoryAs(person, { ...how, url: how.url ?? url(), github: current().github, files })),
    /** In the active organization of `token`: an account (made unless given), an instance of a repository, its target. */
    connect: (token: string, how: Connectors.ConnectOptions) => Connectors.connect(url(), token, how),
    syncNow,
    /** "Sync now" of the instance's one target, waited for: the event as it settled. */
    synced: async (token: string, instanceId: string) => {
      const [event] = await syncNow(token, instanceId)
      return settled(token, event.id)
    },
    settled
  }
}

export type World = ReturnType<typeof make>

/** The test file's world: started by a `beforeAll` (before the file's own), closed by an `afterAll` (after its own). */
export const forFile = (options: Options = {}): World => {
  const world = make(options)
  beforeAll(world.start, 60_000)
  afterAll(world.close)
  return world
}
