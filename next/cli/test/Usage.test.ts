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
 * \"nonsense\""). To settle in next/schema (messages of their own), not here.
 */
const known: Readonly<Record<string, string>> = {
  "orgs list --cursor ": "error: --cursor: Expected a value with a length of at least 1 (see 'orgplane orgs list --help')\n",
  "api-keys create deploy --scope nonsense": "error: --scope: Expected ApiKeyScope (see 'orgplane api-keys create --help')\n",
  "bootstrap create --workspace-name Agents --role king": "error: --role: Expected Role (see 'orgplane bootstrap create --help')\n"
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
