/** A candidate while a layout drafts it, the stage a layout answers, and the finished `DiscoveredPlugin`s. */
import {
  type AgentPluginsSchemaVersion,
  type ComponentPaths,
  DiscoveredPlugin,
  type DiscoveredPluginSourceKind,
  type DiscoveredSkippedFile,
  type JsonObject,
  type RepositoryClassification
} from "@orgplane/schema"
import { skippedAtDiscovery } from "./ImportPlans.js"
import { emptyPaths, kindsOf } from "./PluginComponents.js"
import { baseName, type Entry } from "./RepositoryTree.js"

export interface Draft {
  readonly key: string
  readonly rootPath: string
  readonly displayName: string | null
  readonly description: string | null
  readonly supported: boolean
  readonly manifestPath: string | null
  readonly warnings: ReadonlyArray<string>
  readonly componentPaths: ComponentPaths
  readonly metadata: JsonObject
  readonly sourceKind: DiscoveredPluginSourceKind
  readonly sourceSchemaVersion: AgentPluginsSchemaVersion | null
  /** Declared paths its import will not take (`declaredPaths`); `finish` adds what the tree tells. */
  readonly skippedFiles?: ReadonlyArray<DiscoveredSkippedFile>
}

export const rootKey = (root: string) => (root === "" ? "root" : root)

/**
 * Keys are unique within a discovery even when two sources would give the same one (a folder named `root` beside a
 * root plugin, an external entry named like a local folder): the later one gets `#2`, `#3`, in discovery order, so
 * the same layout always gives the same keys.
 */
export const finish = (drafts: ReadonlyArray<Draft>, entries: ReadonlyArray<Entry>): Array<DiscoveredPlugin> => {
  const seen = new Map<string, number>()
  return drafts.map((draft) => {
    const count = (seen.get(draft.key) ?? 0) + 1
    seen.set(draft.key, count)
    const unsupported = !draft.supported
    return new DiscoveredPlugin({
      key: count === 1 ? draft.key : `${draft.key}#${count}`,
      rootPath: draft.rootPath,
      displayName: draft.displayName ?? (draft.rootPath === "" ? "Repository plugin" : baseName(draft.rootPath)),
      description: draft.description,
      // Selected by default exactly when supported.
      selectedByDefault: !unsupported,
      supported: !unsupported,
      manifestPath: draft.manifestPath,
      warnings: draft.warnings,
      componentKinds: unsupported ? [] : kindsOf(draft.componentPaths),
      componentPaths: unsupported ? emptyPaths() : draft.componentPaths,
      metadata: draft.metadata,
      sourceKind: draft.sourceKind,
      sourceSchemaVersion: draft.sourceSchemaVersion,
      // An unsupported candidate imports nothing: its warnings say why, file by file would repeat them.
      skippedFiles: unsupported ? [] : [...(draft.skippedFiles ?? []), ...skippedAtDiscovery(draft, entries)]
    })
  })
}

/** What one layout found: its classification, its candidates in order, and its warnings. */
export interface Stage {
  readonly classification: RepositoryClassification
  readonly drafts: ReadonlyArray<Draft>
  readonly warnings: ReadonlyArray<string>
}
