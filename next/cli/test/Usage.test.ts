/**
 * The port's help, usage errors and exit codes, held to the Effect 3 CLI's (packages/cli) on the same words: every
 * page of the ported commands and the usage errors the parser and the dispatcher answer, before anything is sent.
 * Ports packages/cli/test/Cli.test.ts's parse and help assertions and compares whole outputs besides.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { make } from "../src/Cli.js"
import * as Commands from "../src/Commands.js"
import * as Effect3Cli from "./Effect3Cli.js"
import { cleanup, freePort, fresh, PASSWORD, type Result } from "./Harness.js"

/** Words that never reach a server: help pages (every group's and every command's of the ported tree), `--version`. */
const pagesOf = (root: Commands.Group): ReadonlyArray<ReadonlyArray<string>> => [
  ...root.children.flatMap((child) => child._tag === "Group" ? [[child.name], [child.name, "--help"]] : []),
  ["orgs", "-h"],
  ...Commands.leaves(root).map(([path]) => [...path.slice(1), "--help"]),
  ["orgs", "create", "x", "--help"],
  ["--version"],
  ["-V"]
]

const refusals: ReadonlyArray<ReadonlyArray<string>> = [
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

/**
 * Differences left, by the words, with why. A schema without a message of its own is refused in its Effect version's
 * default words: next/schema's `Cursor` (`isMinLength(1)`) says "Expected a value with a length of at least 1" where
 * Effect 3 said "Expected a string at least 1 character(s) long, actual \"\"", and a union of literals (`ApiKeyScope`,
 * `Role`) is "Expected <its identifier>" where Effect 3 named its first member ("Expected \"members.read\", actual
 * \"nonsense\""). To settle in next/schema (messages of their own), not here. The same two for the later groups: a
 * JSON value that is not an object (`JsonObject`, `RuntimeUpgradeRequest`) is "Expected JsonObject" where Effect 3
 * added ", actual [1]" (and wrote an unnamed object schema out), and `SuiteFeature` is a union of literals.
 */
const known: Readonly<Record<string, string>> = {
  "orgs list --cursor ": "error: --cursor: Expected a value with a length of at least 1 (see 'orgplane orgs list --help')\n",
  "api-keys create deploy --scope nonsense": "error: --scope: Expected ApiKeyScope (see 'orgplane api-keys create --help')\n",
  "bootstrap create --workspace-name Agents --role king": "error: --role: Expected Role (see 'orgplane bootstrap create --help')\n",
  "workers upgrade wrk_00000000000000000000000000 --body [1]": "error: --body: Expected JsonObject (see 'orgplane workers upgrade --help')\n",
  "mcp call Docs echo --args [1]": "error: --args: Expected JsonObject (see 'orgplane mcp call --help')\n",
  "connections suite-a client set --client-id x --features bogus":
    "error: --features: Expected SuiteFeature (see 'orgplane connections suite-a client set --help')\n",
  // config-objects, connectors: Effect 3's parser refused every bad flag at once, one a line, where effect/cli 4
  // stops at the first; next/schema's `JsonObject` does not quote the value ("actual [1]"); Effect 3's parser read
  // a repeated flag's empty value as no flag at all (so `apply` saw neither --select nor --all-supported), effect/cli
  // 4 keeps it and the API's rule refuses it.
  "config-objects create --type rule --file -":
    "error: Expected one of the following cases: skill, agent, command, tool, mcp, hook, context, custom (see 'orgplane config-objects create --help')\n",
  "config-objects create --type skill --file / --plugin tem_01h455vb4pex5vsknk084sn02q":
    "error: --file: '/' is not a file (see 'orgplane config-objects create --help')\n",
  "connectors instances create --account cac_01h455vb4pex5vsknk084sn02q --repository a/b --name x --config [1]":
    "error: --config: Expected JsonObject (see 'orgplane connectors instances create --help')\n",
  "connectors apply cin_01h455vb4pex5vsknk084sn02q --select ":
    "error: --select: must be 1 to 1024 characters long (after trimming white space) (see 'orgplane connectors apply --help')\n"
}

let pages: ReadonlyArray<ReadonlyArray<string>>
let port: number
let effect3: ReadonlyArray<Result>
let cases: ReadonlyArray<{ readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }>

beforeAll(async () => {
  pages = pagesOf(await Effect.runPromise(make()))
  port = await freePort()
  // Nothing listens on the port: a command that got past its parser would answer 5, which the comparison shows.
  const { configDir } = await fresh()
  const env = { ORGPLANE_CONFIG_DIR: configDir, ORGPLANE_URL: `http://127.0.0.1:${port}`, ORGPLANE_TOKEN: "unused" }
  cases = [...pages, ...refusals].map((args) => ({ args, env }))
  effect3 = await Effect3Cli.runAll(cases)
})
afterAll(() => cleanup())

describe("help and usage, as the Effect 3 CLI's", () => {
  it("prints every page of the ported commands as the Effect 3 CLI does", async () => {
    expect(pages.length).toBeGreaterThan(50)
    const { invoke } = await import("./Harness.js")
    for (const [index, { args, env }] of cases.slice(0, pages.length).entries()) {
      const result = await invoke(args, env)
      expect(result, args.join(" ")).toEqual(effect3[index])
      expect(result.code, args.join(" ")).toBe(0)
    }
  })

  it("refuses bad words with the Effect 3 CLI's messages and exit codes", async () => {
    const { invoke } = await import("./Harness.js")
    const differing: Array<string> = []
    for (const [offset, { args, env }] of cases.slice(pages.length).entries()) {
      const result = await invoke(args, env)
      const original = effect3[pages.length + offset]!
      expect(result.code, args.join(" ")).toBe(original.code)
      const words = args.join(" ")
      if (Object.hasOwn(known, words)) {
        expect(result.stderr, words).toBe(known[words])
        continue
      }
      if (JSON.stringify(result) !== JSON.stringify(original)) {
        differing.push(`${args.join(" ")}\n  effect 3: ${JSON.stringify(original)}\n  effect 4: ${JSON.stringify(result)}`)
      }
    }
    expect(differing.join("\n")).toBe("")
  })

  it("exits 2 on invalid flags and arguments, before sending anything", async () => {
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: `http://127.0.0.1:${port}`, ORGPLANE_TOKEN: "unused" }
    const results = await Promise.all([
      cli(["orgs", "list", "--bogus"], env),
      cli(["orgs", "list", "--limit", "0"], env),
      cli(["orgs", "switch", "not-an-id"], env),
      cli(["auth", "signup", "--email", "not-an-email", "--name", "X", "--password", PASSWORD]),
      cli(["auth", "login", "--email", "a@example.com"]) // no password, and no terminal to prompt on
    ])
    expect(results.map((result) => result.code)).toEqual([2, 2, 2, 2, 2])
    expect(results[0]!.stderr).toContain("--bogus")
    expect(results[1]!.stderr).toContain("--limit: must be an integer from 1 to 100")
    expect(results[2]!.stderr).toContain("organizationId: TypeID must start with 'org_'")
    const revoke = await cli(["api-keys", "revoke", "not-an-id"], env)
    expect(revoke.code).toBe(2)
    expect(revoke.stderr).toContain("apiKeyId: TypeID must start with 'apk_' (API key id)")
    expect(results[3]!.stderr).toContain("--email: must be an email address")
    expect(results[4]!.stderr).toContain("ORGPLANE_PASSWORD")
  })

  it("shows an overview of the ported commands", async () => {
    const { cli } = await fresh()
    const overview = await cli(["--help"])
    expect(overview.code).toBe(0)
    for (const command of ["auth signup", "auth login", "auth logout", "whoami", "orgs list", "orgs create", "orgs switch", "api-keys create", "api-keys list", "api-keys revoke", "bootstrap create", "bootstrap claim"]) {
      expect(overview.stdout).toContain(`  ${command}`)
    }
  })
})
