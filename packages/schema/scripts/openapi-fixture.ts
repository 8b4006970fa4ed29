/**
 * Writes the API's OpenAPI document, as the server serves it (`openApiDocument()`), to
 * `packages/schema/test/fixtures/openapi.json`: the saved contract that Api.test.ts holds the generated document equal
 * to, and that the other schema tests read; and the organization document's JSON Schema to
 * `packages/schema/organization-document.schema.json`, which the package publishes (OrganizationDocument.test.ts holds
 * it equal to `organizationDocumentJsonSchema()`). Run it when the API changes on purpose, and review the diff (every
 * change there is one a client generated from the document sees), in the same commit as the change:
 *
 *   pnpm openapi:fixture
 */
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { openApiDocument, organizationDocumentJsonSchema } from "../src/index.js"

const write = (target: URL, value: unknown) => {
  Fs.writeFileSync(target, `${JSON.stringify(value, null, 2)}\n`)
  process.stdout.write(`wrote ${fileURLToPath(target)}: review the diff (git diff --stat, then git diff)\n`)
}
write(new URL("../test/fixtures/openapi.json", import.meta.url), openApiDocument())
write(new URL("../organization-document.schema.json", import.meta.url), organizationDocumentJsonSchema())
