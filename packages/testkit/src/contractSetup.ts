/**
 * Vitest setup of the "database" project (vitest.config.ts), run in each of its test files: every answer a test
 * server sent during a test must be what the OpenAPI document declares (`ContractWatch.ts` checks,
 * `ContractFindings.ts` keeps what it found); the test fails otherwise, listing each answer that is not. What a file's
 * `beforeAll` caused fails its first test; what came after its last test, the file. In a `describe.concurrent` block,
 * an answer fails the test that ends first after it.
 */
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, afterEach } from "vitest"
import * as ContractFindings from "./ContractFindings.js"

ContractFindings.collect(Path.join(Os.tmpdir(), `orgplane-contract-${process.pid}-${Date.now()}.jsonl`))

afterEach(ContractFindings.assertDeclared)
afterAll(ContractFindings.assertDeclared)
