/**
 * @orgplane/server: the server's public names (the first block), with the namespaces the CLI's commands use beside
 * them.
 */
export {
  ApiLayer,
  createHttpServer,
  layer,
  makeNodeListener,
  makeWebHandler,
  type ServerOptions,
  shutdownGraceMillis,
  startupHoldMillis,
  teardown
} from "./Server.js"
export { clientErrorListener } from "./platform/ClientErrors.js"
export { routes as docsRoutes } from "./platform/Docs.js"
export { pathAmbiguity } from "./platform/Routes.js"
export { environment } from "./Environment.js"
export { layer as configLayer, ServerConfig, type ServerSettings, settingsConfig } from "./platform/Config.js"
export * as Database from "./platform/Database.js"
export * as DatabaseDump from "./platform/DatabaseDump.js"
export { type Migration, migrate } from "./platform/Migrator.js"
export { migrations } from "./migrations/index.js"
export { formatLogger, layer as observabilityLayer, loggerLayer, requestIdHeader } from "./platform/RequestLog.js"
export { IdGenerator } from "./platform/Ids.js"
export { Crypto, keyFileOf, parseKeys } from "./platform/Crypto.js"
export * as InstanceSecrets from "./platform/InstanceSecrets.js"
export * as StoredSecrets from "./platform/StoredSecrets.js"
export * as TelemetryPartitions from "./telemetry/Partitions.js"
export { audit as AuditPartitions } from "./audit/Partitions.js"
export * as MachineRecovery from "./identity/MachineRecovery.js"

export * as Server from "./Server.js"
export { Api } from "./Api.js"
export * as Config from "./platform/Config.js"
export * as DatabaseStatus from "./platform/DatabaseStatus.js"
