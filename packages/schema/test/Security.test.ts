/**
 * Security.ts: what a request knows about its caller, each authentication middleware's errors, and the security
 * schemes as the document shows them.
 */
import { describe, expect, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Security from "../src/Security.js"
import { savedDocument } from "./support/SavedDocument.js"

const api = HttpApi.make("test").add(
  HttpApiGroup.make("g")
    .add(HttpApiEndpoint.get("actor", "/actor").middleware(Security.Authentication))
    .add(HttpApiEndpoint.get("member", "/member").middleware(Security.MemberAuthentication))
    .add(HttpApiEndpoint.get("optional", "/optional").middleware(Security.OptionalAuthentication))
    .add(HttpApiEndpoint.get("worker", "/worker").middleware(Security.WorkerAuthentication))
)

describe("Security", () => {
  it("keeps the keys of what a request knows about its caller", () => {
    expect(Security.CurrentActor.key).toBe("@orgplane/schema/CurrentActor")
    expect(Security.CurrentMember.key).toBe("@orgplane/schema/CurrentMember")
    expect(Security.CurrentWorker.key).toBe("@orgplane/schema/CurrentWorker")
  })

  it("declares each middleware's errors with their statuses", () => {
    const statuses = new Map<string, Array<number>>()
    HttpApi.reflect(api, { onGroup() {}, onEndpoint: ({ endpoint, errors }) => statuses.set(endpoint.identifier, [...errors.keys()].sort()) })
    expect(Object.fromEntries(statuses)).toEqual({ actor: [401, 403, 503], member: [401, 403, 404, 503], optional: [], worker: [401, 503] })
  })

  it("documents the schemes as the saved document does", () => {
    const spec = OpenApi.fromApi(api)
    const documented = savedDocument["components"]
    expect(documented).toMatchObject({ securitySchemes: { bearer: {}, apiKey: {}, workerToken: {} } })
    // The generator writes the bearer scheme as `Bearer`; the published document in lower case (Api.ts's `lowerCaseSchemes`).
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
    expect(savedDocument).toMatchObject({ paths: { "/v1/teams": { post: { security: [{ bearer: [] }, { apiKey: [] }] } } } })
  })
})
