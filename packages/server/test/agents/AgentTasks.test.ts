/**
 * Five admin tasks done through `/mcp` the way an agent does them with the catalog tools, counting what it costs the
 * agent: the tool calls it makes and the characters it reads and writes (the tool list once, then each call's
 * arguments and the text of its answer, which is what reaches a model's context). The agent follows the tools' own
 * descriptions: it finds the operations a task needs with the task's words, takes them from the first page of
 * matches, describes those whose arguments it cannot fill from their names alone (an API key's `scopes`, a config
 * object's `input`), then reads or calls them. Each task's outcome is checked through the API.
 *
 * The bound is a third of what the same five tasks cost an agent on 2026-11-28 (26 calls, about 99,500 characters):
 * a change that makes the tools chattier (a longer description, a find that ranks the wanted operation lower, an
 * answer that repeats a schema) fails here.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"

/** What the five tasks cost on 2026-11-28, before the catalog tools ranked, summarised and split reads from writes. */
const before = { calls: 26, characters: 99_500 }

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ mcp: true })
})
afterAll(async () => {
  await server?.close()
})

interface Cost {
  calls: number
  characters: number
}

/** An agent's session: every tool call and the characters it carries, the tool list read once at the start. */
const agentOf = async (token: string) => {
  const client = new Client({ name: "orgplane-agent", version: "0.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  const listed = await client.listTools()
  const cost: Cost = { calls: 0, characters: JSON.stringify(listed.tools).length }
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text?: string }>
    const text = content.map((part) => part.text ?? "").join("")
    cost.calls++
    cost.characters += JSON.stringify(args).length + text.length
    // AGENT_TASKS_TRACE=1 (with --silent=false) prints each call and what it cost, to see where characters go.
    if (process.env.AGENT_TASKS_TRACE) console.log(name, JSON.stringify(args), text.length)
    if (result.isError === true) throw new Error(`${name} ${JSON.stringify(args)} failed: ${text}`)
    return JSON.parse(text) as unknown
  }
  /** The operations find_operations answers for `query`, in its order, with their arguments. */
  const find = async (query: string) => {
    const found = await tool("find_operations", { query }) as { operations: ReadonlyArray<{ name: string; arguments: ReadonlyArray<string> }> }
    return new Map(found.operations.map((operation) => [operation.name, operation.arguments]))
  }
  const describeOperation = (name: string) => tool("describe_operation", { name })
  /** A call's API answer body. */
  const write = async (name: string, args: Record<string, unknown>) => ((await tool("call_operation", { name, arguments: args })) as { body: unknown }).body
  const read = async (name: string, args: Record<string, unknown>) => ((await tool("read_operation", { name, arguments: args })) as { body: unknown }).body
  return { client, cost, find, describeOperation, write, read }
}

type Agent = Awaited<ReturnType<typeof agentOf>>

/**
 * Finds the operations a step needs with the task's words, each on the first page of matches with the arguments the
 * step passes; describes those named in `describing`.
 */
const learn = async (agent: Agent, query: string, wanted: Readonly<Record<string, ReadonlyArray<string>>>, describing: ReadonlyArray<string> = []) => {
  const found = await agent.find(query)
  for (const [name, args] of Object.entries(wanted)) {
    expect([...found.keys()], `${name} for "${query}"`).toContain(name)
    expect(found.get(name)?.map((arg) => arg.replace(/\?$/, "")), name).toEqual(expect.arrayContaining([...args]))
  }
  for (const name of describing) await agent.describeOperation(name)
}

describe("five admin tasks through the catalog tools", { timeout: 60_000 }, () => {
  it("cost an agent under a third of the characters they cost on 2026-11-28, each task done", async () => {
    const owner = await Http.owner(server.url, "Tasks")
    const colleague = await Http.join(server.url, owner.token, "member", "Colleague")
    const agent = await agentOf(owner.token)
    const costs: Record<string, Cost> = {}
    const task = async (name: string, run: () => Promise<void>) => {
      const start = { ...agent.cost }
      await run()
      costs[name] = { calls: agent.cost.calls - start.calls, characters: agent.cost.characters - start.characters }
    }
    try {
      await task("invite an admin", async () => {
        await learn(agent, "invite an admin", { "invitations.create": ["email", "role"] })
        const invited = await agent.write("invitations.create", { email: "new-admin@example.com", role: "admin" }) as { invitation: { id: string } }
        expect(invited.invitation.id).toMatch(/^inv_/)
      })
      await task("make a team and add a member", async () => {
        // teams.create takes the team's first members (its arguments say so): no teams.addMembers after it.
        await learn(agent, "create a team and add a member to it", { "teams.create": ["name", "memberIds"] })
        const members = await agent.read("members.list", {}) as { items: ReadonlyArray<{ id: string; email: string }> }
        const member = members.items.find((entry) => entry.email === colleague.email)
        expect(member).toBeDefined()
        const team = await agent.write("teams.create", { name: "Platform", memberIds: [member?.id] }) as { team: { id: string } }
        const listed = Http.expectStatus<unknown>("team", await Http.request(server.url, "GET", `/v1/teams/${team.team.id}`, { token: owner.token }), 200)
        expect(JSON.stringify(listed)).toContain(member?.id)
      })
      await task("a scoped API key", async () => {
        await learn(agent, "create an api key", { "apiKeys.create": ["name", "scopes"] }, ["apiKeys.create"])
        const key = await agent.write("apiKeys.create", { name: "ci", scopes: ["teams.read"] }) as { apiKey: { scopes: ReadonlyArray<string> } }
        expect(key.apiKey.scopes).toEqual(["teams.read"])
      })
      await task("publish a skill into a plugin and a marketplace", async () => {
        await learn(
          agent,
          "publish a skill in a plugin and a marketplace",
          {
            "plugins.create": ["name"],
            "configObjects.create": ["input", "pluginIds"],
            "marketplaces.create": ["name"],
            "marketplaces.addPlugin": ["marketplaceId", "pluginId"]
          },
          ["configObjects.create"]
        )
        const plugin = await agent.write("plugins.create", { name: "deploy-tools" }) as { item: { id: string } }
        await agent.write("configObjects.create", {
          input: {
            objectType: "skill",
            rawSourceText: "---\nname: deploy\ndescription: Deploys to staging.\n---\nRun `make deploy`.\n",
            parserMode: "markdown",
            relativePath: "skills/deploy/SKILL.md"
          },
          pluginIds: [plugin.item.id]
        })
        const marketplace = await agent.write("marketplaces.create", { name: "Internal" }) as { item: { id: string } }
        await agent.write("marketplaces.addPlugin", { marketplaceId: marketplace.item.id, pluginId: plugin.item.id })
        const resolved = Http.expectStatus<unknown>(
          "resolved",
          await Http.request(server.url, "GET", `/v1/marketplaces/${marketplace.item.id}/resolved`, { token: owner.token }),
          200
        )
        expect(JSON.stringify(resolved)).toContain("deploy")
      })
      await task("read the last 10 audit events", async () => {
        await learn(agent, "last audit events", { "audit.listEvents": ["limit"] })
        const events = await agent.read("audit.listEvents", { limit: 10 }) as { items: ReadonlyArray<unknown> }
        expect(events.items).toHaveLength(10)
      })
    } finally {
      await agent.client.close()
    }
    console.log(JSON.stringify({ total: agent.cost, costs }))
    expect(agent.cost.characters).toBeLessThan(before.characters / 3)
    expect(agent.cost.calls).toBeLessThan(before.calls)
  })
})
