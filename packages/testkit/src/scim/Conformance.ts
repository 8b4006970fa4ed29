/**
 * The runner: reads what the server advertises, then runs the checks of each tag in order and answers one result per
 * check (an exception in a check is a failure, never a pass). When discovery itself cannot be read, every other
 * tag is skipped with that reason, as scim2-tester does.
 */
import { type Check, type CheckResult, CheckFailure, type Context, random, type Tag, tags as allTags } from "./Check.js"
import { client as makeClient, type Target } from "./Client.js"
import * as Crud from "./Crud.js"
import * as Discovery from "./Discovery.js"
import * as Errors from "./Errors.js"
import * as Etag from "./Etag.js"
import * as Filter from "./Filter.js"
import * as Paging from "./Paging.js"
import * as Patch from "./Patch.js"
import * as Projection from "./Projection.js"

export interface Options {
  /** Tags to run (default: all); `exclude` drops some of them. */
  readonly tags?: ReadonlyArray<Tag>
  readonly exclude?: ReadonlyArray<Tag>
  /** Resource types to exercise by name (default: every advertised one). */
  readonly resourceTypes?: ReadonlyArray<string>
}

const modules: Record<Tag, { checks: (context: Context) => ReadonlyArray<Check> }> = {
  discovery: Discovery,
  crud: Crud,
  patch: Patch,
  projection: Projection,
  filter: Filter,
  etag: Etag,
  errors: Errors,
  paging: Paging
}

const runOne = async (tag: Tag, check: Check): Promise<CheckResult> => {
  const base = { id: check.id, tag, description: check.description }
  try {
    const outcome = await check.run()
    if (typeof outcome === "object" && outcome._tag === "Skip") return { ...base, status: "skipped", detail: outcome.reason }
    return { ...base, status: "passed", detail: typeof outcome === "string" ? outcome : "" }
  } catch (error) {
    const detail = error instanceof CheckFailure ? error.message : `${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`
    return { ...base, status: "failed", detail }
  }
}

export const run = async (target: Target, options: Options = {}): Promise<ReadonlyArray<CheckResult>> => {
  const client = makeClient(target)
  const selected = (options.tags ?? allTags).filter((tag) => !(options.exclude ?? []).includes(tag))
  let discovery: Discovery.Discovery
  try {
    discovery = await Discovery.discover(client)
  } catch (error) {
    const reason = `discovery failed: ${error instanceof Error ? error.message : String(error)}`
    return selected.map((tag) => ({ id: tag, tag, status: tag === "discovery" ? "failed" : "skipped", description: `tag ${tag}`, detail: reason }))
  }
  if (options.resourceTypes !== undefined) {
    const names = options.resourceTypes
    discovery = { ...discovery, resourceTypes: discovery.resourceTypes.filter((t) => names.includes(t.name)) }
  }
  const results: Array<CheckResult> = []
  for (const tag of selected) {
    const deferred: Array<() => Promise<void>> = []
    const context: Context = { client, discovery, run: random(), defer: (cleanup) => void deferred.push(cleanup) }
    for (const check of modules[tag].checks(context)) results.push(await runOne(tag, check))
    while (deferred.length > 0) await deferred.pop()!().catch(() => undefined)
  }
  return results
}

/** One line per check that did not pass, for a test's failure message. */
export const report = (results: ReadonlyArray<CheckResult>, statuses: ReadonlyArray<CheckResult["status"]> = ["failed"]): string =>
  results.filter((r) => statuses.includes(r.status)).map((r) => `${r.status} ${r.id}: ${r.detail}`).join("\n")
