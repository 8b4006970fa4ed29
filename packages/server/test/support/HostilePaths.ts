/**
 * Path arguments that name another path, and the calls that carry them: every served MCP operation with a path
 * parameter, one parameter at a time given a hostile value (the others the example values of the published OpenAPI
 * document). Shared by the `/mcp` and `orgplane mcp serve` tests of the rule that an operation runs only as itself.
 */
import { Catalog } from "@orgplane/mcp"
import type { Operation } from "@orgplane/schema"
import * as fc from "fast-check"

/** The values each case is tried with: dot segments raw, percent-encoded and full-width, with slashes raw and encoded. */
export const named: ReadonlyArray<string> = [".", "..", "%2e%2e", ".%2E", "．．", "a/..", "..%2F.."]

/** More of them, made of the same pieces: what a property draws beside the named ones. */
export const hostile: fc.Arbitrary<string> = fc
  .array(fc.constantFrom(".", "..", "%2e", "%2E", "．", "。", "/", "%2F", "%2f", "\\", "%5C", "a"), { minLength: 1, maxLength: 5 })
  .map((parts) => parts.join(""))

export interface Case {
  readonly operation: Operation
  /** The parameter given the hostile value. */
  readonly parameter: string
  /** The call's arguments with `value` in that parameter. */
  readonly args: (value: string) => Record<string, string>
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A parameter's example value, as the operation's input schema (the OpenAPI document's) gives it. */
const exampleOf = (operation: Operation, name: string): string => {
  const properties = Catalog.inputSchemaOf(operation).properties
  const schema = isObject(properties) ? properties[name] : undefined
  if (!isObject(schema)) return "x"
  const examples = schema.examples
  const values = schema.enum
  const example = Array.isArray(examples) ? examples[0] : Array.isArray(values) ? values[0] : undefined
  return typeof example === "string" ? example : "x"
}

/** Every served operation with a path parameter, once per parameter. */
export const cases = (): ReadonlyArray<Case> =>
  Catalog.served().flatMap((operation) =>
    operation.pathParameters.map((parameter) => {
      const others = Object.fromEntries(operation.pathParameters.map((name) => [name, exampleOf(operation, name)]))
      return { operation, parameter, args: (value: string) => ({ ...others, [parameter]: value }) }
    })
  )

/**
 * Runs `check` on every case with every named value, then as a property on cases and drawn values (`runs` of them):
 * what a test of the rule calls, over `/mcp` or `orgplane mcp serve`. Answers how many calls it checked.
 */
export const tryAll = async (check: (hostileCase: Case, value: string) => Promise<void>, runs = 100): Promise<number> => {
  const all = cases()
  for (const hostileCase of all) for (const value of named) await check(hostileCase, value)
  await fc.assert(fc.asyncProperty(fc.constantFrom(...all), hostile, check), { numRuns: runs })
  return all.length * named.length + runs
}
