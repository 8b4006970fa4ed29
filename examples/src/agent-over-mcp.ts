/**
 * An agent's side of `orgplane mcp serve`: an MCP client (the official SDK, as Claude Code and other hosts use)
 * starts the CLI's MCP server over stdio and, through its catalog tools, creates a team, invites someone to the
 * organization and publishes a skill to a marketplace the team may view. Each step is said as it is done; a tool
 * error stops the script with a non-zero exit.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_TOKEN=ops_... \
 *     pnpm --filter @orgplane/examples agent-over-mcp examples/skills/deploy-to-staging/SKILL.md
 *
 * Without ORGPLANE_URL it starts a throwaway server first (in memory) with an organization of which it is the owner.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { createClient } from "@orgplane/client"
import type {
  ConfigObjectResponse,
  CreatedInvitation,
  MarketplaceAccessGrantResponse,
  MarketplaceResponse,
  PluginResponse,
  TeamResponse
} from "@orgplane/schema"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { startLocalServer } from "./local-server.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** `orgplane` as this clone runs it (`pnpm orgplane`): the CLI's sources. Installed, the command is just `orgplane`. */
export const cliFromSources: ReadonlyArray<string> = [
  process.execPath,
  "--conditions=@orgplane/source",
  "--import",
  "tsx",
  Path.join(ROOT, "packages/cli/src/bin.ts")
]

export interface AgentOptions {
  readonly baseUrl: string
  /** The credential the MCP server acts with: a session token (`orgplane auth login`'s) or an API key. */
  readonly credential: { readonly token: string } | { readonly apiKey: string }
  /** The skill: Markdown with `name` and `description` in its YAML front matter. */
  readonly skillFile: string
  readonly team?: string
  readonly invite?: string
  /** The words that start `orgplane`; `mcp serve` is added. */
  readonly orgplane?: ReadonlyArray<string>
  readonly log?: (line: string) => void
}

export interface AgentReport {
  readonly tools: ReadonlyArray<string>
  readonly team: { readonly id: string; readonly name: string }
  readonly invitation: { readonly id: string; readonly email: string; readonly role: string }
  readonly skill: { readonly id: string; readonly title: string }
  readonly plugin: { readonly id: string; readonly name: string }
  readonly marketplace: { readonly id: string; readonly name: string }
  readonly grant: { readonly id: string; readonly role: string }
}

/** A tool failed: its message (and the API's answer, when the API refused). */
export class ToolFailed extends Error {}

/** What `find_operations` and `describe_operation` answer, as far as this agent reads them. */
interface FoundOperations {
  readonly operations: ReadonlyArray<{ readonly name: string }>
}
interface DescribedOperation {
  readonly inputSchema: { readonly properties?: Readonly<Record<string, unknown>> }
}

/**
 * Runs `tool`; answers its structured content (of the shape `Content` the tool declares in its output schema), or
 * throws with the tool's error.
 */
const use = async <Content>(client: Client, tool: string, args: Record<string, unknown>): Promise<Content> => {
  const result = await client.callTool({ name: tool, arguments: args })
  const content = Array.isArray(result.content) ? result.content : []
  const text = content.map((part: { type: string; text?: string }) => (part.type === "text" ? part.text ?? "" : "")).join("")
  if (result.isError === true) throw new ToolFailed(`${tool} ${String(args.name ?? "")}: ${text}`)
  if (typeof result.structuredContent !== "object" || result.structuredContent === null) throw new ToolFailed(`${tool}: no structured content`)
  return result.structuredContent as Content
}

/** Calls an API operation through `call_operation`; answers the API's body, as the operation's schema puts it on the wire (`Body`). */
const operation = async <Body>(client: Client, name: string, args: Record<string, unknown>): Promise<Body> =>
  (await use<{ readonly status: number; readonly body: Body }>(client, "call_operation", { name, arguments: args })).body

export const drive = async (options: AgentOptions): Promise<AgentReport> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const [command = "orgplane", ...args] = options.orgplane ?? cliFromSources
  const transport = new StdioClientTransport({
    command,
    args: [...args, "mcp", "serve"],
    // The MCP server reads its credential as every orgplane command does: flags, the environment, then the profile.
    env: {
      PATH: process.env.PATH ?? "",
      ORGPLANE_URL: options.baseUrl,
      ...("token" in options.credential ? { ORGPLANE_TOKEN: options.credential.token } : { ORGPLANE_API_KEY: options.credential.apiKey })
    },
    stderr: "inherit"
  })
  const client = new Client({ name: "orgplane-example-agent", version: "1.0.0" })
  await client.connect(transport)
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name)
    log(`Connected to ${client.getServerVersion()?.name} ${client.getServerVersion()?.version} over stdio: ${tools.join(", ")}`)

    // What an agent does first: find the operations that fit, and read what one takes.
    const found = await use<FoundOperations>(client, "find_operations", { query: "create", group: "teams" })
    const described = await use<DescribedOperation>(client, "describe_operation", { name: "teams.create" })
    log(`Found ${found.operations.map((entry) => entry.name).join(", ")}; teams.create takes ${Object.keys(described.inputSchema.properties ?? {}).join(", ")}`)

    const { team } = await operation<typeof TeamResponse.Encoded>(client, "teams.create", { name: options.team ?? "Platform" })
    log(`Created team ${team.name} (${team.id})`)

    const invitation = await operation<typeof CreatedInvitation.Encoded>(client, "invitations.create", { email: options.invite ?? "ada@example.com", role: "member" })
    log(`Invited ${invitation.invitation.email} as a ${invitation.invitation.role} (${invitation.invitation.id})`)

    // The catalog: the skill as a config object, bundled in a plugin, listed in a marketplace the team may view.
    const source = await Fs.readFile(options.skillFile, "utf8")
    const relativePath = Path.join(Path.basename(Path.dirname(options.skillFile)), Path.basename(options.skillFile))
    const { item: skill } = await operation<typeof ConfigObjectResponse.Encoded>(client, "configObjects.create", { input: { objectType: "skill", rawSourceText: source, relativePath } })
    log(`Published skill ${skill.title} (${skill.id})`)
    const { item: plugin } = await operation<typeof PluginResponse.Encoded>(client, "plugins.create", { name: "Deploy tools", description: "Skills for shipping." })
    await operation(client, "plugins.addConfigObject", { pluginId: plugin.id, configObjectId: skill.id })
    log(`Bundled it in plugin ${plugin.name} (${plugin.id})`)
    const { item: marketplace } = await operation<typeof MarketplaceResponse.Encoded>(client, "marketplaces.create", { name: "Engineering" })
    await operation(client, "marketplaces.addPlugin", { marketplaceId: marketplace.id, pluginId: plugin.id })
    log(`Listed the plugin in marketplace ${marketplace.name} (${marketplace.id})`)
    const { item: grant } = await operation<typeof MarketplaceAccessGrantResponse.Encoded>(client, "marketplaces.marketplaceGrant", { marketplaceId: marketplace.id, teamId: team.id, role: "viewer" })
    log(`Granted team ${team.name} ${grant.role} access to the marketplace (grant ${grant.id})`)

    return {
      tools,
      team: { id: team.id, name: team.name },
      invitation: { id: invitation.invitation.id, email: invitation.invitation.email, role: invitation.invitation.role },
      skill: { id: skill.id, title: skill.title },
      plugin: { id: plugin.id, name: plugin.name },
      marketplace: { id: marketplace.id, name: marketplace.name },
      grant: { id: grant.id, role: grant.role }
    }
  } finally {
    await client.close()
  }
}

/** The demo's organization on a fresh server: an owner signed up, with a new organization; their session token. */
export const demoOwner = async (baseUrl: string) => {
  const anonymous = createClient({ baseUrl })
  try {
    const { session } = await anonymous.users.signUp({ payload: { email: "owner@example.com", password: "a long password", name: "Owner" } })
    const owner = createClient({ baseUrl, token: session.token })
    try {
      await owner.organizations.create({ payload: { name: "Acme" } })
      return { token: session.token }
    } finally {
      await owner.close()
    }
  } finally {
    await anonymous.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file] = process.argv.slice(2)
  if (!file) {
    console.error("usage: agent-over-mcp.ts <SKILL.md>")
    process.exit(2)
  }
  const given = process.env.ORGPLANE_URL ?? ""
  const token = process.env.ORGPLANE_TOKEN ?? ""
  const apiKey = process.env.ORGPLANE_API_KEY ?? ""
  if (given !== "" && token === "" && apiKey === "") {
    console.error("ORGPLANE_TOKEN or ORGPLANE_API_KEY: a credential of the organization is needed with ORGPLANE_URL (orgplane auth login prints none: use orgplane api-keys create)")
    process.exit(2)
  }
  // pnpm runs the script in examples/; a relative path means one from where the command was typed.
  const skillFile = Path.resolve(process.env.INIT_CWD ?? process.cwd(), file)
  const local = given === "" ? await startLocalServer() : undefined
  try {
    const baseUrl = local?.url ?? given
    const credential = local !== undefined ? await demoOwner(local.url) : token !== "" ? { token } : { apiKey }
    if (local !== undefined) console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} (organization Acme, owner@example.com).`)
    const report = await drive({ baseUrl, credential, skillFile })
    console.log(JSON.stringify(report, null, 2))
  } catch (error) {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  } finally {
    await local?.close()
  }
}
