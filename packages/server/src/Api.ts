/**
 * The API this server serves: @orgplane/schema's `Api`, every group. Its OpenAPI annotations only
 * shape the document, which /openapi.json serves from the schema's `openApiDocument` (platform/Docs.ts).
 */
export { Api } from "@orgplane/schema"
