/**
 * The server README's standalone Effect program in a process of its own (test/standalone/main.ts), as `orgplane
 * serve` behaves: it listens on 127.0.0.1, and SIGTERM stops it with exit code 0 (Effect's default teardown exits 130
 * on an interruption; `teardown` is the server's).
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"
import * as Http from "../../../packages/testkit/src/Http.js"
import { v8Flags } from "../../../packages/testkit/src/ShortLived.js"

/**
 * This process's environment without orgplane's settings (`ORGPLANE_*`, and `DATABASE_URL`, which the suite's
 * Postgres run sets: the program would migrate that database and ask for keys), so that the program runs on the
 * README's defaults and its own `--data memory`.
 */
const withoutOrgplaneSettings = () =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ORGPLANE_") && name !== "DATABASE_URL"))

it("listens on 127.0.0.1 and exits 0 on SIGTERM once stopped", { timeout: 120_000 }, async () => {
  const child = spawn(process.execPath, [...v8Flags, "--conditions=@orgplane/source", "--import", "tsx", "test/standalone/main.ts"], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: withoutOrgplaneSettings(),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const seen = () => {
        const listening = /Listening on (http:\/\/\S+) /.exec(output)
        if (listening !== null) resolve(listening[1]!)
      }
      child.stdout.on("data", seen)
      void exited.then(() => reject(new Error(`the program exited before listening:\n${output}`)))
    })
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect((await Http.request(url, "GET", "/health/live")).status).toBe(200)
    child.kill("SIGTERM")
    expect(await exited, output).toBe(0)
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
})
