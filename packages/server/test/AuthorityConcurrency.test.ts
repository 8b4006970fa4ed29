/**
 * A write's authority is checked where it commits, on Postgres across two servers: writes already under way when
 * their caller is removed or demoted, or their API key revoked, either commit before that change or are refused.
 * The test decides the order: its own connection holds the organization's row lock, which each write waits for
 * after its request was authenticated and authorized (invitations take the membership lock; API keys and teams
 * check their foreign key to the organization); the removal, demotion or revocation commits first (a removal and a
 * demotion take that lock too, asked for before the writes ask: row locks are granted in the order asked), then the
 * writes go on.
 */
import { Http, TestDatabase } from "@orgplane/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SharedPostgres from "./SharedPostgres.js"

type Credential = { readonly token: string } | { readonly apiKey: string }

let emails = 0
const email = () => `raced.${++emails}.${Math.random().toString(36).slice(2, 8)}@example.com`

describe.skipIf(!TestDatabase.onPostgres)("authority checked at commit, two servers (Postgres)", () => {
  let shared: SharedPostgres.Shared
  beforeAll(async () => {
    shared = await SharedPostgres.start(2, { defaultPlan: "enterprise" })
  }, 120_000)
  afterAll(() => shared?.close(), 60_000)

  const server = (i: number) => shared.servers[i % 2]!.url

  /** Writes an admin may make, made with `as`: invitations (as admins), API keys, teams, alternating between servers. */
  const writes = (as: Credential, count: number) =>
    Array.from({ length: count }, (_, i) => (url: string) => {
      switch (i % 3) {
        case 0:
          return Http.request(url, "POST", "/v1/invitations", { ...as, body: { email: email(), role: "admin" } })
        case 1:
          return Http.request(url, "POST", "/v1/api-keys", { ...as, body: { name: `raced ${i}` } })
        default:
          return Http.request(url, "POST", "/v1/teams", { ...as, body: { name: `Raced ${i} ${Math.random().toString(36).slice(2, 8)}` } })
      }
    })

  /**
   * `change` first, then `writes`: all wait on the organization's row, held here, in that order; released once all
   * wait, the change commits first (row locks are granted in the order asked), the writes after it.
   */
  const changeThenWrites = async (
    organizationId: string,
    change: () => Promise<Http.RawResponse>,
    racing: ReadonlyArray<(url: string) => Promise<Http.RawResponse>>
  ) => {
    const held = await shared.hold("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [organizationId])
    const changed = change()
    await held.waiters(1)
    const answers = Promise.all(racing.map((send, i) => send(server(i))))
    await held.waiters(1 + racing.length)
    await held.release()
    return { changed: await changed, answers: await answers }
  }

  /** What the admin's writes left: invitations, API keys and teams they made. */
  const madeBy = async (organizationId: string, membershipId: string) => {
    const [row] = await shared.query(
      `SELECT (SELECT count(*) FROM invitations WHERE organization_id = $1 AND created_by_membership_id = $2)::int AS invitations,
              (SELECT count(*) FROM api_keys WHERE organization_id = $1 AND membership_id = $2)::int AS keys,
              (SELECT count(*) FROM teams WHERE organization_id = $1 AND created_by_membership_id = $2)::int AS teams`,
      [organizationId, membershipId]
    )
    return row
  }

  /** Accepting every invitation answered: none may make anybody a member. */
  const acceptAll = async (answers: ReadonlyArray<Http.RawResponse>) => {
    const accepted = await Promise.all(answers.filter((answer) => answer.body?.inviteToken !== undefined).map((answer, i) =>
      Http.request(server(i), "POST", "/v1/invitations/accept", {
        body: { token: answer.body.inviteToken, signUp: { name: "Let In", password: "correct horse battery" } }
      })))
    return accepted.filter((answer) => answer.status === 200).length
  }

  it("a removed admin's writes under way are refused (403 membership_removed), and nothing they made can be used", async () => {
    for (let round = 0; round < 2; round++) {
      const org = await Http.staffed(server(0), `Removal ${round}`)
      const { changed, answers } = await changeThenWrites(
        org.organizationId,
        () => Http.request(server(1), "DELETE", `/v1/members/${org.admin.membership.id}`, { token: org.owner.token }),
        writes({ token: org.admin.token }, 9)
      )
      expect(changed.status).toBe(204)
      expect(answers.map((answer) => [answer.status, answer.body?.reason])).toEqual(answers.map(() => [403, "membership_removed"]))
      expect(await madeBy(org.organizationId, org.admin.membership.id)).toEqual({ invitations: 0, keys: 0, teams: 0 })
      // The audit log says what happened: nine refusals, no success (rolled back with the write).
      const audited = await shared.query<{ outcome: string; n: number }>(
        `SELECT outcome, count(*)::int AS n FROM audit_events
         WHERE organization_id = $1 AND actor_membership_id = $2 AND action IN ('invitation.create', 'api_key.create', 'team.create')
         GROUP BY outcome`,
        [org.organizationId, org.admin.membership.id]
      )
      expect(audited).toEqual([{ outcome: "denied", n: 9 }])
      expect(await acceptAll(answers)).toBe(0)
    }
  }, 120_000)

  it("a demoted admin's admin writes under way are refused (403 insufficient_role): no admin invitation lands", async () => {
    for (let round = 0; round < 2; round++) {
      const org = await Http.staffed(server(0), `Demotion ${round}`)
      const { changed, answers } = await changeThenWrites(
        org.organizationId,
        () => Http.request(server(1), "PATCH", `/v1/members/${org.admin.membership.id}`, { token: org.owner.token, body: { role: "member" } }),
        writes({ token: org.admin.token }, 9)
      )
      expect(changed.status).toBe(200)
      expect(answers.map((answer) => [answer.status, answer.body?.reason])).toEqual(answers.map(() => [403, "insufficient_role"]))
      expect(await madeBy(org.organizationId, org.admin.membership.id)).toEqual({ invitations: 0, keys: 0, teams: 0 })
      expect(await acceptAll(answers)).toBe(0)
    }
  }, 120_000)

  it("writes under way with an API key revoked meanwhile are refused (401); keys it made before are revoked with it", async () => {
    for (let round = 0; round < 2; round++) {
      const org = await Http.staffed(server(0), `Revocation ${round}`)
      const minted = Http.expectStatus("key", await Http.request(server(0), "POST", "/v1/api-keys", {
        token: org.owner.token,
        body: { name: "revoked", scopes: ["apiKeys.manage", "invitations.manage", "teams.*"] }
      }), 201)
      // A key the revoked key made before its revocation: revoked with it (a leaked key's children do not outlive it).
      const before = Http.expectStatus("key", await Http.request(server(1), "POST", "/v1/api-keys", { apiKey: minted.key, body: { name: "made before" } }), 201)
      // The writes wait on the held row; the revocation (by the admin) needs nothing it guards, and commits meanwhile.
      const held = await shared.hold("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [org.organizationId])
      const racing = writes({ apiKey: minted.key }, 9)
      const pending = Promise.all(racing.map((send, i) => send(server(i))))
      await held.waiters(racing.length)
      const revoked = await Http.request(server(1), "DELETE", `/v1/api-keys/${minted.apiKey.id}`, { token: org.admin.token })
      expect(revoked.status).toBe(204)
      await held.release()
      const answers = await pending
      expect(answers.map((answer) => [answer.status, answer.body?.error])).toEqual(answers.map(() => [401, "unauthorized"]))
      const keys = await shared.query("SELECT name FROM api_keys WHERE organization_id = $1 ORDER BY name", [org.organizationId])
      expect(keys.map((key) => key.name)).toEqual([])
      expect(await acceptAll(answers)).toBe(0)
      for (const answer of answers.filter((answer) => answer.body?.key !== undefined)) {
        expect((await Http.request(server(0), "GET", "/v1/teams", { apiKey: answer.body.key })).status).toBe(401)
      }
      expect((await Http.request(server(0), "GET", "/v1/teams", { apiKey: minted.key })).status).toBe(401)
      expect((await Http.request(server(1), "GET", "/v1/teams", { apiKey: before.key })).status).toBe(401)
    }
  }, 120_000)

  it("writes under way with a session signed out meanwhile are refused (401)", async () => {
    const org = await Http.staffed(server(0), "Sign-out")
    const held = await shared.hold("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [org.organizationId])
    const racing = writes({ token: org.admin.token }, 9)
    const pending = Promise.all(racing.map((send, i) => send(server(i))))
    await held.waiters(racing.length)
    const signedOut = await Http.request(server(1), "POST", "/v1/auth/sign-out", { token: org.admin.token })
    expect(signedOut.status).toBe(204)
    await held.release()
    const answers = await pending
    expect(answers.map((answer) => [answer.status, answer.body?.error])).toEqual(answers.map(() => [401, "unauthorized"]))
    expect(await madeBy(org.organizationId, org.admin.membership.id)).toEqual({ invitations: 0, keys: 0, teams: 0 })
  }, 120_000)

  it("writes under way with an API key whose person the operator disables meanwhile are refused (401)", async () => {
    const operator = await Http.operator(server(0))
    const org = await Http.staffed(server(0), "Disabled")
    const minted = Http.expectStatus("key", await Http.request(server(0), "POST", "/v1/api-keys", {
      token: org.admin.token,
      body: { name: "kept", scopes: ["invitations.manage", "teams.*", "apiKeys.manage"] }
    }), 201)
    // Disabling keeps the key (it is refused while the account stays disabled): only the check at commit, reading the
    // account again, stops the writes already past authentication.
    const held = await shared.hold("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [org.organizationId])
    const racing = writes({ apiKey: minted.key }, 9)
    const pending = Promise.all(racing.map((send, i) => send(server(i))))
    await held.waiters(racing.length)
    const disabled = await Http.request(server(1), "POST", `/v1/admin/users/${org.admin.user.id}/disable`, { token: operator.token })
    expect(disabled.status, disabled.text).toBe(200)
    await held.release()
    const answers = await pending
    expect(answers.map((answer) => [answer.status, answer.body?.error])).toEqual(answers.map(() => [401, "unauthorized"]))
    expect(await madeBy(org.organizationId, org.admin.membership.id)).toEqual({ invitations: 0, keys: 1, teams: 0 })
    expect(await acceptAll(answers)).toBe(0)
  }, 120_000)

  it("a directory's writes under way with a SCIM token revoked meanwhile are refused (SCIM 401)", async () => {
    const org = await Http.staffed(server(0), "Directory")
    const directory = await Http.scimDirectory(server(0), org.owner.token)
    const user = (i: number) => {
      const address = `person${i}.${Math.random().toString(36).slice(2, 8)}@corp.example`
      return { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: address, emails: [{ value: address, primary: true }], active: true }
    }
    const held = await shared.hold("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [org.organizationId])
    const pending = Promise.all(Array.from({ length: 4 }, (_, i) =>
      Http.request(server(i), "POST", `${directory.base}/Users`, {
        token: directory.token,
        body: user(i),
        headers: { "content-type": "application/scim+json" }
      })))
    await held.waiters(4)
    const revoked = await Http.request(server(1), "DELETE", `/v1/scim/connections/${directory.connection.id}/tokens/${directory.tokenId}`, {
      token: org.admin.token
    })
    expect(revoked.status).toBe(204)
    await held.release()
    const answers = await pending
    expect(answers.map((answer) => [answer.status, answer.headers.get("www-authenticate")])).toEqual(
      answers.map(() => [401, 'Bearer realm="orgplane SCIM", error="invalid_token"'])
    )
    const [row] = await shared.query("SELECT count(*)::int AS n FROM scim_users WHERE organization_id = $1", [org.organizationId])
    expect(row.n).toBe(0)
  }, 120_000)

  it("a worker's heartbeat under way when its token is rotated is refused (401) and records nothing", async () => {
    const org = await Http.staffed(server(0), "Workers")
    const registered = Http.expectStatus("worker", await Http.request(server(0), "POST", "/v1/workers", {
      token: org.member.token,
      body: { name: "Laptop worker", destination: "local" }
    }), 201)
    const workerId = registered.worker.id
    // The rotation and the heartbeat both lock the worker's row: the rotation asks first.
    const held = await shared.hold("SELECT id FROM workers WHERE organization_id = $1 AND id = $2 FOR UPDATE", [org.organizationId, workerId])
    const rotated = Http.request(server(1), "POST", `/v1/workers/${workerId}/tokens`, { token: org.member.token })
    await held.waiters(1)
    const beat = Http.request(server(0), "POST", "/v1/worker-runtime/heartbeat", { token: registered.token, body: {} })
    await held.waiters(2)
    await held.release()
    expect((await rotated).status).toBe(201)
    const answer = await beat
    expect([answer.status, answer.body?.error]).toEqual([401, "unauthorized"])
    const activity = Http.expectStatus("activity", await Http.request(server(0), "GET", `/v1/workers/${workerId}/activity?kind=heartbeat`, {
      token: org.member.token
    }), 200)
    expect(activity.items).toEqual([])
  }, 120_000)
})
