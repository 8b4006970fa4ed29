/**
 * `orgplane sso connections refresh-metadata`: the CLI in-process (see Harness.ts) against a real server
 * (RealServer.ts) and the testkit's SAML IdP.
 */
import * as Http from "../../../packages/testkit/src/Http.js"
import * as IdpSaml from "../../../packages/testkit/src/IdpSaml.js"
import * as RealServer from "./RealServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let server: RealServer.RealServer
let idp: IdpSaml.IdpSaml

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise", ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
  idp = await IdpSaml.start({ users: { ada: { email: "ada@acme.test" } } })
})
afterAll(async () => {
  await idp?.close()
  await server?.close()
  await cleanup()
})

describe("orgplane sso connections refresh-metadata", { timeout: 120_000 }, () => {
  it("takes a rotated certificate from the metadata URL, and refuses an OIDC connection", async () => {
    const owner = await Http.owner(server.url, "SSO Org")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
    const created = await cli(["sso", "connections", "create", "IdP", "--saml-metadata-url", idp.metadataUrl, "--json"], env)
    expect(created.code, created.stderr).toBe(0)
    const connection = json(created).connection
    expect(connection.saml.certificates).toHaveLength(1)

    await idp.rotateSigningKey()
    const refreshed = await cli(["sso", "connections", "refresh-metadata", connection.id, "--json"], env)
    expect(refreshed.code, refreshed.stderr).toBe(0)
    expect(json(refreshed).connection).toMatchObject({ configRevision: connection.configRevision, saml: { metadataRefresh: { ok: true, message: null } } })
    expect(json(refreshed).connection.saml.certificates).toHaveLength(2)

    const human = await cli(["sso", "connections", "refresh-metadata", connection.id], env)
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toContain("Refreshed:")
    expect(human.stdout).toMatch(/metadata fetched: \d{4}-\d\d-\d\dT/)

    const oidc = await cli(["sso", "connections", "create", "OIDC", "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app", "--json"], {
      ...env,
      ORGPLANE_SSO_CLIENT_SECRET: "secret"
    })
    expect(oidc.code, oidc.stderr).toBe(0)
    const refused = await cli(["sso", "connections", "refresh-metadata", json(oidc).connection.id], env)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr + refused.stdout).toContain("sso_metadata_url_required")
  })
})
