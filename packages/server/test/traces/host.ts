/**
 * An embedding host in a process of its own, for http/EmbeddedTraces.test.ts: for each argument in turn, it mounts
 * orgplane with `makeWebHandler` (`web`) or `makeNodeListener` (`node`) on a throwaway embedded database, sends one
 * request (`/health/live` or `/health/started`), prints the mode and its status, and stops it, so the exporter
 * flushes. What it exports comes from the `OTEL_*` variables of its environment, read once, at the start, as in any
 * host.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { makeNodeListener, makeWebHandler } from "../../src/Server.js"

const options = { passwordCost: 10, dataDir: "memory" }

for (const mode of process.argv.slice(2)) {
  if (mode === "web") {
    const web = makeWebHandler(options)
    const response = await web.handler(new Request("http://localhost/health/live"))
    process.stdout.write(`web ${response.status}\n`)
    await web.dispose()
  } else {
    const { dispose, listener } = await makeNodeListener(options)
    const host = createServer(listener)
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
    const { port } = host.address() as AddressInfo
    const response = await fetch(`http://127.0.0.1:${port}/health/started`)
    process.stdout.write(`node ${response.status}\n`)
    await new Promise((resolve) => host.close(resolve))
    await dispose()
  }
}
