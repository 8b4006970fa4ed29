/**
 * A plugin that ships MCP servers as published plugins do: `.mcp.json` with a stdio server run by `node` from
 * `${CLAUDE_PLUGIN_ROOT}` (its entry imports a module beside it and one from the plugin's `lib/`, and reads its
 * `package.json`) and an http server by URL. The stdio server is a small MCP server written here on Node's built-ins
 * (newline-delimited JSON-RPC: `initialize`, `tools/list`, `tools/call`); `toolsOver` lists its tools with the MCP
 * SDK's client, as an agent would after installing the plugin. A client that installs only the files `.mcp.json`
 * names gets a server that dies on its first import.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/** The plugin's files, from its folder. */
export const pluginFiles: Readonly<Record<string, string>> = {
  ".claude-plugin/plugin.json": json({ name: "weather-tools", version: "0.4.0", description: "Forecasts as MCP tools" }),
  ".mcp.json": json({
    mcpServers: {
      forecast: { command: "node", args: ["${CLAUDE_PLUGIN_ROOT}/servers/forecast/index.mjs"], env: { FORECAST_UNITS: "metric" } },
      alerts: { type: "http", url: "https://alerts.example.test/mcp" }
    }
  }),
  "README.md": "# weather-tools\n",
  "lib/format.mjs": "export const degrees = (value, units) => `${value}°${units === \"metric\" ? \"C\" : \"F\"}`\n",
  "servers/forecast/package.json": json({ name: "forecast-server", version: "0.4.0", type: "module" }),
  "servers/forecast/tools.mjs": `import { degrees } from "../../lib/format.mjs"

export const tools = [
  { name: "forecast", description: "Tomorrow's forecast for a city", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }
]

export const call = (name, args, units) => ({ content: [{ type: "text", text: \`\${args.city}: \${degrees(21, units)}\` }] })
`,
  "servers/forecast/index.mjs": `import { readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { call, tools } from "./tools.mjs"

const { name, version } = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"))
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n")

createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line)
  if (request.id === undefined) return
  if (request.method === "initialize") {
    send({ id: request.id, result: { protocolVersion: request.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name, version } } })
  } else if (request.method === "tools/list") {
    send({ id: request.id, result: { tools } })
  } else if (request.method === "tools/call") {
    send({ id: request.id, result: call(request.params.name, request.params.arguments, process.env.FORECAST_UNITS) })
  } else {
    send({ id: request.id, error: { code: -32601, message: "Method not found" } })
  }
})
`
}

/** A marketplace repository holding the plugin under `plugins/weather-tools`. */
export const marketplaceFiles: Readonly<Record<string, string>> = {
  ".claude-plugin/marketplace.json": json({
    name: "weather",
    owner: { name: "Acme" },
    plugins: [{ name: "weather-tools", source: "./plugins/weather-tools" }]
  }),
  ...Object.fromEntries(Object.entries(pluginFiles).map(([path, text]) => [`plugins/weather-tools/${path}`, text]))
}

/** One stdio server of an `.mcp.json`, its `${CLAUDE_PLUGIN_ROOT}` read as `root`. */
export interface StdioServer {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
}

/**
 * Starts the server as an agent would (its command, `${CLAUDE_PLUGIN_ROOT}` replaced by `root`, its env), lists its
 * tools and calls the first with `args` through the MCP SDK's client; stops it.
 */
export const toolsOver = async (root: string, server: StdioServer, args: Record<string, unknown>) => {
  const expand = (text: string) => text.replaceAll("${CLAUDE_PLUGIN_ROOT}", root)
  const transport = new StdioClientTransport({
    command: expand(server.command),
    args: server.args.map(expand),
    env: { PATH: process.env["PATH"] ?? "", CLAUDE_PLUGIN_ROOT: root, ...server.env },
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const client = new Client({ name: "orgplane-test", version: "0.0.0" })
  try {
    await client.connect(transport)
    const { tools } = await client.listTools()
    const first = tools[0]
    const called = first === undefined ? undefined : await client.callTool({ name: first.name, arguments: args })
    return { tools: tools.map((tool) => tool.name), called, stderr }
  } catch (error) {
    throw new Error(`the MCP server did not answer: ${error instanceof Error ? error.message : String(error)}\n${stderr}`)
  } finally {
    await client.close()
  }
}
