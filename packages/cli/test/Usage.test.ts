/**
 * The CLI's help, usage errors and exit codes, held to the 0.1.0 CLI's (on Effect 3) on the same words: every page of
 * the commands and the usage errors the parser and the dispatcher answer, before anything is sent.
 *
 * The 0.1.0 side is a recording, test/fixtures/effect3-usage.json (the words are test/UsageCases.ts's), made from the
 * Effect 3 CLI before 0.2.0 (its script is in the history: packages/cli/scripts/record-effect3-usage.ts at the commit
 * before the move to Effect 4). A case added to UsageCases.ts, or a page added to the CLI's tree, is not in it: the
 * test says so, and the new page or case is asserted on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, freePort, fresh, PASSWORD, type Result } from "./Harness.js"
import * as UsageCases from "./UsageCases.js"
import { VERSION } from "../src/Version.js"

/**
 * Differences left, by the words, with why. A schema without a message of its own is refused in its Effect version's
 * default words: the schema's `Cursor` (`isMinLength(1)`) says "Expected a value with a length of at least 1" where
 * Effect 3 said "Expected a string at least 1 character(s) long, actual \"\"", and a union of literals (`ApiKeyScope`,
 * `Role`) is "Expected <its identifier>" where Effect 3 named its first member ("Expected \"members.read\", actual
 * \"nonsense\""). To settle in the schema (messages of their own), not here. The same two for the later groups: a
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
  // stops at the first; the schema's `JsonObject` does not quote the value ("actual [1]"); Effect 3's parser read
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

/**
 * Pages changed on purpose since 0.1.0, by their words: each `[now, then]` text of this CLI's page put back as the
 * recording has it, so the rest of the page is still held to it.
 */
const changedPages: Readonly<Record<string, ReadonlyArray<readonly [string, string]>>> = {
  // Issue 55: the actions a key made without scopes leaves out, as the server's policy table now has them.
  "api-keys create --help": [[
    "Default: your role's actions except those a key takes only when a scope names them: key management, ownership and role changes, inviting admins, audit retention, SSO, SCIM, password resets, deleting the organization and the operator's.",
    "Default: your role's actions except key management, ownership, audit retention, SSO, SCIM and the operator's."
  ]]
}

/** A page's output with its changes since 0.1.0 put back (`changedPages`). */
const as010 = (words: string, result: Result): Result => {
  const changes = changedPages[words] ?? []
  for (const [now] of changes) expect(result.stdout, `${words} says what it changed`).toContain(now)
  return { ...result, stdout: changes.reduce((text, [now, then]) => text.split(now).join(then), result.stdout) }
}

let pages: ReadonlyArray<ReadonlyArray<string>>
let port: number
let effect3: ReadonlyArray<Result>
let cases: ReadonlyArray<{ readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }>

beforeAll(async () => {
  pages = await UsageCases.pages()
  const words = UsageCases.words(pages)
  port = await freePort()
  // Nothing listens on the port: a command that got past its parser would answer 5, which the comparison shows.
  const { configDir } = await fresh()
  const env = UsageCases.environment(configDir, port)
  cases = words.map((args) => ({ args, env }))
  const recorded = UsageCases.recorded()
  // The recording answers exactly these words, in this order (else record it again: see the top of this file).
  expect(recorded.map((result) => result.args)).toEqual(words)
  // `--version` and `-V` printed the recording CLI's own version (0.1.0): this one prints its own (Version.ts).
  effect3 = recorded.map(({ args, code, stdout, stderr }) =>
    args.length === 1 && (args[0] === "--version" || args[0] === "-V") ? { code, stdout: `${VERSION}\n`, stderr } : { code, stdout, stderr }
  )
})
afterAll(() => cleanup())

describe("help and usage, as the Effect 3 CLI's", () => {
  it("prints every page of the ported commands as the Effect 3 CLI does", async () => {
    expect(pages.length).toBeGreaterThan(50)
    const { invoke } = await import("./Harness.js")
    for (const [index, { args, env }] of cases.slice(0, pages.length).entries()) {
      const result = as010(args.join(" "), await invoke(args, env))
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
