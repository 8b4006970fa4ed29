/**
 * The audit log under concurrent requests, on Postgres (the embedded database runs one statement at a time, so
 * these could not fail there): each change that commits has exactly one event, a change that lost a race has none,
 * and the before and after of concurrent updates of one resource chain, because each was read under the change's
 * lock.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

describe.skipIf(!TestDatabase.onPostgres)("audit events of concurrent changes (Postgres)", () => {
  let server: Awaited<ReturnType<typeof TestServer.start>>
  let org: Awaited<ReturnType<typeof Http.staffed>>
  beforeAll(async () => {
    server = await TestServer.start()
    org = await Http.staffed(server.url, "Racing")
  })
  afterAll(() => server?.close())

  const { audit, teams } = calls(() => server.url)
  const events = async (query: { readonly action: string; readonly targetId?: string; readonly order?: "asc" }) =>
    ok(await audit.listEvents({ token: org.owner.token, query: { limit: "100", ...query } }), 200).items
  /** The team name on one side of an update's changes. */
  const nameOn = (side: Readonly<Record<string, unknown>> | null | undefined): string => {
    const name = side?.["name"]
    if (typeof name !== "string") throw new Error(`no name in ${JSON.stringify(side)}`)
    return name
  }

  it("records one event per committed change, and none for the ones that lost", async () => {
    // Twelve creates of one name at once: one wins, the rest are 409s that roll back with their events.
    const answers = await Promise.all(Array.from({ length: 12 }, () =>
      teams.create({ token: org.owner.token, payload: { name: "Contested" } })))
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([201, ...Array.from({ length: 11 }, () => 409)])
    const winner = ok(answers.find((answer) => answer.status === 201)!, 201).team
    const created = (await events({ action: "team.create" })).filter((event) => event.targets[0]?.id === winner.id)
    expect(created.length).toBe(1)
    expect((await events({ action: "team.create" })).length).toBe(1)

    // Twenty different teams at once: twenty events, each naming its own team and request.
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      teams.create({ token: org.owner.token, payload: { name: `Team ${i}` } })))
    expect(many.every((answer) => answer.status === 201)).toBe(true)
    const recorded = await events({ action: "team.create" })
    expect(recorded.length).toBe(21)
    for (const answer of many) {
      const mine = recorded.filter((event) => event.requestId === answer.headers.get("x-request-id"))
      expect(mine.map((event) => event.targets[0]?.id)).toEqual([ok(answer, 201).team.id])
    }
  })

  it("chains the before and after of concurrent updates of one resource", async () => {
    const team = ok(await teams.create({ token: org.owner.token, payload: { name: "v0" } }), 201).team
    const renames = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      teams.update({ token: org.owner.token, path: { teamId: team.id }, payload: { name: `v${i + 1}` } })))
    expect(renames.every((answer) => answer.status === 200)).toBe(true)
    const updates = (await events({ action: "team.update", targetId: team.id, order: "asc" }))
    expect(updates.length).toBe(10)
    // In commit order (each held the row's lock), each change starts where the one before it ended.
    const byName = new Map(updates.map((event) => [nameOn(event.changes?.before), event]))
    let name = "v0"
    for (let step = 0; step < 10; step++) {
      const event = byName.get(name)
      expect(event, `an update from ${name}`).toBeDefined()
      name = nameOn(event?.changes?.after)
    }
    const final = ok(await teams.get({ token: org.owner.token, path: { teamId: team.id } }), 200).team
    expect(final.name).toBe(name)
  })
})
