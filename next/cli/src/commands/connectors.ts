/**
 * `orgplane connectors`: syncing config objects from GitHub. The command tree: code-host accounts
 * (connectorAccounts.ts), instances with their grants (connectorInstances.ts), targets (connectorTargets.ts),
 * mappings (connectorMappings.ts), and discovery and syncs (connectorSync.ts). Owners and admins connect accounts
 * and create instances; the rest is per instance (viewer reads, editor changes, manager removes and shares).
 */
import { ConnectorAccountsApi, ConnectorInstancesApi, ConnectorMappingsApi, ConnectorSyncEventsApi, ConnectorTargetsApi } from "@orgplane-next/schema"
import * as Commands from "../Commands.js"
import { accounts } from "./connectorAccounts.js"
import { instances } from "./connectorInstances.js"
import { mappings } from "./connectorMappings.js"
import { apply, discover, resync, sync, syncs, tree } from "./connectorSync.js"
import { targets } from "./connectorTargets.js"

export const connectors = Commands.group(
  "connectors",
  "Sync config objects from GitHub: connected accounts, instances (one repository each), their targets and mappings, discovery and syncs.",
  [accounts, instances, targets, mappings, discover, tree, apply, sync, resync, syncs],
  [ConnectorAccountsApi, ConnectorInstancesApi, ConnectorMappingsApi, ConnectorSyncEventsApi, ConnectorTargetsApi]
)
