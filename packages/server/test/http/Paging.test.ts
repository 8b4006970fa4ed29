/**
 * Keyset cursors: a cursor pages only the list and filters that issued it; anything else (another list, other
 * filters, a cursor of another server instance, a tampered or hand-made one) is a 400 on `cursor`.
 */
import type { MemberPage, TeamPage } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
let org: Awaited<ReturnType<typeof Http.staffed>>
beforeAll(async () => {
  server = await TestServer.start()
  org = await Http.staffed(server.url)
  for (const name of ["Alpha", "beta", "Gamma", "delta"]) {
    const created = await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, body: { name } })
    if (created.status !== 201) throw new Error(created.text)
  }
})
afterAll(() => server.close())

const { get } = Http.verbs(() => server.url)
const as = () => ({ token: org.owner.token })

const badCursor = {
  error: "invalid_request",
  details: [{ message: "is not a cursor returned by this list with these filters", path: ["cursor"] }]
}

type Team = (typeof TeamPage.Encoded)["items"][number]

/** Every team of a list of teams, page by page; fails on anything but 200. */
const all = async (path: string, limit: number) => {
  const items: Array<Team> = []
  let cursor: string | null = null
  do {
    const separator = path.includes("?") ? "&" : "?"
    const answer = await get(`${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, as())
    expect(answer.status, answer.text).toBe(200)
    const page = Http.expectStatus<typeof TeamPage.Encoded>("a page of teams", answer, 200)
    items.push(...page.items)
    cursor = page.nextCursor
  } while (cursor !== null)
  return items
}

/** The cursor of a 200 answer's next page, as the request's path carries it. */
const nextCursor = (what: string, response: Http.RawResponse) =>
  String(Http.expectStatus<typeof MemberPage.Encoded | typeof TeamPage.Encoded>(what, response, 200).nextCursor)

describe("keyset cursors", () => {
  it("page a name-sorted list in its order, case-insensitively, without repeats or gaps", async () => {
    const teams = await all("/v1/teams", 1)
    expect(teams.map((team) => team.name)).toEqual(["Alpha", "beta", "delta", "Gamma"])
  })

  it("carry long names of any script (the cursor holds the sort key)", async () => {
    const names = ["é".repeat(255), "日".repeat(255), "😀".repeat(127)]
    for (const name of names) {
      expect((await Http.request(server.url, "POST", "/v1/teams", { token: org.owner.token, body: { name } })).status).toBe(201)
    }
    const teams = await all("/v1/teams?q=" + encodeURIComponent("日"), 1)
    expect(teams.map((team) => team.name)).toEqual([names[1]])
    const everything = await all("/v1/teams", 2)
    expect(everything.map((team) => team.name)).toEqual(expect.arrayContaining(names))
  })

  it("are refused by another list, even one sorted the same way", async () => {
    const members = Http.expectStatus<typeof MemberPage.Encoded>("members", await get("/v1/members?limit=1", as()), 200)
    expect(members.nextCursor).not.toBeNull()
    const foreign = await get(`/v1/invitations?cursor=${encodeURIComponent(String(members.nextCursor))}`, as())
    expect(foreign.status).toBe(400)
    expect(foreign.body).toEqual(badCursor)
  })

  it("are refused with other filters than the ones that issued them", async () => {
    const page = Http.expectStatus<typeof MemberPage.Encoded>("members", await get("/v1/members?limit=1&role=member", as()), 200)
    expect(page.nextCursor).toBeNull() // one member with that role
    const cursor = encodeURIComponent(nextCursor("members", await get("/v1/members?limit=1", as())))
    expect((await get(`/v1/members?limit=1&cursor=${cursor}`, as())).status).toBe(200)
    expect(await get(`/v1/members?limit=1&role=admin&cursor=${cursor}`, as())).toMatchObject({ status: 400, body: badCursor })
    // The page size is not a filter: it may change between pages.
    expect((await get(`/v1/members?limit=5&cursor=${cursor}`, as())).status).toBe(200)
  })

  it("are refused when tampered with or made by hand, even with a well-formed key", async () => {
    const cursor = nextCursor("teams", await get("/v1/teams?limit=1", as()))
    const [payload, signature] = cursor.split(".")
    if (signature === undefined) throw new Error(`a cursor is a payload and a signature: ${cursor}`)
    const forgedPayload = Buffer.from("aaaa\u0000tem_00000000000000000000000000").toString("base64url")
    for (
      const bad of [
        `${forgedPayload}.${signature}`, // a key the server never issued, with a signature of another
        `${payload}.${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`, // a changed signature (its first character: the last ones hold padding bits)
        `${payload}`, // no signature
        Buffer.from(JSON.stringify(["Alpha", "tem_00000000000000000000000000"])).toString("base64url") // the old format
      ]
    ) {
      expect(await get(`/v1/teams?limit=1&cursor=${encodeURIComponent(bad)}`, as())).toMatchObject({ status: 400, body: badCursor })
    }
  })

  it("are refused by another server instance (each instance signs with its own key)", async () => {
    const other = await TestServer.start()
    try {
      const owner = await Http.owner(other.url)
      const cursor = nextCursor("teams", await get("/v1/teams?limit=1", as()))
      const response = await Http.request(other.url, "GET", `/v1/teams?cursor=${encodeURIComponent(cursor)}`, {
        token: owner.token
      })
      expect(response).toMatchObject({ status: 400, body: badCursor })
    } finally {
      await other.close()
    }
  })
})
