/**
 * Finding plugin candidates in a repository tree, laid out as a Claude marketplace (ClaudeMarketplace), Claude
 * plugins (ClaudePlugins) or Agent Plugins (AgentPlugins), in that order. Pure: the caller lists the tree and
 * fetches manifest texts.
 */
import {
  type DiscoveredMarketplace,
  type DiscoveredPlugin,
  type DiscoveryStep,
  type DiscoveryStepStatus,
  type RepositoryClassification
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import { agentStage, isAgentManifestCandidate } from "./AgentPlugins.js"
import { MARKETPLACE_PATH, marketplaceStage, readMarketplace } from "./ClaudeMarketplace.js"
import { claudeStage, isClaudeManifest } from "./ClaudePlugins.js"
import { finish, type Stage } from "./PluginCandidates.js"
import { type ComponentKey, conventionalPaths } from "./PluginComponents.js"
import { type ManifestReader, readManifests } from "./PluginManifests.js"
import { type Entry, indexOf, isFile, type TreeIndex } from "./RepositoryTree.js"

export interface DiscoveryInput<E, R> extends ManifestReader<E, R> {
  /** The whole tree (the caller completes a truncated listing). */
  readonly entries: ReadonlyArray<Entry>
}

export interface DiscoveryOutcome {
  readonly classification: RepositoryClassification
  readonly candidates: ReadonlyArray<DiscoveredPlugin>
  readonly warnings: ReadonlyArray<string>
  readonly steps: ReadonlyArray<DiscoveryStep>
  readonly marketplace: DiscoveredMarketplace | null
}

const UNSUPPORTED =
  "orgplane supports Agent Plugins 1.0.0 and 1.1.0 and Claude-compatible plugins and marketplaces. Add `.claude-plugin/marketplace.json` or `.claude-plugin/plugin.json`, or an Agent Plugins `plugin.json` with its `$schema`, to this repository."

/** The unsupported warning, naming component folders that only lack a manifest. */
const unsupportedWarning = (index: TreeIndex) => {
  const found = conventionalPaths(index, "")
  // Not settings: a root `settings.json` is too common in other repositories to hint at a plugin.
  const keys: ReadonlyArray<ComponentKey> = ["skills", "commands", "agents", "hooks", "mcpServers"]
  const named = keys.flatMap((key) => found[key]).map((path) => `\`${path}\``)
  return named.length === 0 ? UNSUPPORTED : `${UNSUPPORTED} Found ${named.join(", ")} but no plugin manifest.`
}

const LABELS: Readonly<Record<DiscoveryStep["id"], string>> = {
  read_repository_structure: "Read repository structure",
  check_marketplace_manifest: "Check for Claude marketplace manifest",
  check_plugin_manifests: "Check for Agent Plugins or Claude plugin manifests",
  prepare_discovered_plugins: "Prepare discovered plugins"
}

/**
 * The four steps. A check that did not apply is `skipped`, so `warning` always means something to look at: an
 * unusable marketplace manifest, no manifests at all, or no candidate that can be imported.
 */
const stepsOf = (classification: RepositoryClassification, marketplaceFile: boolean, candidates: ReadonlyArray<DiscoveredPlugin>): Array<DiscoveryStep> => {
  const step = (id: DiscoveryStep["id"], status: DiscoveryStepStatus): DiscoveryStep => ({ id, label: LABELS[id], status })
  const marketplace = classification === "claude_marketplace_repo"
  return [
    step("read_repository_structure", "completed"),
    step("check_marketplace_manifest", marketplace ? "completed" : marketplaceFile ? "warning" : "skipped"),
    step("check_plugin_manifests", marketplace ? "skipped" : classification === "unsupported" ? "warning" : "completed"),
    step("prepare_discovered_plugins", candidates.some((candidate) => candidate.supported) ? "completed" : "warning")
  ]
}

/**
 * Discovers the plugin candidates of a tree, in this order: a root marketplace manifest decides alone;
 * else Claude plugin manifests; else Agent Plugins manifests; else the repository is unsupported. Only the
 * manifests the deciding stage needs are read, at most `maxManifests` of them, `concurrency` at a time. A broken
 * manifest is a warning on its candidate (or, for the marketplace, on the discovery, which then goes on to the
 * plugin manifests), never a failure: only `readText` failing fails it.
 */
export const discover = Effect.fn("Discovery.discover")(function*<E, R>(input: DiscoveryInput<E, R>): Effect.fn.Return<DiscoveryOutcome, E, R> {
  const index = indexOf(input.entries)
  const warnings: Array<string> = []
  let stage: Stage | undefined
  let marketplace: DiscoveredMarketplace | null = null

  const marketplaceFile = isFile(index, MARKETPLACE_PATH)
  if (marketplaceFile) {
    const reads = yield* readManifests(input, index, [MARKETPLACE_PATH])
    const found = readMarketplace(reads.manifests.get(MARKETPLACE_PATH)!)
    if (typeof found === "string") warnings.push(found)
    else {
      marketplace = found.marketplace
      stage = yield* marketplaceStage(input, index, found)
    }
  }
  if (stage === undefined) {
    const claude = index.sortedBlobPaths.filter(isClaudeManifest)
    if (claude.length > 0) stage = yield* claudeStage(input, index, claude)
  }
  if (stage === undefined) {
    const plain = index.sortedBlobPaths.filter(isAgentManifestCandidate)
    if (plain.length > 0) stage = yield* agentStage(input, index, plain)
  }
  const classification = stage?.classification ?? "unsupported"
  warnings.push(...(stage?.warnings ?? []))
  if (classification === "unsupported") warnings.push(unsupportedWarning(index))
  const candidates = finish(stage?.drafts ?? [], input.entries)
  return {
    classification,
    candidates,
    // One line per distinct problem: several external entries share one.
    warnings: [...new Set(warnings)],
    steps: stepsOf(classification, marketplaceFile, candidates),
    marketplace
  }
})
