/**
 * Extracts from a released OpenAPI document what a client of that release relies on: every operation (`METHOD
 * /path` and its `operationId`, which generated clients name their methods after) and every audit action (the
 * `AuditAction` component's names, which log readers filter on). The extract is saved beside the tests as
 * `test/fixtures/<release>/contract.json`, and Contract010.test.ts (one file per release) holds the current API to it.
 *
 *   git show <commit>:packages/schema/test/fixtures/openapi.json > /tmp/released.json
 *   node --import tsx packages/schema/scripts/release-contract.ts /tmp/released.json <release> <commit>
 *
 * 0.1.0's was made from `7043307` (the document 0.1.0 served, saved before the move to Effect 4).
 */
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"

const [source, release, commit] = process.argv.slice(2)
if (source === undefined || release === undefined || commit === undefined) {
  process.stderr.write("usage: release-contract.ts <released openapi.json> <release> <commit it was read at>\n")
  process.exit(2)
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
const isObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const at = (value: Json | undefined, ...keys: ReadonlyArray<string>): Json | undefined =>
  keys.reduce<Json | undefined>((node, key) => (isObject(node) ? node[key] : undefined), value)

const document: Json = JSON.parse(Fs.readFileSync(source, "utf8"))
const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
const operations: Record<string, string> = {}
const paths = at(document, "paths")
for (const [path, item] of Object.entries(isObject(paths) ? paths : {})) {
  for (const [method, operation] of Object.entries(isObject(item) ? item : {})) {
    const id = at(operation, "operationId")
    if (methods.includes(method) && typeof id === "string") operations[`${method.toUpperCase()} ${path}`] = id
  }
}
const actions = at(document, "components", "schemas", "AuditAction", "enum")
const contract = {
  release,
  source: `git show ${commit}:packages/schema/test/fixtures/openapi.json`,
  operations,
  auditActions: Array.isArray(actions) ? actions.filter((action): action is string => typeof action === "string") : []
}
const target = new URL(`../test/fixtures/${release}/contract.json`, import.meta.url)
Fs.mkdirSync(new URL(".", target), { recursive: true })
Fs.writeFileSync(target, `${JSON.stringify(contract, null, 2)}\n`)
process.stdout.write(`wrote ${fileURLToPath(target)}: ${Object.keys(operations).length} operations, ${contract.auditActions.length} audit actions\n`)
