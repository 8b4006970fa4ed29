/**
 * @orgplane/schema on Effect 4, ported module by module from packages/schema (issue 46, step 3). A module here is
 * the Effect 4 form of the one of the same name there, and its tests hold it to the Effect 3 package's OpenAPI
 * document (packages/schema/test/fixtures/openapi.json) and behaviour; when every module is here, this package takes
 * packages/schema's place and name.
 */
export * from "./AuditCatalog.js"
export * from "./BodyLimit.js"
export * from "./Common.js"
export * from "./Urls.js"
export * from "./Errors.js"
export * from "./Ids.js"
export * from "./Organizations.js"
export * from "./OrganizationsApi.js"
export * from "./Pagination.js"
export * from "./Policy.js"
export * from "./Roles.js"
export * from "./Security.js"
export * from "./System.js"
export * from "./SystemApi.js"
export * from "./Users.js"
export * from "./UsersApi.js"
export * from "./McpDiagnostics.js"
export * from "./RequestIssues.js"
export * from "./ApiOf.js"
export * from "./Idempotency.js"
