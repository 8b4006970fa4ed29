/**
 * The quotas (issue 44 item 4) hold when creations race, on Postgres across two servers: the test holds a row every
 * insert waits on after counting (the person's `users` row for a new organization's membership, the organization's
 * row for an API key and an invitation: their foreign keys), so all the racing requests would have counted before any
 * inserts unless something serializes them (`lockLimit`, or the membership lock invitations take).
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SharedPostgres from "../support/SharedPostgres.js"

const statuses = (answers: ReadonlyArray<Http.RawResponse>) => answers.map((answer) => answer.status).sort()
const repeat = <A>(count: number, value: A) => Array.from({ length: count }, () => value)

describe.skipIf(!TestDatabase.onPostgres)("quotas under concurrent creations, two servers (Postgres)", () => {
  let shared: SharedPostgres.Shared
  beforeAll(async () => {
    shared = await SharedPostgres.start(2, { organizationsPerUser: 3, apiKeysPerMember: 3, pendingInvitationsPerOrganization: 3 })
  }, 120_000)
  afterAll(() => shared?.close(), 60_000)

  const server = (i: number) => shared.servers[i % 2]!.url

  /** Fires `requests` at once, alternating between the servers, while `lock` is held; releases it once all wait. */
  const race = async (lock: string, id: string, requests: ReadonlyArray<(url: string) => Promise<Http.RawResponse>>) => {
    const held = await shared.hold(lock, [id])
    const answers = Promise.all(requests.map((send, i) => send(server(i))))
    await held.waiters(requests.length)
    await held.release()
    return answers
  }

  it("ten organizations created at once by a person owning one, quota 3: two are made, eight are refused", async () => {
    const person = await Http.owner(server(0), "Owned")
    const answers = await race("SELECT id FROM users WHERE id = $1 FOR UPDATE", person.user.id, Array.from({ length: 10 }, (_, i) => (url: string) =>
      Http.request(url, "POST", "/v1/organizations", { token: person.token, body: { name: `Racing ${i}` } })))
    expect(statuses(answers)).toEqual([201, 201, ...repeat(8, 409)])
    const [owned] = await shared.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memberships WHERE user_id = $1 AND role = 'owner' AND removed_at IS NULL",
      [person.user.id]
    )
    expect(owned!.n).toBe(3)
  }, 120_000)

  it("ten API keys created at once by one member, quota 3: three are made, seven are refused", async () => {
    const owner = await Http.owner(server(0), "Keys")
    const answers = await race("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", owner.organization.id, Array.from({ length: 10 }, (_, i) => (url: string) =>
      Http.request(url, "POST", "/v1/api-keys", { token: owner.token, body: { name: `Racing ${i}` } })))
    expect(statuses(answers)).toEqual([201, 201, 201, ...repeat(7, 409)])
    const [stored] = await shared.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1", [owner.organization.id])
    expect(stored!.n).toBe(3)
  }, 120_000)

  it("ten invitations created at once, quota 3: three are made, seven are refused", async () => {
    const owner = await Http.owner(server(0), "Invites")
    const answers = await race("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", owner.organization.id, Array.from({ length: 10 }, (_, i) => (url: string) =>
      Http.request(url, "POST", "/v1/invitations", { token: owner.token, body: { email: `racing.${i}@example.com`, role: "member" } })))
    expect(statuses(answers)).toEqual([201, 201, 201, ...repeat(7, 409)])
    const [stored] = await shared.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM invitations WHERE organization_id = $1 AND status = 'pending'",
      [owner.organization.id]
    )
    expect(stored!.n).toBe(3)
  }, 120_000)
})
