/**
 * Vitest setup of every server test file (vitest.config.ts):
 * an answer a test server (`Contract.ts`) sent during a test that the OpenAPI document does not declare fails that
 * test; what a file's `beforeAll` caused fails its first test, what came after its last test, the file.
 */
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, afterEach } from "vitest"
import * as ContractFindings from "../../../../packages/testkit/src/ContractFindings.js"

ContractFindings.collect(Path.join(Os.tmpdir(), `orgplane-contract-${process.pid}-${Date.now()}.jsonl`))

afterEach(ContractFindings.assertDeclared)
afterAll(ContractFindings.assertDeclared)
