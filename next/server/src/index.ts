/**
 * @orgplane/server on Effect 4, ported module by module from packages/server (issue 46, step 3). A module here is the
 * Effect 4 form of the one of the same name there; when every module is here, this package takes packages/server's
 * place and name.
 */
export * as Server from "./Server.js"
export { Api } from "./Api.js"
export * as Config from "./platform/Config.js"
export { environment } from "./Environment.js"
export * as Database from "./platform/Database.js"
export * as DatabaseStatus from "./platform/DatabaseStatus.js"
export { type Migration, migrate } from "./platform/Migrator.js"
export { migrations } from "./migrations/index.js"
