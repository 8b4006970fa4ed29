/**
 * Writes the API's OpenAPI document, as `OpenApi.fromApi(Api)` makes it, to `packages/schema/test/fixtures/openapi.json`
 * (`pnpm openapi:fixture`). The fixture is the contract the Effect 4 move is held to (issue 46: the document before
 * and after, compared whole); `OpenApiFixture.test.ts` fails while it differs from the document, so a change to the
 * API made on purpose writes it again here, in the same commit.
 */
import * as OpenApi from "@effect/platform/OpenApi"
import * as Fs from "node:fs"
import { Api } from "../src/index.js"

const target = new URL("../test/fixtures/openapi.json", import.meta.url)
Fs.writeFileSync(target, `${JSON.stringify(OpenApi.fromApi(Api), null, 2)}\n`)
console.log(`wrote ${target.pathname}`)
