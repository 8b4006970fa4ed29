/**
 * `orgplane serve` with the metrics' environment variables: a real process serving `/metrics` on its management
 * port behind the token (and not on its own port), and a bad value stopping the start with an error that names its
 * variable.
 */
import { afterAll, describe, expect, it } from "vitest"
import * as RealServer from "../../client/test/RealServer.js"
import { freePort } from "../../../packages/testkit/src/FreePort.js"
import { cleanup, fresh } from "./Harness.js"

afterAll(() => cleanup())

const token = `metrics-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`

describe("orgplane serve and /metrics", { timeout: 120_000 }, () => {
  it("serves the metrics on ORGPLANE_METRICS_PORT behind ORGPLANE_METRICS_TOKEN, not on the server's port", async () => {
    const port = await freePort()
    const server = await RealServer.start({ ORGPLANE_METRICS_TOKEN: token, ORGPLANE_METRICS_PORT: String(port) })
    try {
      expect((await fetch(`${server.url}/health`)).status).toBe(200)
      expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404)
      const management = `http://127.0.0.1:${port}/metrics`
      expect((await fetch(management)).status).toBe(401)
      const scraped = await fetch(management, { headers: { authorization: `Bearer ${token}` } })
      expect(scraped.status).toBe(200)
      const text = await scraped.text()
      expect(text).toContain(`orgplane_http_server_request_duration_seconds_count{operation="system.health",method="GET",status_class="2xx"} 1\n`)
      expect(text).not.toContain(token)
    } finally {
      await server.close()
    }
  })

  it("refuses to start on a bad value, naming its variable", async () => {
    const { cli } = await fresh()
    for (const [env, variable] of [
      [{ ORGPLANE_METRICS_PORT: "metrics" }, "ORGPLANE_METRICS_PORT"],
      [{ ORGPLANE_METRICS_TOKEN: "short" }, "ORGPLANE_METRICS_TOKEN"],
      [{ ORGPLANE_METRICS_PORT: "9300", ORGPLANE_METRICS_HOST: "0.0.0.0" }, "ORGPLANE_METRICS_HOST"],
      [{ ORGPLANE_METRICS_PORT: "0" }, "ORGPLANE_METRICS_PORT"]
    ] as const) {
      const result = await cli(["serve", "--port", "0", "--data", "memory"], env)
      expect(result.code, JSON.stringify(env)).toBe(1)
      expect(result.stderr, JSON.stringify(env)).toContain(variable)
    }
  })
})
