/**
 * The curated MCP servers `resolve` matches a product name or host against, as data. The built-in list is the
 * reference service's; an operator replaces or extends it with `ORGPLANE_MCP_PRESETS_FILE` (see `PresetsConfig`).
 */
import { McpPreset } from "@orgplane-next/schema"

const SLACK_SCOPES = [
  "search:read.public",
  "search:read.private",
  "search:read.im",
  "search:read.mpim",
  "search:read.files",
  "chat:write",
  "channels:history",
  "groups:history",
  "im:history",
  "mpim:history",
  "users:read"
]

const preset = (fields: Omit<ConstructorParameters<typeof McpPreset>[0], "requiresOAuthClient"> & { requiresOAuthClient?: boolean }) =>
  new McpPreset({ requiresOAuthClient: false, ...fields })

export const BUILT_IN: ReadonlyArray<McpPreset> = [
  preset({ presetId: "notion", displayName: "Notion", description: "Notion pages, databases and search.", url: "https://mcp.notion.com/mcp", authType: "oauth" }),
  preset({ presetId: "linear", displayName: "Linear", description: "Linear issues, projects and cycles.", url: "https://mcp.linear.app/mcp", authType: "oauth" }),
  preset({ presetId: "stripe", displayName: "Stripe", description: "Stripe payments, customers and billing.", url: "https://mcp.stripe.com", authType: "oauth" }),
  preset({ presetId: "sentry", displayName: "Sentry", description: "Sentry issues, events and releases.", url: "https://mcp.sentry.dev/mcp", authType: "oauth" }),
  preset({ presetId: "granola", displayName: "Granola", description: "Granola meeting notes.", url: "https://mcp.granola.ai/mcp", authType: "oauth" }),
  preset({ presetId: "polar", displayName: "Polar", description: "Polar products, orders and subscriptions.", url: "https://mcp.polar.sh/mcp/polar-mcp", authType: "oauth" }),
  preset({ presetId: "xquik", displayName: "Xquik", description: "Xquik social data.", url: "https://xquik.com/mcp", authType: "oauth" }),
  preset({
    presetId: "slack",
    displayName: "Slack",
    description: "Slack search, messages and channels. Needs a Slack app registered by an admin (no dynamic registration).",
    url: "https://mcp.slack.com/mcp",
    authType: "oauth",
    requiresOAuthClient: true,
    authorizationServerIssuer: "https://mcp.slack.com",
    defaultOAuthScopes: SLACK_SCOPES
  }),
  preset({ presetId: "exa", displayName: "Exa", description: "Exa web search.", url: "https://mcp.exa.ai/mcp", authType: "apikey" }),
  preset({ presetId: "render", displayName: "Render", description: "Render services, deploys and logs.", url: "https://mcp.render.com/mcp", authType: "apikey" }),
  preset({ presetId: "context7", displayName: "Context7", description: "Context7 library documentation.", url: "https://mcp.context7.com/mcp", authType: "none" })
]

/** The preset whose URL has the same host as `url`, if any. */
export const forUrl = (presets: ReadonlyArray<McpPreset>, url: string): McpPreset | undefined => {
  const host = URL.canParse(url) ? new URL(url).hostname.toLowerCase() : undefined
  return host === undefined ? undefined : presets.find((preset) => new URL(preset.url).hostname.toLowerCase() === host)
}
