import { describe, expect, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Security from "../src/Security.js"
import { fixture } from "./differential.js"
import { effect3 } from "./effect3.js"

const Security3 = effect3("Security")

const api = HttpApi.make("test").add(
  HttpApiGroup.make("g")
    .add(HttpApiEndpoint.get("actor", "/actor").middleware(Security.Authentication))
    .add(HttpApiEndpoint.get("member", "/member").middleware(Security.MemberAuthentication))
    .add(HttpApiEndpoint.get("optional", "/optional").middleware(Security.OptionalAuthentication))
    .add(HttpApiEndpoint.get("worker", "/worker").middleware(Security.WorkerAuthentication))
)

describe("Security on Effect 4", () => {
  it("keeps the keys of what a request knows about its caller", () => {
    expect(Security.CurrentActor.key).toBe(Security3.CurrentActor.key)
    expect(Security.CurrentMember.key).toBe(Security3.CurrentMember.key)
    expect(Security.CurrentWorker.key).toBe(Security3.CurrentWorker.key)
  })

  it("declares each middleware's errors with the statuses of Effect 3's", () => {
    const statuses = new Map<string, Array<number>>()
    HttpApi.reflect(api, { onGroup() {}, onEndpoint: ({ endpoint, errors }) => statuses.set(endpoint.identifier, [...errors.keys()].sort()) })
    expect(Object.fromEntries(statuses)).toEqual({ actor: [401, 503], member: [401, 403, 404, 503], optional: [], worker: [401, 503] })
  })

  it("documents the schemes as the Effect 3 document does", () => {
    const spec = OpenApi.fromApi(api)
    const documented = fixture["components"]
    expect(documented).toMatchObject({ securitySchemes: { bearer: {}, apiKey: {}, workerToken: {} } })
    // A real difference, for the OpenAPI normalisation step: Effect 4 writes the bearer scheme as `Bearer`.
    const lower = (scheme: unknown) => JSON.parse(JSON.stringify(scheme).replace("\"scheme\":\"Bearer\"", "\"scheme\":\"bearer\""))
    expect(spec.components.securitySchemes["bearer"]).toMatchObject({ scheme: "Bearer" })
    for (const name of ["bearer", "apiKey", "workerToken"]) {
      expect(lower(spec.components.securitySchemes[name]), name).toEqual(
        typeof documented === "object" && documented !== null && "securitySchemes" in documented && typeof documented.securitySchemes === "object" && documented.securitySchemes !== null
          ? Reflect.get(documented.securitySchemes, name)
          : undefined
      )
    }
    expect(spec.paths["/member"]?.get?.security).toEqual([{ bearer: [] }, { apiKey: [] }])
    expect(fixture).toMatchObject({ paths: { "/v1/teams": { post: { security: [{ bearer: [] }, { apiKey: [] }] } } } })
  })
})
