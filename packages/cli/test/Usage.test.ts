/**
 * The CLI's help pages, usage errors and exit codes, which scripts match: every page of the commands, and the usage
 * errors the parser and the dispatcher answer before anything is sent (the words are test/UsageCases.ts's), held to
 * the saved answers, `test/fixtures/usage/help.json` and `refusals.json` (the version printed as `{VERSION}`, the
 * port of the URL nothing listens on as `{PORT}`). When the CLI's words change on purpose (a new command, a reworded
 * error), write them again with `pnpm test packages/cli/test/Usage.test.ts --update=all` and review the diff.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, freePort, fresh, invoke, PASSWORD, type Result } from "./Harness.js"
import * as UsageCases from "./UsageCases.js"
import { VERSION } from "../src/Version.js"

const rerecord = "if the CLI's words changed on purpose, run `pnpm test packages/cli/test/Usage.test.ts --update=all` and review the diff"

let pages: ReadonlyArray<ReadonlyArray<string>>
let port: number
let cases: ReadonlyArray<{ readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }>

beforeAll(async () => {
  pages = await UsageCases.pages()
  port = await freePort()
  // Nothing listens on the port: a command that got past its parser would answer 5, which the saved answers show.
  const { configDir } = await fresh()
  const env = UsageCases.environment(configDir, port)
  cases = UsageCases.words(pages).map((args) => ({ args, env }))
})
afterAll(() => cleanup())

/** What the CLI answers each case, the run's own version and port written as placeholders, as the saved file has it. */
const answers = async (selected: typeof cases) => {
  const out: Array<Result & { readonly args: ReadonlyArray<string> }> = []
  for (const { args, env } of selected) {
    const { code, stderr, stdout } = await invoke(args, env)
    const placeholders = (text: string) => text.replaceAll(VERSION, "{VERSION}").replaceAll(`:${port}`, ":{PORT}")
    out.push({ args, code, stdout: placeholders(stdout), stderr: placeholders(stderr) })
  }
  return out
}

const saved = (results: ReadonlyArray<unknown>) => `${JSON.stringify(results, null, 2)}\n`

describe("help and usage", () => {
  it("prints every page of the commands, exiting 0, as saved", async () => {
    expect(pages.length).toBeGreaterThan(50)
    const results = await answers(cases.slice(0, pages.length))
    for (const { args, code } of results) expect(code, args.join(" ")).toBe(0)
    await expect(saved(results)).toMatchFileSnapshot("./fixtures/usage/help.json", rerecord)
  })

  it("refuses bad words with the saved messages and exit codes", async () => {
    const results = await answers(cases.slice(pages.length))
    expect(results.length).toBeGreaterThan(100)
    await expect(saved(results)).toMatchFileSnapshot("./fixtures/usage/refusals.json", rerecord)
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

  it("shows an overview of the commands by area, the first ones people run first, each with an example", async () => {
    const { cli } = await fresh()
    const overview = await cli(["--help"])
    expect(overview.code).toBe(0)
    const headings = overview.stdout.split("\n").filter((line) => /^[A-Z][A-Z ]+$/.test(line))
    expect(headings).toEqual([
      "USAGE",
      "START HERE",
      "YOUR ACCOUNT",
      "ORGANIZATION",
      "CATALOG",
      "IDENTITY AND POLICY",
      "AGENTS AND INTEGRATIONS",
      "RUNNING THE SERVER",
      "GLOBAL FLAGS",
      "EXAMPLES",
      "LEARN MORE"
    ])
    const start = overview.stdout.split("START HERE\n")[1]!.split("\n\n")[0]!
    expect(start.split("\n").map((line) => line.trim().split(/ {2,}/)[0])).toEqual(["serve", "auth signup", "auth login", "orgs create", "api-keys create", "whoami"])
    for (const command of ["auth", "orgs", "api-keys", "bootstrap", "connectors", "serve"]) expect(overview.stdout).toMatch(new RegExp(`^  ${command} `, "m"))
    expect(overview.stdout).toContain("  $ orgplane auth signup --email ada@example.com --name 'Ada Lovelace'")
    expect(overview.stdout.split("\n").length).toBeLessThan(90)
  })

  it("'orgplane help [command...]' prints what '--help' does, and refuses what it does", async () => {
    const { cli } = await fresh()
    for (const words of [[], ["teams"], ["teams", "create"], ["connectors", "accounts"], ["connectors", "accounts", "connect"]]) {
      const [viaHelp, viaFlag] = await Promise.all([cli(["help", ...words]), cli([...words, "--help"])])
      expect(viaHelp.code, words.join(" ")).toBe(0)
      expect(viaHelp.stdout, words.join(" ")).toBe(viaFlag.stdout)
    }
    const unknown = await cli(["help", "tems"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe("error: unknown command 'tems' for 'orgplane' — did you mean 'teams'? Run 'orgplane --help' for its commands.\n")
  })
})
