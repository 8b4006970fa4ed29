/**
 * `orgplane --completions bash|zsh|fish`: `effect/cli`'s `Completions.generate` over the command tree (see Cli.ts),
 * naming the commands; any other shell is a usage error.
 */
import { afterAll, describe, expect, it } from "vitest"
import { cleanup, fresh } from "./Harness.js"

afterAll(() => cleanup())

describe("orgplane --completions", () => {
  it("writes a script for bash, zsh and fish naming the commands, and refuses another shell", async () => {
    const { cli } = await fresh()
    for (const shell of ["bash", "zsh", "fish"]) {
      const result = await cli(["--completions", shell])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout, shell).toContain("orgplane")
      for (const word of ["orgs", "whoami", "signup", "transfer-ownership"]) expect(result.stdout, `${shell} ${word}`).toContain(word)
    }
    const other = await cli(["--completions", "tcsh"])
    expect(other.code).toBe(2)
    expect(other.stderr).toBe("error: --completions: must be one of bash, zsh, fish\n")
  })
})
