/**
 * Discovery of plugin candidates in a code-hosting repository branch: the tree entries it scans, the candidates it
 * finds (with their component paths), its steps and summary, and the import plans a selected candidate becomes.
 * The discovery result itself (which embeds the connector instance and target) is composed in the connectors module.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { JsonObject } from "./ConfigObjects.js"

export const TreeEntryKind = Schema.Literals(["blob", "tree"]).annotate({
  identifier: "TreeEntryKind",
  description: "`blob` for a file, `tree` for a folder. Submodules and symbolic-link targets are not listed."
})
export type TreeEntryKind = typeof TreeEntryKind.Type

/**
 * One entry of the repository tree. Folders are listed too (so a client can browse by `prefix`); a folder has the
 * sha of its git tree and, since git gives folders no size, `size` 0.
 */
export class TreeEntry extends Schema.Class<TreeEntry>("TreeEntry")(Schema.Struct({
  id: Schema.String.annotate({ description: "The entry's path: stable for one path, and the list's cursor." }),
  kind: TreeEntryKind,
  path: Schema.String.annotate({
    description: "The path from the repository root, with `/` between segments and no leading or trailing `/`."
  }),
  sha: Schema.String.annotate({ description: "The git object id of the file's blob or of the folder's tree." }),
  size: Schema.Int.annotate({ description: "The file's size in bytes; 0 for a folder." })
}).annotate({
  examples: [{
    id: "skills/deploy-to-staging/SKILL.md",
    kind: "blob",
    path: "skills/deploy-to-staging/SKILL.md",
    sha: "3b18e512dba79e4c8300dd08aeb37f8e728b8dad",
    size: 412
  }]
})) {}

/** What a plugin can bring, in the order `componentKinds` lists them. */
export const ComponentKind = Schema.Literals([
  "skill",
  "command",
  "agent",
  "hook",
  "mcp_server",
  "lsp_server",
  "monitor",
  "settings"
]).annotate({
  identifier: "ComponentKind",
  description:
    "A kind of plugin component: `skill`, `command`, `agent`, `hook`, `mcp_server`, `lsp_server`, `monitor`, `settings`."
})
export type ComponentKind = typeof ComponentKind.Type
export const ComponentKinds = ComponentKind.literals

const paths = (what: string) =>
  Schema.Array(Schema.String).annotate({ description: `${what} (paths from the repository root).` })

/** Where each kind of component of a candidate lives; a kind it does not have is an empty array. */
export const ComponentPaths = Schema.Struct({
  agents: paths("Folders of agent Markdown files, or single agent files"),
  commands: paths("Folders of command Markdown files, or single command files"),
  hooks: paths("Hook configuration files (JSON), or folders holding them"),
  lspServers: paths("LSP server configuration files"),
  mcpServers: paths("MCP server configuration files"),
  monitors: paths("Monitor configuration files"),
  settings: paths("Settings files"),
  skills: paths("Folders holding skill folders (each with a `SKILL.md`), or single `SKILL.md` files")
}).annotate({ identifier: "ComponentPaths" })
export type ComponentPaths = typeof ComponentPaths.Type

export const DiscoveredPluginSourceKind = Schema.Literals(["marketplace_entry", "plugin_manifest", "agent_plugin_manifest"])
  .annotate({
    identifier: "DiscoveredPluginSourceKind",
    description:
      "What described the candidate: an entry of the repository's `.claude-plugin/marketplace.json` (`marketplace_entry`), a Claude `.claude-plugin/plugin.json` (`plugin_manifest`), or an Agent Plugins `plugin.json` (`agent_plugin_manifest`)."
  })
export type DiscoveredPluginSourceKind = typeof DiscoveredPluginSourceKind.Type

/** A file a candidate's components name that its import will not take, known from the tree and the manifests alone. */
export const DiscoveredSkippedFile = Schema.Struct({
  path: Schema.String.annotate({
    description: "The file, from the repository root (a path declared outside the plugin's folder: as the manifest wrote it)."
  }),
  reason: Schema.String.annotate({ description: "Why it will not be imported, naming the manifest and the field when one is at fault." })
}).annotate({ identifier: "DiscoveredSkippedFile" })
export type DiscoveredSkippedFile = typeof DiscoveredSkippedFile.Type

export const AgentPluginsSchemaVersion = Schema.Literals(["1.0.0", "1.1.0"]).annotate({
  identifier: "AgentPluginsSchemaVersion",
  description: "The Agent Plugins specification versions orgplane reads."
})
export type AgentPluginsSchemaVersion = typeof AgentPluginsSchemaVersion.Type

export class DiscoveredPlugin extends Schema.Class<DiscoveredPlugin>("DiscoveredPlugin")(Schema.Struct({
  key: Schema.String.annotate({
    description:
      "Stable for the same repository layout: `marketplace:<root>` (or `marketplace:<entry name>` for an external entry), `manifest:<root>` or `agent-plugin:<root>`, with `root` for the repository root. Select candidates by it."
  }),
  rootPath: Schema.String.annotate({ description: "The plugin's folder from the repository root; empty for the root itself." }),
  displayName: Schema.String.annotate({
    description:
      "The marketplace entry's name, else the manifest's `name`, else the folder's name, else `Repository plugin`."
  }),
  description: Schema.NullOr(Schema.String).annotate({
    description: "The marketplace entry's description, else the manifest's; null when neither has one."
  }),
  selectedByDefault: Schema.Boolean.annotate({ description: "Whether the candidate starts selected: the same as `supported`." }),
  supported: Schema.Boolean.annotate({
    description:
      "Whether orgplane can import it: false for a marketplace entry whose source is outside this repository (or missing from it), an unreadable manifest, or an Agent Plugins manifest with an invalid name. `warnings` says why."
  }),
  manifestPath: Schema.NullOr(Schema.String).annotate({
    description: "The plugin's manifest, from the repository root (also when it could not be used: `warnings` says why); null when the plugin has none."
  }),
  warnings: Schema.Array(Schema.String).annotate({ description: "What the candidate's owner may want to fix." }),
  componentKinds: Schema.Array(ComponentKind).annotate({
    description: "The kinds with at least one path in `componentPaths`, in the order of `ComponentKind`."
  }),
  componentPaths: ComponentPaths,
  metadata: JsonObject.annotateKey({
    description:
      "What the repository says about the plugin: the manifest's JSON object, over the marketplace entry's members for a marketplace entry; `{}` when there is neither."
  }),
  sourceKind: DiscoveredPluginSourceKind,
  sourceSchemaVersion: Schema.NullOr(AgentPluginsSchemaVersion).annotate({
    description: "The Agent Plugins version the manifest names; null for Claude plugins."
  }),
  // Left out on the wire: none, when decoding and when constructing. The member's description goes on its wire side,
  // which the document shows.
  skippedFiles: Schema.Array(DiscoveredSkippedFile).pipe(
    Schema.annotateEncoded({
      description:
      "The files its components name that importing it will not take, with the reason, as far as the tree and the manifests tell (a file over the size limit, a declared path missing from the branch, outside the plugin's folder or of a type its kind does not take, a kind orgplane does not import). What only reading a file tells (not UTF-8, unreadable front matter) the sync reports. Discoveries stored before 0.1.0 have none."
    }),
    Schema.withDecodingDefaultKey(Effect.succeed([])),
    Schema.withConstructorDefault(Effect.succeed([]))
  )
}).annotate({
  examples: [{
    key: "manifest:root",
    rootPath: "",
    displayName: "release-tooling",
    description: "Skills and commands for shipping services.",
    selectedByDefault: true,
    supported: true,
    manifestPath: ".claude-plugin/plugin.json",
    warnings: [],
    componentKinds: ["skill", "command"],
    componentPaths: { agents: [], commands: ["commands"], hooks: [], lspServers: [], mcpServers: [], monitors: [], settings: [], skills: ["skills"] },
    metadata: { name: "release-tooling", description: "Skills and commands for shipping services.", version: "1.2.0" },
    sourceKind: "plugin_manifest",
    sourceSchemaVersion: null,
    skippedFiles: [{ path: "commands/release-notes.txt", reason: "`.claude-plugin/plugin.json` declares it as commands, which take Markdown files only" }]
  }]
})) {}

export const DiscoveryStepId = Schema.Literals([
  "read_repository_structure",
  "check_marketplace_manifest",
  "check_plugin_manifests",
  "prepare_discovered_plugins"
]).annotate({ identifier: "DiscoveryStepId" })
export type DiscoveryStepId = typeof DiscoveryStepId.Type

export const DiscoveryStepStatus = Schema.Literals(["completed", "warning", "skipped"]).annotate({
  identifier: "DiscoveryStepStatus",
  description:
    "`completed`: the step found what it looks for; `warning`: it did not, or found something it could not use (see the warnings); `skipped`: an earlier step already decided, or there was nothing to check."
})
export type DiscoveryStepStatus = typeof DiscoveryStepStatus.Type

/** One of the four steps of a discovery, always listed in the same order. */
export const DiscoveryStep = Schema.Struct({
  id: DiscoveryStepId,
  label: Schema.String,
  status: DiscoveryStepStatus
}).annotate({ identifier: "DiscoveryStep" })
export type DiscoveryStep = typeof DiscoveryStep.Type

export const TreeSummary = Schema.Struct({
  scannedEntryCount: Schema.Int.annotate({ description: "How many files and folders discovery scanned." }),
  strategy: Schema.Literal("git-tree-recursive").annotate({
    description: "How the tree was read: git's recursive tree listing."
  }),
  truncated: Schema.Boolean.annotate({
    description:
      "Whether the code host cut its recursive listing short (it does for very large trees). orgplane then completes the listing by reading the folders it did not list one by one (`walkedSubtrees`), so the scan still covers the whole tree."
  }),
  walkedSubtrees: Schema.Int.annotate({
    description: "How many folders were read one by one to complete a cut listing; 0 when the listing was complete."
  })
}).annotate({ identifier: "TreeSummary" })
export type TreeSummary = typeof TreeSummary.Type

export const RepositoryClassification = Schema.Literals([
  "claude_marketplace_repo",
  "claude_single_plugin_repo",
  "claude_multi_plugin_repo",
  "agent_plugin_repo",
  "unsupported"
]).annotate({
  identifier: "RepositoryClassification",
  description:
    "How the repository is laid out: a Claude marketplace (a root `.claude-plugin/marketplace.json`), one Claude plugin at the root, several Claude plugins (`.claude-plugin/plugin.json` in folders), Agent Plugins (`plugin.json` naming an Agent Plugins `$schema`), or none of these (`unsupported`)."
})
export type RepositoryClassification = typeof RepositoryClassification.Type

/** The marketplace a `claude_marketplace_repo` describes in its `.claude-plugin/marketplace.json`. */
export const DiscoveredMarketplace = Schema.Struct({
  name: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  owner: Schema.NullOr(Schema.String).annotate({ description: "The owner's name, else login, as the manifest gives it." }),
  version: Schema.NullOr(Schema.String),
  manifestPath: Schema.String,
  entryCount: Schema.Int.annotate({ description: "How many plugin entries the manifest lists (local and external)." })
}).annotate({ identifier: "DiscoveredMarketplace" })
export type DiscoveredMarketplace = typeof DiscoveredMarketplace.Type

/** The config object types a discovered component becomes (LSP servers, monitors and settings are not imported). */
export const ImportObjectType = Schema.Literals(["skill", "agent", "command", "hook", "mcp"]).annotate({
  identifier: "ImportObjectType"
})
export type ImportObjectType = typeof ImportObjectType.Type

/** One mapping a selected candidate becomes: a selector over the tree, and the files it matches now. */
export const ImportPlan = Schema.Struct({
  objectType: ImportObjectType,
  selector: Schema.String.annotate({
    description: "`<folder>/**` for every file below a folder, or one file's exact path."
  }),
  files: Schema.Array(Schema.Struct({ path: Schema.String, sha: Schema.String }))
}).annotate({ identifier: "ImportPlan" })
export type ImportPlan = typeof ImportPlan.Type
