/**
 * The embedded modes trace as the standalone server does (http/Traces.test.ts): `makeWebHandler` and
 * `makeNodeListener` read the same `OTEL_*` variables from the process's environment and export their request spans,
 * named by operation, to the collector. The environment is set before anything in this test file's process reads it.
 */
import * as OtlpReceiver from "../../../../packages/testkit/src/OtlpReceiver.js"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { makeNodeListener, makeWebHandler } from "../../src/Server.js"
import * as TestServer from "../support/HttpServer.js"
import * as TestDatabase from "../support/TestDatabase.js"

// Effect's default configuration provider reads the environment once, when first asked: before any server starts.
const receiver = await OtlpReceiver.start()
process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
process.env["OTEL_BSP_SCHEDULE_DELAY"] = "50"

const options = () => ({ ...TestServer.testSettings, database: Layer.unwrap(TestDatabase.layer({ migrated: true })) })

afterAll(() => receiver.close())

const serverSpan = (route: string) =>
  receiver.waitFor(`the span of ${route}`, (spans) => spans.some((span) => span.kind === "server" && span.attributes["http.route"] === route))
    .then((spans) => spans.find((span) => span.kind === "server" && span.attributes["http.route"] === route)!)

describe("traces of the embedded server", () => {
  it("makeWebHandler exports its request spans", async () => {
    const web = makeWebHandler(options())
    try {
      expect((await web.handler(new Request("http://localhost/health/live"))).status).toBe(200)
      const span = await serverSpan("/health/live")
      expect([span.name, span.resource["service.name"]]).toEqual(["system.healthLive", "orgplane"])
    } finally {
      await web.dispose()
    }
  })

  it("makeNodeListener exports its request spans", async () => {
    const { dispose, listener } = await makeNodeListener(options())
    const host = createServer(listener)
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = host.address() as AddressInfo
      expect((await fetch(`http://127.0.0.1:${port}/health/started`)).status).toBe(200)
      expect((await serverSpan("/health/started")).name).toBe("system.healthStarted")
    } finally {
      await new Promise((resolve) => host.close(resolve))
      await dispose()
    }
  })
})
