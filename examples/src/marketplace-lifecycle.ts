/**
 * A marketplace's life as its maintainers change it, followed by orgplane's connector (docs/connectors.md): the demo
 * marketplace (`examples/marketplace/`) committed into a throwaway repository served on loopback by the test kit's
 * GitHub-compatible server, imported with the Promise client, then changed commit by commit, each commit followed by
 * a sync: a version bump, a rename, the entry removed, a trailing comma, the repair. Each step prints what the sync
 * said; the example exits non-zero when one did not do what the step expects.
 *
 *   pnpm --filter @orgplane/examples marketplace-lifecycle
 *
 * Without ORGPLANE_URL it starts a throwaway orgplane server reading the loopback code host.
 */
import { createClient, type OrgplanePromiseClient } from "@orgplane/client"
import type { ConnectorSyncEvent } from "@orgplane/schema"
import { FakeGitHub, type GitRepo } from "@orgplane/testkit"
import * as NodeCrypto from "node:crypto"
import { demoRepository } from "./local-marketplace.js"
import { startLocalServer } from "./local-server.js"
import { demoOrganization } from "./publish-skill.js"

export interface LifecycleOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly github: FakeGitHub.FakeGitHub
  readonly repository: GitRepo.GitRepo
  readonly log?: (line: string) => void
}

/** One step: what was committed, how the sync ended, what it said of the plugin, and whether that is what was expected. */
export interface Step {
  readonly step: string
  readonly status: string
  readonly said: string
  readonly plugin: { readonly name: string; readonly status: string; readonly version: string | null; readonly inMarketplace: boolean }
  readonly expected: boolean
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

const marketplaceJson = (plugins: ReadonlyArray<{ readonly name: string }>) =>
  json({
    name: "local-tools",
    owner: { name: "Platform team" },
    plugins: plugins.map(({ name }) => ({ name, source: "./plugins/release-tools", description: "Write changelogs and check versions before a release." }))
  })

const manifest = (name: string, version: string) =>
  json({ name, version, description: "Write changelogs and check versions before a release." })

export const followLifecycle = async (options: LifecycleOptions): Promise<ReadonlyArray<Step>> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const fullName = `local/lifecycle-${NodeCrypto.randomBytes(4).toString("hex")}`
  options.github.addRepository(fullName, options.repository)
  const githubToken = `ghp_local${NodeCrypto.randomBytes(12).toString("hex")}`
  options.github.addToken(githubToken, [fullName])
  const client: OrgplanePromiseClient = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  try {
    const settle = async (first: ConnectorSyncEvent) => {
      let event = first
      for (let i = 0; i < 600 && (event.status === "queued" || event.status === "running"); i++) {
        await sleep(100)
        event = (await client.connectorSyncEvents.get({ path: { connectorSyncEventId: event.id } })).item
      }
      return event
    }
    const { item: account } = await client.connectorAccounts.create({ payload: { kind: "token", token: githubToken, accountLogin: "local" } })
    const { item: instance } = await client.connectorInstances.create({ payload: { connectorAccountId: account.id, name: fullName, remoteId: fullName } })
    await client.connectorInstances.createTarget({ path: { connectorInstanceId: instance.id }, payload: { externalTargetRef: "main" } })
    const { item: discovery } = await client.connectorInstances.discover({ path: { connectorInstanceId: instance.id } })
    const keys = discovery.discoveredPlugins.filter((plugin) => plugin.supported).map((plugin) => plugin.key)
    const { item: applied } = await client.connectorInstances.applyDiscovery({ path: { connectorInstanceId: instance.id }, payload: { keys } })
    const pluginId = applied.plugins[0]!.pluginId
    const marketplaceId = applied.marketplaceId!

    const steps: Array<Step> = []
    const record = async (step: string, event: ConnectorSyncEvent, expect: (event: ConnectorSyncEvent) => boolean) => {
      const { item: plugin } = await client.plugins.get({ path: { pluginId } })
      const said = event.status === "failed"
        ? event.lastError ?? "failed"
        : [
          `${event.summary?.created ?? 0} created, ${event.summary?.updated ?? 0} updated, ${event.summary?.deleted ?? 0} deleted`,
          ...(event.summary?.followedPlugins ?? []).map((followed) =>
            `${followed.change}${followed.previousName === null ? "" : ` from ${followed.previousName}`}`
          )
        ].join("; ")
      const seen: Step = {
        step,
        status: event.status,
        said,
        plugin: {
          name: plugin.name,
          status: plugin.status,
          version: plugin.sourceMetadata?.version ?? null,
          inMarketplace: plugin.marketplaces.some((listed) => listed.id === marketplaceId)
        },
        expected: expect(event)
      }
      steps.push(seen)
      log(`${seen.expected ? "ok " : "NOT"} ${step}: sync ${event.status} (${said}); plugin ${seen.plugin.name} ${seen.plugin.status}, version ${seen.plugin.version ?? "-"}${seen.plugin.inMarketplace ? ", in the marketplace" : ", not in the marketplace"}`)
    }
    const change = async (step: string, files: GitRepo.Files, expect: (event: ConnectorSyncEvent) => boolean) => {
      await options.repository.commitFiles(files, step)
      const { items } = await client.connectorInstances.sync({ path: { connectorInstanceId: instance.id } })
      await record(step, await settle(items[0]!), expect)
    }
    const followed = (event: ConnectorSyncEvent, kind: string) =>
      event.status === "completed" && (event.summary?.followedPlugins ?? []).some((plugin) => plugin.change === kind)

    await record("import", await settle(applied.syncEvent), (event) => event.status === "completed" && event.summary?.created === 3)
    await change("change: version 1.1.0", { "plugins/release-tools/.claude-plugin/plugin.json": manifest("release-tools", "1.1.0") }, (event) => followed(event, "updated"))
    await change("rename: release-kit", {
      ".claude-plugin/marketplace.json": marketplaceJson([{ name: "release-kit" }]),
      "plugins/release-tools/.claude-plugin/plugin.json": manifest("release-kit", "1.1.0")
    }, (event) => followed(event, "renamed"))
    await change("remove: the entry", { ".claude-plugin/marketplace.json": marketplaceJson([]) }, (event) => followed(event, "left"))
    await change("break: a trailing comma", {
      ".claude-plugin/marketplace.json": marketplaceJson([{ name: "release-kit" }]).replace(/\}\n {2}\]/, "},\n  ]")
    }, (event) => event.status === "failed" && (event.lastError ?? "").includes("marketplace.json` is not valid JSON (line"))
    await change("repair", { ".claude-plugin/marketplace.json": marketplaceJson([{ name: "release-kit" }]) }, (event) => followed(event, "returned"))
    return steps
  } finally {
    await client.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "") {
    console.error("this example starts its own server and code host: run it without ORGPLANE_URL")
    process.exit(2)
  }
  const github = await FakeGitHub.start()
  const local = await startLocalServer({ codehostApiUrl: github.url })
  const repository = await demoRepository()
  try {
    const { apiKey } = await demoOrganization(local.url)
    const steps = await followLifecycle({ baseUrl: local.url, apiKey, github, repository })
    if (steps.some((step) => !step.expected)) process.exitCode = 1
  } finally {
    await local.close()
    await github.close()
    await repository.remove()
  }
}
