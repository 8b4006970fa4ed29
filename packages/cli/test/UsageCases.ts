/**
 * The words test/Usage.test.ts runs the CLI on, which the 0.1.0 CLI's answers were recorded for
 * (test/fixtures/effect3-usage.json), and that recording.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import { make } from "../src/Cli.js"
import * as Commands from "../src/Commands.js"
import { PASSWORD, type Result } from "./Harness.js"

/** Words that never reach a server: help pages (every group's and every command's of the ported tree), `--version`. */
const pagesOf = (root: Commands.Group): ReadonlyArray<ReadonlyArray<string>> => [
  ...root.children.flatMap((child) => child._tag === "Group" ? [[child.name], [child.name, "--help"]] : []),
  ["orgs", "-h"],
  ...Commands.leaves(root).map(([path]) => [...path.slice(1), "--help"]),
  ["orgs", "create", "x", "--help"],
  ["--version"],
  ["-V"]
]

export const refusals: ReadonlyArray<ReadonlyArray<string>> = [
  ["orgs", "create"],
  ["orgs", "create", "a"],
  ["orgs", "create", "Acme", "Labs"],
  ["orgs", "switch"],
  ["orgs", "switch", "not-an-id"],
  ["orgs", "restore", "tem_01h2xcejqtf2nbrexx3vqjhp41"],
  ["auth", "signup", "--email", "x@example.com"],
  ["auth", "signup", "--email", "not-an-email", "--name", "X", "--password", PASSWORD],
  ["auth", "login"],
  ["auth", "login", "--email"],
  ["auth", "login", "--email", "a@example.com"],
  ["auth", "login", "--email", "a@example.com", "--password"],
  ["auth", "login", "--email", "a@example.com", "--no-browser", "--password", PASSWORD],
  ["auth", "login", "--email", "a@example.com", "--sso", "--password", PASSWORD],
  ["auth", "end-session", "not-a-session"],
  ["orgs", "list", "--limit"],
  ["orgs", "list", "--limit", "0"],
  ["orgs", "list", "--limit", "abc"],
  ["orgs", "list", "--cursor", ""],
  ["orgs", "list", "--json", "--json"],
  ["orgs", "list", "--all", "--all"],
  ["orgs", "list", "--limit", "5", "--limit", "6"],
  ["orgs", "list", "--bogus"],
  ["orgs", "list", "--jsn"],
  ["orgs", "list", "--limit=0"],
  ["orgs", "update", "--metadata", "x"],
  ["orgs", "update", "--name"],
  ["orgs", "update", "--name", "x"],
  ["whoami", "extra"],
  ["whoami", "--url"],
  ["whoami", "--url", "ftp://example.com"],
  ["whoami", "--url", "not a url"],
  ["orgs", "lst"],
  ["orgz"],
  ["--json", "orgs"],
  ["orgs", "--json", "list"],
  ["whoami", "--json", "extra"],
  ["orgs", "list", "--", "--bogus"],
  ["api-keys", "revoke", "not-an-id"],
  ["api-keys", "create", "deploy", "--scope", "nonsense"],
  ["api-keys", "create", "deploy", "--expires-at", "tomorrow"],
  ["api-keys", "list", "--limit", "101"],
  ["bootstrap", "create"],
  ["bootstrap", "create", "--workspace-name", "Agents", "--role", "king"],
  ["bootstrap", "create", "--workspace-name", "Agents", "--owner-email", "nope"],
  ["bootstrap", "claim"],
  ["members", "role", "not-an-id", "admin"],
  ["members", "role", "om_00000000000000000000000000", "king"],
  ["teams", "add", "tem_00000000000000000000000000"],
  ["teams", "create", "X", "--member", "tem_00000000000000000000000000"],
  ["invitations", "create", "not-an-email"],
  ["invitations", "create", "erin@example.com", "--role", "owner"],
  ["invitations", "accept", "some-token", "--sign-up"],
  ["invitations", "accept", "some-token", "--name", "Erin"],
  // workers, memory, telemetry, mcp, llm-providers, connections, mail, calendar
  ["workers", "get", "not-an-id"],
  ["workers", "register", "W", "--destination", "moon"],
  ["workers", "activity", "wrk_00000000000000000000000000", "--kind", "nope"],
  ["workers", "upgrade", "wrk_00000000000000000000000000", "--body", "[1]"],
  ["memory", "get", "not-an-id"],
  ["memory", "search", "x", "--limit", "0"],
  ["memory", "save"],
  ["telemetry", "send"],
  ["mcp", "resolve", ""],
  ["mcp", "call", "Docs"],
  ["mcp", "call", "Docs", "echo", "--args", "[1]"],
  ["mcp", "connections", "create", "Docs", "--mcp-url", "https://mcp.example.com/mcp", "--auth", "bogus"],
  ["mcp", "connections", "revoke", "Docs", "not-a-grant"],
  ["mcp", "connections", "tool-policy", "set"],
  ["llm-providers", "create", "X", "--api-style", "bogus"],
  ["llm-providers", "grant", "P", "--role", "king"],
  ["llm-providers", "revoke", "P", "not-a-grant"],
  ["connections", "suite-c"],
  ["connections", "suite-a", "client", "set"],
  ["connections", "suite-a", "client", "set", "--client-id", "x", "--features", "bogus"],
  ["mail", "read"],
  ["mail", "draft", "--to", "not-an-address", "--subject", "Hi"],
  ["calendar", "meet"],
  // config-objects, plugins, marketplaces, connectors, templates
  ["config-objects", "create", "--type", "skill"],
  ["config-objects", "create", "--type", "rule", "--file", "-"],
  ["config-objects", "create", "--type", "skill", "--file", "/nonexistent/SKILL.md"],
  ["config-objects", "create", "--type", "skill", "--file", "/", "--plugin", "tem_01h455vb4pex5vsknk084sn02q"],
  ["config-objects", "get", "not-an-id"],
  ["config-objects", "list", "--status", "gone"],
  ["plugins", "create", "--name", "X", "--description"],
  ["plugins", "objects", "plg_01h455vb4pex5vsknk084sn02q", "--include-removed", "--include-removed"],
  ["plugins", "download", "plg_01h455vb4pex5vsknk084sn02q"],
  ["marketplaces", "create", "--name", "Tools", "--logo-url", "ftp://example.com/logo.png"],
  ["marketplaces", "add-plugin", "mkt_01h455vb4pex5vsknk084sn02q", "cob_01h455vb4pex5vsknk084sn02q"],
  ["connectors", "accounts", "connect", "--installation-id", "abc"],
  ["connectors", "instances", "create", "--account", "cac_01h455vb4pex5vsknk084sn02q", "--repository", "not a repo", "--name", "x"],
  ["connectors", "instances", "create", "--account", "cac_01h455vb4pex5vsknk084sn02q", "--repository", "a/b", "--name", "x", "--config", "[1]"],
  ["connectors", "instances", "access", "grant", "cin_01h455vb4pex5vsknk084sn02q", "--role", "owner"],
  ["connectors", "targets", "add", "cin_01h455vb4pex5vsknk084sn02q", "--branch", "a..b"],
  ["connectors", "mappings", "list", "cin_01h455vb4pex5vsknk084sn02q"],
  ["connectors", "mappings", "add", "ctg_01h455vb4pex5vsknk084sn02q", "--selector", "a.md", "--object-type", "rule"],
  ["connectors", "tree", "cin_01h455vb4pex5vsknk084sn02q", "--limit", "501"],
  ["connectors", "apply", "cin_01h455vb4pex5vsknk084sn02q", "--select", ""],
  ["connectors", "syncs", "list", "cin_01h455vb4pex5vsknk084sn02q", "--status", "done"],
  ["connectors", "syncs", "get", "cin_01h455vb4pex5vsknk084sn02q"],
  ["templates", "create", "x", "--kind", "workspace"],
  ["templates", "list", "--kind", "Work Space"],
  ["templates", "get", "not-an-id"],
  ["templates", "instantiate", "tpl_01h455vb4pex5vsknk084sn02q", "--version-id", "tpl_01h455vb4pex5vsknk084sn02q"],
  // keys, access, policies, scim, audit (with streams), admin
  ["keys", "generate", "--id", "no spaces"],
  ["keys", "rotate", "--batch-size", "0"],
  ["access", "grant", "cob_01jc0000000000000000000000"],
  ["access", "grant", "tem_01jc0000000000000000000000", "--role", "viewer", "--org-wide"],
  ["access", "grant", "cob_01jc0000000000000000000000", "--role", "owner", "--org-wide"],
  ["access", "grant", "cob_01jc0000000000000000000000", "--role", "viewer"],
  ["access", "revoke", "cob_01jc0000000000000000000000", "pag_01jc0000000000000000000000"],
  ["policies", "create", "Bad"],
  ["policies", "update", "dpo_01jc0000000000000000000000", "--enabled", "maybe"],
  ["policies", "get", "tem_01jc0000000000000000000000"],
  ["scim", "connections", "create", "Okta", "--role-rule", "nogroup"],
  ["scim", "connections", "update", "scc_01jc0000000000000000000000"],
  ["scim", "connections", "update", "scc_01jc0000000000000000000000", "--role-rule", "a=admin", "--clear-role-rules"],
  ["scim", "tokens", "create", "scc_01jc0000000000000000000000"],
  ["scim", "tokens", "create", "scc_01jc0000000000000000000000", "--name", "x", "--expires-at", "tomorrow"],
  ["scim", "events", "scc_01jc0000000000000000000000", "--resource-type", "Thing"],
  ["audit", "list", "--outcome", "maybe"],
  ["audit", "list", "--since", "yesterday"],
  ["audit", "settings", "set"],
  ["audit", "export", "--format", "xml"],
  ["audit", "streams", "create", "ftp://example.com/x"],
  ["audit", "streams", "get", "tem_01jc0000000000000000000000"],
  ["audit", "streams", "update", "ast_01jc0000000000000000000000"],
  ["audit", "streams", "update", "ast_01jc0000000000000000000000", "--description", "x", "--clear-description"],
  ["audit", "streams", "update", "ast_01jc0000000000000000000000", "--url", "http://127.0.0.1:7/x"],
  ["admin", "claim-operator"],
  ["admin", "orgs", "list", "--deleted", "--live"],
  ["admin", "orgs", "delete", "tem_01jc0000000000000000000000"],
  ["admin", "users", "delete", "usr_01jc0000000000000000000000"],
  ["admin", "users", "list", "--state", "gone"],
  ["admin", "reset-password", "not-an-email", "--data", "/nonexistent/x"],
  // sso (and auth login --sso)
  ["sso", "policy", "set", "maybe"],
  ["sso", "connections", "get", "not-an-id"],
  ["sso", "connections", "test", "not-an-id"],
  ["sso", "verify", "--domain", "not a domain"],
  ["sso", "connections", "create", "Okta", "--domain", "not a domain", "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app"],
  ["sso", "connections", "create", "Okta", "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app"],
  ["sso", "connections", "create", "X", "--oidc-issuer", "https://x.example", "--saml-entity-id", "urn:idp"],
  ["sso", "connections", "create", "X", "--oidc-issuer", "https://x.example"],
  ["sso", "connections", "create", "X", "--saml-entity-id", "urn:idp"],
  ["sso", "connections", "create", "X", "--jit-role", "owner", "--saml-metadata-url", "https://idp.example/md"],
  ["sso", "connections", "update", "ssc_01h455vb4pex5vsknk084sn02q"],
  ["auth", "login", "--email", "a@example.com", "--no-browser"],
  // serve
  ["serve", "--port", "70000"],
  ["serve", "--port", "abc"],
  ["serve", "--port", "1.5"],
  ["serve", "--port", "-1"],
  ["serve", "--port", ""],
  ["serve", "--port"],
  ["serve", "extra"],
  ["serve", "--url", "http://127.0.0.1:1"]
]

/** The pages of the CLI's tree. */
export const pages = async (): Promise<ReadonlyArray<ReadonlyArray<string>>> => pagesOf(await Effect.runPromise(make()))

/** Every case, in order: the pages, then the refusals. */
export const words = (pages: ReadonlyArray<ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => [...pages, ...refusals]

/**
 * The variables every case runs with: a fresh config folder, a token, and a URL nothing listens on (a command that got
 * past its parser would answer 5, which the comparison shows).
 */
export const environment = (configDir: string, port: number): Record<string, string> => ({
  ORGPLANE_CONFIG_DIR: configDir,
  ORGPLANE_URL: `http://127.0.0.1:${port}`,
  ORGPLANE_TOKEN: "unused"
})

/** What the Effect 3 CLI printed and answered on one case's words. */
export interface Recorded extends Result {
  readonly args: ReadonlyArray<string>
}

export const fixture = new URL("./fixtures/effect3-usage.json", import.meta.url)

const isRecorded = (value: unknown): value is Recorded =>
  typeof value === "object" && value !== null && "args" in value && Array.isArray(value.args) &&
  value.args.every((word) => typeof word === "string") && "code" in value && typeof value.code === "number" &&
  "stdout" in value && typeof value.stdout === "string" && "stderr" in value && typeof value.stderr === "string"

/** The recording, case by case in the order of `words`. */
export const recorded = (): ReadonlyArray<Recorded> => {
  const parsed: unknown = JSON.parse(Fs.readFileSync(fixture, "utf8"))
  if (!Array.isArray(parsed) || !parsed.every(isRecorded)) throw new Error(`${fixture.pathname}: not a list of recorded cases`)
  return parsed
}
