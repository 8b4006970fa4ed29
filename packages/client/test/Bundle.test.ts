/**
 * What keeps a browser bundle of the client small: the client imports Effect one module at a time, and a client of
 * some groups carries only their schemas. (packages/client's `.ci/deep-imports.mjs` check covers packages/ only.)
 */
import { apiOf, MembersApi, RolesApi } from "@orgplane/schema"
import * as Fs from "node:fs"
import { describe, expect, it } from "vitest"

const source = new URL("../src/", import.meta.url)

describe("bundle size", () => {
  it("the client imports no Effect barrel (`from \"effect\"`, `from \"effect/http\"`, `from \"effect/http-api\"`)", () => {
    const barrels = Fs.readdirSync(source).filter((file) => file.endsWith(".ts")).flatMap((file) =>
      [...Fs.readFileSync(new URL(file, source), "utf8").matchAll(/^import .* from "effect(?:\/http|\/http-api)?"$/gm)].map(([line]) => `${file}: ${line}`)
    )
    expect(barrels).toEqual([])
  })

  it("apiOf(...) has only the given groups", () => {
    expect(Object.keys(apiOf(MembersApi, RolesApi).groups)).toEqual(["members", "roles"])
  })
})
