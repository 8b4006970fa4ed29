/** After each test file, in record mode: its Effect 3 records written to `fixtures/effect3/<TestFile>.json` (effect3.ts). */
import { afterAll } from "@effect/vitest"
import { writeFixture } from "./effect3.js"

afterAll(writeFixture)
