/**
 * Recorded client sequences as data, and their replayer: each step is one request as the client sends it, the
 * status it expects and the response fields it relies on; ids captured from one step's response are used by the
 * next (`${user}` in paths, bodies and expectations). A failed step stops the sequence: what follows depends on it.
 */
import { client as makeClient, describe, type Target } from "./Client.js"

/** A field of the response: a JSON value (objects match partially, arrays element by element), or a matcher. */
export type Expected = unknown | { readonly $absent: true } | { readonly $length: number } | { readonly $includes: unknown }

export interface Step {
  readonly name: string
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** Relative to the base URL; `${name}` is replaced by a captured value. */
  readonly path: string
  readonly body?: unknown
  readonly status: number | ReadonlyArray<number>
  /**
   * Response fields by path: segments joined by `/` (attribute names, array indexes, `emails[type=work]` to pick an
   * element), so that extension URNs with dots and colons stay one segment.
   */
  readonly fields?: Readonly<Record<string, Expected>>
  /** Captured values by name: the response field path to read. */
  readonly capture?: Readonly<Record<string, string>>
}

export interface StepResult {
  readonly name: string
  readonly status: "passed" | "failed" | "skipped"
  readonly detail: string
}

/** A step path's value in a body, attribute names case-insensitive (RFC 7643 §2.1). */
export const at = (body: unknown, path: string): unknown =>
  path.split("/").reduce<unknown>((value, segment) => {
    const selector = /^(.*)\[(\w+)=(.*)\]$/.exec(segment)
    const name = selector === null ? segment : selector[1]
    let next: unknown = undefined
    if (Array.isArray(value) && /^\d+$/.test(name)) next = value[Number(name)]
    else if (typeof value === "object" && value !== null) {
      const key = Object.keys(value).find((k) => k.toLowerCase() === name.toLowerCase())
      next = key === undefined ? undefined : (value as Record<string, unknown>)[key]
    }
    if (selector === null) return next
    return Array.isArray(next) ? next.find((item) => String(at(item, selector[2])) === selector[3]) : undefined
  }, body)

const matches = (expected: unknown, actual: unknown): boolean => {
  if (typeof expected === "object" && expected !== null && !Array.isArray(expected)) {
    if ("$absent" in expected) return actual === undefined || actual === null || (Array.isArray(actual) && actual.length === 0)
    if ("$length" in expected) return Array.isArray(actual) ? actual.length === expected.$length : expected.$length === 0 && actual === undefined
    if ("$includes" in expected) return Array.isArray(actual) && actual.some((item) => matches(expected.$includes, item))
    return typeof actual === "object" && actual !== null && Object.entries(expected).every(([key, value]) => matches(value, at(actual, key)))
  }
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matches(e, actual[i]))
  return expected === actual
}

const interpolate = (value: unknown, vars: Readonly<Record<string, string>>): unknown => {
  if (typeof value === "string") {
    return value.replaceAll(/\$\{(\w+)\}/g, (_, name: string) => {
      if (vars[name] === undefined) throw new Error(`\${${name}} was not captured by an earlier step`)
      return vars[name]
    })
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, vars))
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [interpolate(k, vars), interpolate(v, vars)]))
  return value
}

export const replay = async (target: Target, steps: ReadonlyArray<Step>): Promise<ReadonlyArray<StepResult>> => {
  const client = makeClient(target)
  const vars: Record<string, string> = {}
  const results: Array<StepResult> = []
  let stopped: string | undefined
  for (const step of steps) {
    if (stopped !== undefined) {
      results.push({ name: step.name, status: "skipped", detail: `after the failure of "${stopped}"` })
      continue
    }
    try {
      const path = interpolate(step.path, vars) as string
      const response = await client.request(step.method, path, step.body === undefined ? {} : { body: interpolate(step.body, vars) })
      const statuses = typeof step.status === "number" ? [step.status] : step.status
      const problems: Array<string> = []
      if (!statuses.includes(response.status)) problems.push(`status ${response.status}, expected ${statuses.join(" or ")}`)
      for (const [field, expected] of Object.entries(step.fields ?? {})) {
        const wanted = interpolate(expected, vars)
        if (problems.length === 0 && !matches(wanted, at(response.body, field))) {
          problems.push(`${field}: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(at(response.body, field))}`)
        }
      }
      for (const [name, field] of Object.entries(step.capture ?? {})) {
        const value = at(response.body, field)
        if (typeof value === "string") vars[name] = value
        else if (problems.length === 0) problems.push(`${field} (to capture as ${name}) is not a string`)
      }
      if (problems.length > 0) throw new Error(`${problems.join("; ")} — ${describe(response)}`)
      results.push({ name: step.name, status: "passed", detail: `${step.method} ${path} → ${response.status}` })
    } catch (error) {
      stopped = step.name
      results.push({ name: step.name, status: "failed", detail: error instanceof Error ? error.message : String(error) })
    }
  }
  return results
}
