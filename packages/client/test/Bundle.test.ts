/**
 * What keeps a browser bundle of the client small (`pnpm bundle:client` prints the figures): the client and the
 * schema import Effect one module at a time, and a client of some groups carries only their schemas.
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Api, apiOf, MembersApi, RolesApi, withApiErrors } from "@orgplane/schema"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("bundle size", () => {
  it("the client and the schema import no Effect barrel (`from \"effect\"`, `from \"@effect/platform\"`)", () => {
    const script = fileURLToPath(new URL("../../../.ci/deep-imports.mjs", import.meta.url))
    // Fails with the list of barrel imports; `node .ci/deep-imports.mjs --fix` rewrites them.
    expect(() => execFileSync(process.execPath, [script], { stdio: "pipe" })).not.toThrow()
  })

  it("apiOf(...) has only the given groups, and the errors of the whole API", () => {
    const some = apiOf(MembersApi, RolesApi)
    expect(Object.keys(some.groups)).toEqual(["members", "roles"])
    expect(some.errorSchema.ast).toEqual(Api.errorSchema.ast)
    // The same errors whatever the groups: they belong to the API, not to a group.
    const probe = HttpApiGroup.make("probe").add(HttpApiEndpoint.get("ping", "/ping"))
    expect(withApiErrors(HttpApi.make("orgplane").add(probe)).errorSchema.ast).toEqual(Api.errorSchema.ast)
  })
})
