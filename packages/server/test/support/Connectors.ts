/**
 * The connectors area's services for their tests, on a fresh migrated database: FakeGitHub (testkit: real git
 * repositories behind a GitHub-like REST API on 127.0.0.1, app JWTs verified, deliveries signed) started with the
 * layer and closed with it, the GitHub client through the outbound guard configured for it (app, token and webhook
 * secret), keys for the stored tokens, and the `Sync` stand-in of ConnectorSync.ts (with the in-memory workflow
 * engine `Sync`'s contract names, which the stand-in starts nothing on).
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import * as NodeCrypto from "node:crypto"
import * as FakeGitHub from "../../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import { Access } from "../../src/access/Access.js"
import * as Partitions from "../../src/audit/Partitions.js"
import { ComponentFilesRepository } from "../../src/catalog/ComponentFilesRepository.js"
import { ConfigObjectsRepository } from "../../src/catalog/ConfigObjectsRepository.js"
import { PluginsRepository } from "../../src/catalog/PluginsRepository.js"
import { CodeHostAccess } from "../../src/connectors/CodeHostAccess.js"
import { Connectors } from "../../src/connectors/Connectors.js"
import { ConnectorsRepository } from "../../src/connectors/ConnectorsRepository.js"
import { DiscoveryRepository } from "../../src/connectors/DiscoveryRepository.js"
import { DiscoveryService } from "../../src/connectors/DiscoveryService.js"
import { MappingsRepository } from "../../src/connectors/MappingsRepository.js"
import { Materializer } from "../../src/connectors/Materializer.js"
import { SourceBindingsRepository } from "../../src/connectors/SourceBindingsRepository.js"
import { SyncEventsRepository } from "../../src/connectors/SyncEventsRepository.js"
import { Webhook } from "../../src/connectors/Webhook.js"
import * as CodeHostConfig from "../../src/integrations/codehost/CodeHostConfig.js"
import { GitHub } from "../../src/integrations/codehost/GitHub.js"
import { AuditRecorder } from "../../src/platform/AuditRecorder.js"
import * as Config from "../../src/platform/Config.js"
import { Crypto, make as makeCrypto, parseKeys } from "../../src/platform/Crypto.js"
import { IdGenerator } from "../../src/platform/Ids.js"
import * as Outbound from "../../src/platform/Outbound.js"
import * as ConnectorSync from "./ConnectorSync.js"
import * as Db from "./IdentityDatabase.js"

/** The file's FakeGitHub, and the repositories added to it (removed with it). */
export class Fake extends Context.Service<Fake, { readonly gitHub: FakeGitHub.FakeGitHub; readonly repos: Array<GitRepo.GitRepo> }>()(
  "test/support/Connectors/Fake"
) {}

const fake = Layer.effect(
  Fake,
  Effect.acquireRelease(
    Effect.promise(async () => ({ gitHub: await FakeGitHub.start({ treeLimit: 60 }), repos: new Array<GitRepo.GitRepo>() })),
    ({ gitHub, repos }) => Effect.promise(async () => {
      await gitHub.close()
      await Promise.all(repos.map((repo) => repo.remove()))
    })
  )
)

const codeHost = Layer.unwrap(Fake.useSync(({ gitHub }) =>
  CodeHostConfig.layer({
    codehostApiUrl: gitHub.url,
    codehostAppId: gitHub.appId,
    codehostPrivateKey: gitHub.privateKeyPem,
    codehostWebhookSecret: gitHub.webhookSecret
  })))

const crypto = Layer.effect(Crypto, makeCrypto({ passwordCost: 10, keys: parseKeys(`k1:${NodeCrypto.randomBytes(32).toString("base64")}`) }))

const services = Layer.mergeAll(
  Connectors.layer,
  DiscoveryService.layer,
  Materializer.layer,
  Webhook.layer,
  CodeHostAccess.layer,
  Access.layer,
  ConnectorsRepository.layer,
  DiscoveryRepository.layer,
  MappingsRepository.layer,
  SourceBindingsRepository.layer,
  SyncEventsRepository.layer,
  ComponentFilesRepository.layer,
  ConfigObjectsRepository.layer,
  PluginsRepository.layer,
  AuditRecorder.layer
)

export const TestLayer = services.pipe(
  Layer.provideMerge(ConnectorSync.layer),
  Layer.provideMerge(WorkflowEngine.layerMemory),
  Layer.provideMerge(GitHub.layer.pipe(Layer.provide(Outbound.layer()))),
  Layer.provideMerge(codeHost),
  Layer.provideMerge(fake),
  Layer.provideMerge(crypto),
  // The audit recorder reads the server's settings: an empty environment's.
  Layer.provideMerge(Config.layer().pipe(Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))))),
  // The durable sync's outcome is audited: the month's partition of the log is made first.
  Layer.provideMerge(Layer.effectDiscard(Partitions.ensureAhead)),
  Layer.provideMerge(Layer.merge(Db.layer, IdGenerator.layer))
)

/** A repository of `files` served by the file's FakeGitHub as `fullName`. */
export const serve = Effect.fn("Connectors.serve")(function*(fullName: string, files: GitRepo.Files) {
  const { gitHub, repos } = yield* Fake
  const repo = yield* Effect.promise(() => GitRepo.withFiles(files))
  repos.push(repo)
  gitHub.addRepository(fullName, repo)
  return repo
})

/** The error an effect fails with, as its plain members (Effect 4 keeps `message` off the object's own). */
export const plain = (error: object): object => ({ ...error, ..."message" in error ? { message: error.message } : {} })
export const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), plain)
