/**
 * SAML metadata URLs refreshed, against the testkit's samlify IdP on loopback: a key rotation (the metadata lists
 * both certificates) taken by the administrator's `refresh-metadata` and by the scheduled job (driven by calling one
 * run at a chosen time, as the job would), without a new test and without deactivating an active connection; an IdP
 * that does not answer, a document that does not parse and one naming another entity id keep the last good settings
 * and record why; the job's batch takes the longest unrefreshed first; another organization's connection is 404 and
 * one whose settings do not come from a metadata URL 409. A small host in front of the IdP serves its metadata, or
 * fails, per path. One server and one IdP for the file.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { SsoConnection } from "@orgplane/schema"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AddressGuard from "../../src/platform/AddressGuard.js"
import * as Outbound from "../../src/platform/Outbound.js"
import { Saml } from "../../src/sso/Saml.js"
import { refreshDue } from "../../src/sso/SamlRefresh.js"

type Mode = "ok" | "down" | "malformed" | "otherEntity"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let idp: IdpSaml.IdpSaml
let host: NodeHttp.Server
let hostUrl: string
/** What the host answers at `/metadata/<key>`: the IdP's metadata, or a failure. */
const modes = new Map<string, Mode>()

beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ clock, defaultPlan: "enterprise", outboundAllowPrivate: true })
  idp = await IdpSaml.start({ users: { ada: { email: "ada@acme.test" } } })
  host = NodeHttp.createServer((request, response) => {
    const mode = modes.get((request.url ?? "").replace(/^\/metadata\//, "")) ?? "ok"
    if (mode === "down") return void request.socket.destroy()
    response.writeHead(200, { "content-type": "application/samlmetadata+xml" })
    response.end(
      mode === "malformed"
        ? idp.metadata().slice(0, 200)
        : mode === "otherEntity"
        ? idp.metadata().replace(`entityID="${idp.entityId}"`, `entityID="https://another-idp.example/saml"`)
        : idp.metadata()
    )
  })
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
  hostUrl = `http://127.0.0.1:${(host.address() as Net.AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((resolve) => {
    host?.closeAllConnections()
    host === undefined ? resolve() : host.close(() => resolve())
  })
  await idp?.close()
  await server?.close()
})

const { sso } = calls(() => server.url)

/** The SAML engine as the server has it: fetches through the outbound guard, private addresses allowed. */
const samlEngine = Saml.layer.pipe(Layer.provide(Outbound.layer({ allowPrivate: true }).pipe(Layer.provide(AddressGuard.systemLayer))))

/** One run of the scheduled refresh at `now` (the server's time unless given), on the server's database. */
const runJob = (options: { readonly now?: Date; readonly limit?: number } = {}) =>
  server.sql((sql) =>
    refreshDue({ now: options.now ?? serverNow(), interval: "6 hours", limit: options.limit }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provide(samlEngine)
    )
  )

const serverNow = (offsetMillis = 0) => new Date(clock.currentTimeMillisUnsafe() + offsetMillis)
const HOUR = 60 * 60 * 1000

/** PEMs as the server normalizes them: base64 in 64-character lines, no final newline. */
const normalized = (pem: string) => {
  const der = new NodeCrypto.X509Certificate(pem).raw.toString("base64")
  return `-----BEGIN CERTIFICATE-----\n${der.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----`
}
const idpPems = () => idp.certificates().map(normalized)

let keys = 0
/** A metadata URL on the host, answering the IdP's metadata until its mode changes. */
const hostPath = () => {
  const key = `k${++keys}`
  modes.set(key, "ok")
  return { key, url: `${hostUrl}/metadata/${key}` }
}

const createSaml = async (token: string, url: string) =>
  ok(await sso.createConnection({ token, payload: { kind: "saml", name: "IdP", saml: { source: "metadataUrl", url } } }), 201).connection

const read = async (token: string, id: string) => ok(await sso.getConnection({ token, path: { connectionId: id } }), 200).connection

const refresh = (token: string, id: string) => sso.refreshMetadata({ token, path: { connectionId: id } })

type Connection = typeof SsoConnection.Encoded

/** A SAML connection's settings (failing the test for one without). */
const samlOf = (connection: Connection) => {
  if (connection.saml === null) throw new Error(`${connection.id} has no SAML settings`)
  return connection.saml
}

/** A SAML connection's latest metadata fetch (failing the test for one whose settings come from no URL). */
const refreshOf = (connection: Connection) => {
  const { metadataRefresh } = samlOf(connection)
  if (metadataRefresh === null) throw new Error(`${connection.id} has no metadata refresh`)
  return metadataRefresh
}

/** Makes the connection active as activation would (a SAML test needs the ACS, which this file leaves alone). */
const activate = (organizationId: string, id: string) =>
  server.sql((sql) => sql`UPDATE sso_connections SET state = 'active' WHERE organization_id = ${organizationId} AND id = ${id}`)

describe("refreshing a SAML metadata URL", () => {
  it("by the administrator: a rotation is taken, an active connection stays active at its revision", async () => {
    const org = await Http.staffed(server.url)
    const created = await createSaml(org.admin.token, idp.metadataUrl)
    expect(samlOf(created).certificates.map((c) => c.pem)).toEqual(idpPems())
    await activate(org.organizationId, created.id)

    await idp.rotateSigningKey()
    expect(idpPems()).toHaveLength(samlOf(created).certificates.length + 1)
    const answer = await refresh(org.admin.token, created.id)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const refreshed = ok(answer, 200).connection
    expect(samlOf(refreshed).certificates.map((c) => c.pem)).toEqual(idpPems())
    expect(samlOf(refreshed).certificates.at(-1)?.notAfter).toBe(new Date(new NodeCrypto.X509Certificate(idp.certificates().at(-1)!).validTo).toISOString())
    expect(refreshed).toMatchObject({ state: "active", configRevision: created.configRevision })
    expect(samlOf(refreshed).metadataRefresh).toEqual({
      at: refreshOf(refreshed).at,
      ok: true,
      message: null,
      succeededAt: refreshOf(refreshed).at
    })
    expect(Date.parse(refreshOf(refreshed).at)).toBeGreaterThan(Date.parse(refreshOf(created).at) - 1)
    expect(await read(org.owner.token, created.id)).toEqual(refreshed)

    // Members may not; owners may.
    const byMember = await refresh(org.member.token, created.id)
    expect(byMember.status).toBe(403)
    expect((await refresh(org.owner.token, created.id)).status).toBe(200)
  })

  it("by the scheduled job, once the interval has passed", async () => {
    const org = await Http.owner(server.url)
    const created = await createSaml(org.token, idp.metadataUrl)
    await idp.rotateSigningKey()

    // An hour later the connection is not due: nothing is fetched for it.
    await runJob({ now: serverNow(HOUR) })
    const early = await read(org.token, created.id)
    expect(samlOf(early).certificates).toEqual(samlOf(created).certificates)
    expect(samlOf(early).metadataRefresh).toEqual(samlOf(created).metadataRefresh)

    const later = serverNow(6 * HOUR + 60_000)
    expect(await runJob({ now: later })).toBeGreaterThanOrEqual(1)
    const refreshed = await read(org.token, created.id)
    expect(samlOf(refreshed).certificates.map((c) => c.pem)).toEqual(idpPems())
    expect(samlOf(refreshed).metadataRefresh).toEqual({ at: later.toISOString(), ok: true, message: null, succeededAt: later.toISOString() })
    expect(refreshed).toMatchObject({ state: "draft", configRevision: created.configRevision, updatedAt: later.toISOString() })
  })

  it("takes the longest unrefreshed connections first, as many as a run allows", async () => {
    // Everything the file made so far refreshed far ahead, so that only the two below are due.
    const ahead = serverNow(1000 * HOUR)
    await runJob({ now: ahead, limit: 1000 })
    const org = await Http.owner(server.url)
    const first = await createSaml(org.token, hostPath().url)
    const second = await createSaml(org.token, hostPath().url)

    const at = serverNow(7 * HOUR)
    expect(await runJob({ now: at, limit: 1 })).toBe(1)
    expect(refreshOf(await read(org.token, first.id)).at).toBe(at.toISOString())
    expect(samlOf(await read(org.token, second.id)).metadataRefresh).toEqual(samlOf(second).metadataRefresh)
    expect(await runJob({ now: at, limit: 1 })).toBe(1)
    expect(refreshOf(await read(org.token, second.id)).at).toBe(at.toISOString())
    expect(await runJob({ now: at, limit: 1 })).toBe(0)
  })

  it("an IdP that does not answer keeps the last good settings and records the error", async () => {
    const org = await Http.owner(server.url)
    const { key, url } = hostPath()
    const created = await createSaml(org.token, url)
    await activate(org.organization.id, created.id)
    modes.set(key, "down")

    const answer = await refresh(org.token, created.id)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    const kept = ok(answer, 200).connection
    expect(kept).toMatchObject({ state: "active", configRevision: created.configRevision, updatedAt: created.updatedAt })
    expect(samlOf(kept)).toEqual({ ...samlOf(created), metadataRefresh: { ...samlOf(kept).metadataRefresh } })
    expect(samlOf(kept).metadataRefresh).toMatchObject({ ok: false, succeededAt: refreshOf(created).at })
    expect(refreshOf(kept).message).toMatch(/^The metadata URL could not be fetched: .+\(metadata_unreachable\)$/)

    // The IdP answers again: the next refresh clears the error.
    modes.set(key, "ok")
    const again = ok(await refresh(org.token, created.id), 200).connection
    expect(samlOf(again).metadataRefresh).toMatchObject({ ok: true, message: null })
    expect(refreshOf(again).succeededAt).toBe(refreshOf(again).at)
  })

  it("malformed XML, by the scheduled job, keeps the settings and records the error", async () => {
    const org = await Http.owner(server.url)
    const { key, url } = hostPath()
    const created = await createSaml(org.token, url)
    modes.set(key, "malformed")
    await idp.rotateSigningKey()

    const at = serverNow(6 * HOUR + 1)
    await runJob({ now: at })
    const kept = await read(org.token, created.id)
    expect(samlOf(kept).certificates).toEqual(samlOf(created).certificates)
    expect(samlOf(kept).metadataRefresh).toMatchObject({ at: at.toISOString(), ok: false, succeededAt: refreshOf(created).at })
    expect(refreshOf(kept).message).toMatch(/^The metadata is not well-formed XML: .+\(metadata_not_xml\)$/)
  })

  it("a document naming another entity id changes nothing and says why", async () => {
    const org = await Http.owner(server.url)
    const { key, url } = hostPath()
    const created = await createSaml(org.token, url)
    modes.set(key, "otherEntity")
    await idp.rotateSigningKey()

    const kept = ok(await refresh(org.token, created.id), 200).connection
    expect(samlOf(kept)).toMatchObject({ entityId: idp.entityId, certificates: samlOf(created).certificates })
    expect(samlOf(kept).metadataRefresh).toMatchObject({ ok: false, succeededAt: refreshOf(created).at })
    expect(refreshOf(kept).message).toContain("https://another-idp.example/saml")
    expect(refreshOf(kept).message).toMatch(/\(entity_id_changed\)$/)
  })

  it("another organization's connection is 404, and changes nothing", async () => {
    const owner = await Http.owner(server.url)
    const stranger = await Http.owner(server.url, "Globex")
    const created = await createSaml(owner.token, idp.metadataUrl)
    const answer = await refresh(stranger.token, created.id)
    expect(answer.status).toBe(404)
    expect(answer.body).toMatchObject({ error: "sso_connection_not_found" })
    expect(samlOf(await read(owner.token, created.id)).metadataRefresh).toEqual(samlOf(created).metadataRefresh)
  })

  it("a connection whose settings do not come from a metadata URL is 409", async () => {
    const org = await Http.owner(server.url)
    const byXml = ok(
      await sso.createConnection({ token: org.token, payload: { kind: "saml", name: "XML", saml: { source: "metadataXml", xml: idp.metadata() } } }),
      201
    ).connection
    const oidc = ok(
      await sso.createConnection({
        token: org.token,
        payload: { kind: "oidc", name: "OIDC", oidc: { issuer: "https://login.acme.example", clientId: "orgplane", clientSecret: "secret" } }
      }),
      201
    ).connection
    for (const [id, says] of [[byXml.id, "metadata XML"], [oidc.id, "OIDC"]] as const) {
      const answer = await refresh(org.token, id)
      expect(answer.status).toBe(409)
      expect(answer.body).toEqual({ error: "sso_metadata_url_required", message: expect.stringContaining(says) })
    }
  })
})
