/**
 * What keeps SSO sign-in sound over time and under load, through real SAML sign-ins against the testkit's samlify
 * IdP on loopback: the cleanup job deletes intents (pending, completed, and the spent ones IdP-initiated sign-ins
 * make) an hour after they expired and SAML assertions once they expired, a bounded number per run (driven by calling
 * one run at a chosen time, as the job would); and two first sign-ins of one new person at the same time both sign
 * in, as one account and one member (Postgres only). One server and one IdP for the file.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import { SsoCallbackResult } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { deleteExpired } from "../../src/sso/IntentsExpiry.js"

let dns: FakeDns.FakeDns
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let idp: IdpSaml.IdpSaml
beforeAll(async () => {
  dns = await FakeDns.start()
  server = await TestServer.startSharingDatabase({ defaultPlan: "enterprise", dnsServers: dns.address, outboundAllowPrivate: true })
  idp = await IdpSaml.start()
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
})

const { members, organizations, sso, ssoSignIn, users } = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 8)
const MINUTE = 60_000

const person = (email: string) => {
  idp.addUser(email, { email, name: `Person ${email.split("@")[0]}` })
  return email
}

const postAcs = async (acsUrl: string, form: Readonly<Record<string, string>>) => {
  const response = await fetch(acsUrl, { method: "POST", body: new URLSearchParams(form), redirect: "manual" })
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, body, text }
}

const decodeResult = Schema.decodeUnknownSync(Schema.toEncoded(SsoCallbackResult))
/** The ACS's answer read as the callback's result, which only a 200 carries (failing the test otherwise). */
const resultOf = (answered: { readonly status: number; readonly body: unknown; readonly text: string }) => {
  expect(answered.status, answered.text).toBe(200)
  return decodeResult(answered.body)
}

/** An enterprise organization with a fresh verified domain and an active SAML connection (tested by its admin). */
const activeOrganization = async (saml: { readonly allowIdpInitiated?: boolean; readonly relayStateAllowList?: ReadonlyArray<string> } = {}) => {
  const domain = `upkeep-${unique()}.test`
  const email = person(`admin@${domain}`)
  const token = ok(await users.signUp({ payload: { email, password: "correct horse battery", name: "Admin" } }), 201).session.token
  const org = ok(await organizations.create({ token, payload: { name: `Org ${domain}` } }), 201)
  const created = await sso.createConnection({
    token,
    payload: { kind: "saml", name: "Loopback SAML IdP", domains: [domain], saml: { source: "metadataUrl", url: idp.metadataUrl, ...saml } }
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const connection = ok(created, 201).connection
  const path = { connectionId: connection.id }
  const { entityId } = connection.sp
  if (entityId === null) throw new Error("a SAML connection without its SP entity id")
  idp.addServiceProvider({ metadata: await (await fetch(`${server.url}/v1/sso/saml/${connection.id}/metadata`)).text() })
  const record = ok(await sso.requestDomainVerification({ token, query: { domain } }), 200).verification
  dns.setTxt(record.recordName, [record.recordValue])
  expect((await sso.verifyDomain({ token, query: { domain } })).status).toBe(200)
  const started = ok(await sso.startTest({ token, path }), 201)
  const acs = await idp.signIn(started.authorizationUrl, { as: email })
  expect(resultOf(await postAcs(acs.acsUrl, acs.form)).test?.status).toBe("succeeded")
  expect((await sso.activateConnection({ token, path })).status).toBe(200)
  return { token, domain, organizationId: org.organization.id, connection: { ...connection, sp: { ...connection.sp, entityId } } }
}

/** Starts a sign-in for `email` and lets the IdP answer it: the ACS post, not posted yet. */
const startSignIn = async (email: string) => {
  const started = await ssoSignIn.start({ payload: { email } })
  expect(started.status, JSON.stringify(started.body)).toBe(201)
  return idp.signIn(ok(started, 201).authorizationUrl, { as: email })
}

/** The organization's intents and SAML assertions, counted. */
const stored = (organizationId: string) =>
  server.sql((sql) =>
    Effect.all({
      intents: Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM sso_intents WHERE organization_id = ${organizationId}`, (rows) => rows[0].n),
      assertions: Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM sso_saml_assertions WHERE organization_id = ${organizationId}`, (rows) => rows[0].n)
    })
  )

/** One run of the cleanup job at `now`, on the server's database. */
const runJob = (now: Date, bounds: { readonly batch?: number; readonly batches?: number } = {}) =>
  server.sql((sql) => deleteExpired({ now, ...bounds }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))

describe("the cleanup of SSO sign-in state", { timeout: 60_000 }, () => {
  it("deletes assertions once expired and intents an hour after they expired, pending, completed or IdP-initiated", async () => {
    const org = await activeOrganization({ allowIdpInitiated: true, relayStateAllowList: ["/app"] })
    const completed = await startSignIn(person(`ada@${org.domain}`))
    expect(resultOf(await postAcs(completed.acsUrl, completed.form)).ok).toBe(true)
    await startSignIn(person(`grace@${org.domain}`)) // never posted: the intent stays pending
    const unsolicited = await idp.signInIdpInitiated(org.connection.sp.entityId, { as: person(`joan@${org.domain}`) })
    expect(resultOf(await postAcs(unsolicited.acsUrl, unsolicited.form)).ok).toBe(true)
    const startedAt = Date.now()
    // The admin's test, two sign-ins and the IdP-initiated one; the test's, the sign-in's and the IdP-initiated assertions.
    expect(await stored(org.organizationId)).toEqual({ intents: 4, assertions: 3 })

    // Nothing has expired yet.
    await runJob(new Date(startedAt))
    expect(await stored(org.organizationId)).toEqual({ intents: 4, assertions: 3 })
    // Half an hour on, the assertions (5 minutes, plus the 2 minutes of clock skew) are gone; the intents, expired
    // 25 minutes ago, are kept for the hour a late answer still reads as `replayed`.
    await runJob(new Date(startedAt + 30 * MINUTE))
    expect(await stored(org.organizationId)).toEqual({ intents: 4, assertions: 0 })
    const replayed = await postAcs(completed.acsUrl, completed.form)
    expect([replayed.status, replayed.body]).toMatchObject([401, { code: "replayed" }])
    // Past the hour, the intents go too.
    await runJob(new Date(startedAt + 2 * 60 * MINUTE))
    expect(await stored(org.organizationId)).toEqual({ intents: 0, assertions: 0 })

    // Another organization's sign-in state is its own: cleaned by time alike, and only when expired.
    const other = await activeOrganization()
    expect(await stored(other.organizationId)).toEqual({ intents: 1, assertions: 1 })
  })

  it("deletes at most its bound per run, and the rest on the next runs", async () => {
    const org = await activeOrganization()
    for (const name of ["alan", "barbara", "claude"]) await startSignIn(person(`${name}@${org.domain}`))
    expect((await stored(org.organizationId)).intents).toBe(4)
    const later = new Date(Date.now() + 2 * 60 * MINUTE)
    const first = await runJob(later, { batch: 1, batches: 2 })
    // Two statements of one row each, per table (the instance's other expired assertions count too).
    expect(first.intents).toBe(2)
    expect(first.assertions).toBeGreaterThanOrEqual(1)
    expect(first.assertions).toBeLessThanOrEqual(2)
    const rest = await runJob(later)
    expect(rest.intents).toBeGreaterThanOrEqual(2)
    expect(await stored(org.organizationId)).toEqual({ intents: 0, assertions: 0 })
    expect(await runJob(later)).toEqual({ intents: 0, assertions: 0 })
  })
})

describe.runIf(TestDatabase.onPostgres)("racing first sign-ins (need real concurrency: Postgres only)", { timeout: 60_000 }, () => {
  it("two first sign-ins of one new person at the same time both sign in, as one account and one JIT member", async () => {
    const org = await activeOrganization()
    const email = person(`racer-${unique()}@${org.domain}`)
    const both = await Promise.all([startSignIn(email), startSignIn(email)])

    // Both sign-ins are held where they create the account (a share lock on users blocks the inserts, not the
    // reads), then let go together: without a way to meet, one of them loses the account's unique email.
    let taken!: () => void
    const lockTaken = new Promise<void>((resolve) => (taken = resolve))
    const holding = server.sql((sql) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE users IN SHARE MODE`
        yield* Effect.sync(taken)
        let waiting = 0
        for (let looks = 0; looks < 4_000 && waiting < 2; looks++) {
          if (looks > 0) yield* Effect.sleep("5 millis")
          const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                                                 WHERE c.relname = 'users' AND NOT l.granted
                                                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`
          waiting = rows[0].n
        }
        if (waiting < 2) return yield* Effect.die(new Error("the two sign-ins never waited for the lock on users"))
      }))
    )
    await lockTaken
    const posted = Promise.all(both.map((acs) => postAcs(acs.acsUrl, acs.form)))
    await holding
    const answers = await posted

    for (const answered of answers) expect([answered.status, answered.body], answered.text).toMatchObject([200, { ok: true }])
    const sessions = await Promise.all(answers.map((answered) => ssoSignIn.exchange({ payload: { code: resultOf(answered).code ?? "" } })))
    expect(new Set(sessions.map((exchanged) => ok(exchanged, 200).user.id)).size).toBe(1)
    const found = ok(await members.list({ token: org.token, query: { q: email } }), 200)
    expect(found.items).toHaveLength(1)
    expect(found.items[0]).toMatchObject({ role: "member" })
  })
})
