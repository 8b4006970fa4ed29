/**
 * The embedded modes trace as the standalone server does (http/Traces.test.ts): a host process that mounts
 * `makeWebHandler` or `makeNodeListener` (test/traces/host.ts) with `OTEL_*` variables in its environment exports its
 * request spans, named by operation, to the collector. A process of its own: Effect's default configuration provider
 * reads the environment once per process, and the tests share their workers. One host process mounts both, one
 * after the other (starting a process that loads the server's source costs seconds of CPU); each mode's span is
 * told apart by its route, which only that mode's request takes.
 */
import * as OtlpReceiver from "../../../../packages/testkit/src/OtlpReceiver.js"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v8Flags } from "../../../../packages/testkit/src/ShortLived.js"

const serverRoot = fileURLToPath(new URL("../../", import.meta.url))

let receiver: OtlpReceiver.OtlpReceiver
/** The host's standard output: each mode and the status of its request, a line each. */
let statuses: Promise<ReadonlyArray<string>>
beforeAll(async () => {
  receiver = await OtlpReceiver.start()
  statuses = host(["web", "node"]).then((output) => output.split("\n"))
  // Awaited by the tests (a failed host fails each with its output), not left unhandled meanwhile.
  statuses.catch(() => undefined)
})
afterAll(() => receiver?.close())

/** Runs the host in `modes`, in turn; its standard output once it exits (0 expected). */
const host = (modes: ReadonlyArray<"web" | "node">) =>
  new Promise<string>((resolve, reject) => {
    const { DATABASE_URL: _, ...inherited } = process.env
    const child = spawn(process.execPath, [...v8Flags, "--conditions=@orgplane/source", "--import", "tsx", "test/traces/host.ts", ...modes], {
      cwd: serverRoot,
      env: { ...inherited, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50", ORGPLANE_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.once("error", reject)
    child.once("exit", (code) => (code === 0 ? resolve(output.trim()) : reject(new Error(`the host exited with ${code}: ${output}`))))
  })

const serverSpan = (route: string) =>
  receiver.waitFor(`the span of ${route}`, (spans) => spans.some((span) => span.kind === "server" && span.attributes["http.route"] === route))
    .then((spans) => spans.find((span) => span.kind === "server" && span.attributes["http.route"] === route)!)

describe("traces of the embedded server", () => {
  it("makeWebHandler exports its request spans", async () => {
    expect(await statuses).toContain("web 200")
    const span = await serverSpan("/health/live")
    expect([span.name, span.resource["service.name"]]).toEqual(["system.healthLive", "orgplane"])
  }, 60_000)

  it("makeNodeListener exports its request spans", async () => {
    expect(await statuses).toContain("node 200")
    expect((await serverSpan("/health/started")).name).toBe("system.healthStarted")
  }, 60_000)
})
