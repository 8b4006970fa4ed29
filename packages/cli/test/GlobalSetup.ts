/**
 * Once per run, before any file: the `orgplane` bundle as it is published (test/Bundle.ts), for the tests that run
 * the executable (Binary.test.ts) and for the servers the tests start in processes of their own
 * (client/test/RealServer.ts), which start from it in about a second where the sources through tsx take three or
 * four. Removed when the run ends.
 */
import type { TestProject } from "vitest/node"
import * as Bundle from "./Bundle.js"

export default async function setup(project: TestProject) {
  const bundle = Bundle.make(`run-${process.pid}`)
  await bundle.build()
  project.provide("orgplaneBin", bundle.bin)
  return () => bundle.dispose()
}
