/**
 * Vitest global setup: migrates one embedded database and dumps it to a file once per test run, so every test
 * file loads that template (~0.3 s) instead of running initdb and the migrations again (seconds).
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"
import { makeTemplate } from "./TestDatabase.js"

export default async function setup() {
  const file = Path.join(Os.tmpdir(), `orgplane-template-${process.pid}-${Date.now()}.tar`)
  const blob = await Effect.runPromise(makeTemplate)
  await Fs.writeFile(file, Buffer.from(await blob.arrayBuffer()))
  process.env.ORGPLANE_TEST_TEMPLATE = file
  return async () => {
    await Fs.rm(file, { force: true })
  }
}
