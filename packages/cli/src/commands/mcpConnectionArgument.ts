/**
 * The `<connection>` argument of the `mcp connections` commands: a connection's id (emc_…) or its name (any case),
 * resolved to its id.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { ExternalMcpConnectionId, type McpConnection } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"

export const connection = Inputs.argument("connection", {
  placeholder: "<connection>",
  description: "The connection: its id (emc_…) or its name (any case)."
})

const isConnectionId = Schema.is(ExternalMcpConnectionId)

/** Every page of a list, in order. */
const everyPage = (client: OrgplaneApiClient, scope: "usable" | "manageable") =>
  Effect.gen(function*() {
    const items: Array<McpConnection> = []
    let cursor: string | undefined
    do {
      const page = yield* client.mcpConnections.list({ query: { scope, limit: 100, ...(cursor === undefined ? {} : { cursor }) } })
      items.push(...page.items)
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    return items
  })

/**
 * The id a connection argument names: an id as is, else the connection of that name (ignoring case) among those
 * the caller manages (owners and admins) or, for members, those granted to them.
 */
export const resolveConnection = (client: OrgplaneApiClient, given: string) =>
  Effect.gen(function*() {
    if (isConnectionId(given)) return given
    const all = yield* everyPage(client, "manageable").pipe(
      Effect.catchIf((error) => (error as { _tag?: string })._tag === "Forbidden", () => everyPage(client, "usable"))
    )
    const found = all.find((item) => item.name.toLowerCase() === given.trim().toLowerCase())
    if (found === undefined) {
      return yield* new UsageError({ message: `<connection>: no MCP connection is named "${given.slice(0, 100)}" (give its name or its id, emc_…)` })
    }
    return found.id
  })
