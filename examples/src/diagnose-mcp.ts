/**
 * An automation script with the Promise client: register a remote MCP server as a connection of the organization
 * (checked live: the server must answer an MCP `initialize`), grant it to yourself (owners and admins need a grant
 * too before they run its tools), run one tool as a diagnostic, and print the result with the inspection of the
 * `tools/call` exchange, its credential and session headers redacted. Safe to run again: an existing connection of
 * the same name is reused.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_API_KEY=opk_... MCP_API_KEY=... \
 *     pnpm --filter @orgplane/examples diagnose-mcp https://mcp.example.com/mcp echo '{"text":"hello"}'
 *
 * Without ORGPLANE_URL it starts a throwaway server (in memory, private destinations allowed) and a demo MCP server
 * on loopback behind an API key, and runs against those.
 */
import { createClient, OrgplaneError, paginate } from "@orgplane/client"
import type { ToolInspection } from "@orgplane/schema"
import { FakeMcp } from "@orgplane/testkit"
import { demoOrganization } from "./publish-skill.js"
import { startLocalServer } from "./local-server.js"

export interface DiagnoseOptions {
  readonly baseUrl: string
  readonly apiKey: string
  readonly name: string
  /** The MCP endpoint. */
  readonly url: string
  /** The MCP server's API key; none: the server needs no credential. */
  readonly mcpApiKey?: string | undefined
  readonly tool: string
  readonly arguments: Record<string, unknown>
  readonly log?: (line: string) => void
}

export interface DiagnoseReport {
  readonly connectionId: string
  readonly ok: boolean
  readonly referenceId: string
  /** The tool's result (success) or the diagnostic's code (failure). */
  readonly outcome: unknown
  readonly inspection: ToolInspection
}

/** The inspection as a reader wants it: the request line, headers (redacted ones marked), the status. */
export const describeInspection = (inspection: ToolInspection): Array<string> => {
  const lines = [`diagnosis: ${inspection.diagnosis.summary}`]
  if (inspection.request) {
    lines.push(`> ${inspection.request.method} ${inspection.request.url}`)
    for (const header of inspection.request.headers) lines.push(`> ${header.name}: ${header.value}${header.redacted ? "  (redacted)" : ""}`)
    lines.push(`> (${inspection.request.body.bytes} bytes)`)
  }
  if (inspection.response) {
    lines.push(`< ${inspection.response.status} ${inspection.response.statusText} in ${inspection.response.durationMs} ms`)
    lines.push(`< (${inspection.response.body.bytes} bytes${inspection.response.body.truncated ? ", truncated" : ""})`)
  }
  return lines
}

export const diagnose = async (options: DiagnoseOptions): Promise<DiagnoseReport> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  try {
    // 1. The connection: created (and checked live), or the one of that name found again.
    // One call per `authType`: the request body is a union, one member per type.
    const created = options.mcpApiKey === undefined
      ? client.mcpConnections.create({ payload: { name: options.name, url: options.url, authType: "none" } })
      : client.mcpConnections.create({ payload: { name: options.name, url: options.url, authType: "apikey", apiKey: options.mcpApiKey } })
    const connection = await created.then(
      ({ item }) => item,
      async (error) => {
        if (!(error instanceof OrgplaneError && error.code === "mcp_connection_exists")) throw error
        for await (const found of paginate(client.mcpConnections.list, { urlParams: { scope: "manageable" } })) {
          if (found.name.toLowerCase() === options.name.toLowerCase()) return found
        }
        throw error
      }
    )
    log(`Connection ${connection.name} (${connection.id}) to ${connection.url}: ${connection.connected ? "connected" : "not connected"}`)

    // 2. A grant that reaches the caller (granting again only replaces the role).
    const { membership } = await client.users.me()
    if (membership === null) throw new Error("the API key's person has no active organization")
    await client.mcpConnections.mcpConnectionGrant({ path: { connectionId: connection.id }, payload: { orgMembershipId: membership.id, role: "viewer" } })
    log(`Granted it to you (${membership.id})`)

    // 3. One tool call, inspected. A failure is an answer too: the diagnostic says what failed and whose move it is.
    const called = await client.mcpTools.call({
      path: { connectionId: connection.id },
      payload: { toolName: options.tool, arguments: options.arguments }
    }).then(
      (answer) => ({ ok: true, referenceId: answer.referenceId, outcome: answer.result, inspection: answer.inspection }),
      (error) => {
        if (!(error instanceof OrgplaneError && error.code === "tool_execution_failed")) throw error
        const body = error.body as { diagnostic: { referenceId: string; code: string; operatorAction: string }; inspection: ToolInspection }
        log(`The call failed: ${body.diagnostic.code}. ${body.diagnostic.operatorAction}`)
        return { ok: false, referenceId: body.diagnostic.referenceId, outcome: body.diagnostic.code, inspection: body.inspection }
      }
    )
    log(`Ran ${options.tool} (reference ${called.referenceId}):`)
    for (const line of describeInspection(called.inspection)) log(`  ${line}`)
    return { connectionId: connection.id, ...called }
  } finally {
    await client.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [url, tool, args] = process.argv.slice(2)
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "" && (!url || !tool || (process.env.ORGPLANE_API_KEY ?? "") === "")) {
    console.error("usage: ORGPLANE_URL=… ORGPLANE_API_KEY=opk_… [MCP_API_KEY=…] diagnose-mcp.ts <mcp url> <tool> ['{json arguments}']")
    process.exit(2)
  }
  const demo = given === "" ? await FakeMcp.start({ auth: { apiKey: "demo-key" } }) : undefined
  const local = given === "" ? await startLocalServer({ outboundAllowPrivate: true }) : undefined
  try {
    if (local !== undefined && demo !== undefined) {
      console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} and a demo MCP server on ${demo.url} (API key "demo-key").`)
    }
    const report = await diagnose({
      baseUrl: local?.url ?? given,
      apiKey: local === undefined ? process.env.ORGPLANE_API_KEY! : (await demoOrganization(local.url)).apiKey,
      name: "Demo MCP",
      url: demo?.url ?? url!,
      mcpApiKey: demo !== undefined ? "demo-key" : process.env.MCP_API_KEY || undefined,
      tool: tool ?? "add",
      arguments: args ? JSON.parse(args) : demo !== undefined ? { a: 2, b: 3 } : {}
    })
    console.log(JSON.stringify({ connectionId: report.connectionId, ok: report.ok, referenceId: report.referenceId, outcome: report.outcome }, null, 2))
    if (!report.ok) process.exitCode = 1
  } finally {
    await local?.close()
    await demo?.close()
  }
}
