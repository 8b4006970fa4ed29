/**
 * Vitest global setup: migrates one embedded database and dumps it to a file once per test run, so every test
 * file loads that template (~0.3 s) instead of running initdb and the migrations again (seconds); and writes the
 * OpenAPI document once, which every test file's response checker reads (`ContractFindings.ts`).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { openApiDocument } from "@orgplane/schema"
import { Effect } from "effect"
import { documentVariable } from "./ContractFindings.js"
import { makeTemplate } from "./TestDatabase.js"

export default async function setup() {
  const file = Path.join(Os.tmpdir(), `orgplane-template-${process.pid}-${Date.now()}.tar`)
  const blob = await Effect.runPromise(makeTemplate)
  await Fs.writeFile(file, Buffer.from(await blob.arrayBuffer()))
  process.env.ORGPLANE_TEST_TEMPLATE = file
  const document = Path.join(Os.tmpdir(), `orgplane-openapi-${process.pid}-${Date.now()}.json`)
  await Fs.writeFile(document, JSON.stringify(openApiDocument()))
  process.env[documentVariable] = document
  return async () => {
    await Fs.rm(file, { force: true })
    await Fs.rm(document, { force: true })
  }
}
