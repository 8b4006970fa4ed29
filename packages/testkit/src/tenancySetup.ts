/**
 * Vitest setup of the "database" project (vitest.config.ts), run in each of its test files: after the file's tests,
 * every SQL statement its test databases ran must satisfy the tenancy rule (see Tenancy.ts); the file fails with the
 * offending statements listed otherwise.
 */
import { afterAll } from "vitest"
import { assertScoped } from "./Tenancy.js"

afterAll(() => assertScoped())
