/**
 * The request bodies the READMEs show (`curl -X POST
 * …/v1/… -d '{…}'`) are requests the API reads: each decodes with the payload schema of the operation it is sent
 * to, so a README cannot drift from the schema it illustrates.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { HttpApi } from "effect/http-api"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Api } from "../src/index.js"

const root = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const readmes = [
  "README.md",
  "examples/README.md",
  ...Fs.readdirSync(Path.join(root, "packages"))
    .map((name) => `packages/${name}/README.md`)
    .filter((file) => Fs.existsSync(Path.join(root, file)))
]

/** Every `curl -X METHOD <host>/v1/… … -d '<json>'` of a README (a command may wrap across lines). */
const curls = (file: string) =>
  [...Fs.readFileSync(Path.join(root, file), "utf8").matchAll(/curl -X (\w+) \S*?(\/v1\/[^\s`]*)[^`]*?-d\s+'([^']*)'/g)].map(
    ([, method, path, body]) => ({ file, method: method ?? "", path: path ?? "", body: body ?? "" })
  )

/** The payload schema of the operation a method and path go to (its JSON body's: the API keeps one per media type). */
const payloadOf = (method: string, path: string): Schema.Top | undefined => {
  let found: Schema.Top | undefined
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const pattern = new RegExp(`^${endpoint.path.replace(/:\w+/g, "[^/]+")}$`)
      const payload = endpoint.payload.get("application/json") ?? [...endpoint.payload.values()][0]
      if (endpoint.method === method && pattern.test(path) && payload !== undefined) found = payload.schemas[0]
    }
  })
  return found
}

describe("the READMEs' request bodies", () => {
  const requests = readmes.flatMap(curls)

  it("include the sign-up of the README", () => {
    expect(requests.map(({ file, method, path }) => `${file}: ${method} ${path}`)).toContain("README.md: POST /v1/auth/sign-up")
  })

  it("decode with the schema of the operation they are sent to", () => {
    const offenders = requests.flatMap(({ body, file, method, path }) => {
      const schema = payloadOf(method, path)
      if (schema === undefined) return [`${file}: ${method} ${path} is no operation with a body`]
      const decoder: Schema.Codec<unknown, unknown> = Schema.make(schema.ast)
      const read = Schema.decodeUnknownResult(decoder)(JSON.parse(body))
      return Result.isFailure(read) ? [`${file}: ${method} ${path} ${body}: ${String(read.failure)}`] : []
    })
    expect(offenders).toEqual([])
  })
})
