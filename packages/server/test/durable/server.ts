/**
 * A whole orgplane server in a process of its own, for http/ConnectorSyncDurable.test.ts: on the Postgres database
 * at `SYNC_SERVER_DATABASE` (a cluster runner on a free port, with the short test tuning), reaching GitHub at
 * `SYNC_SERVER_CODEHOST`, encrypting with `SYNC_SERVER_KEYS` (shared with the test's own servers). Sends
 * `{ ready: url }` over IPC once listening; the test kills it with SIGKILL to simulate a crash.
 */
import * as Redacted from "effect/Redacted"
import * as Database from "../../src/platform/Database.js"
import * as TestServer from "../support/HttpServer.js"
import { testTuning } from "./runner.js"

const main = async () => {
  const server = await TestServer.start({
    database: Database.layerUrl(Redacted.make(process.env["SYNC_SERVER_DATABASE"] ?? ""), { maxConnections: 4 }),
    codehostApiUrl: process.env["SYNC_SERVER_CODEHOST"] ?? "",
    encryptionKeys: process.env["SYNC_SERVER_KEYS"] ?? "",
    durable: { sharding: testTuning, cluster: { port: 0 } }
  })
  process.send?.({ ready: server.url })
  const stop = () => void server.close().finally(() => process.exit(0))
  process.on("SIGTERM", stop)
  process.on("disconnect", stop)
}

if (process.env["SYNC_SERVER_DATABASE"] !== undefined) {
  main().catch((error) => {
    process.stderr.write(`server failed to start: ${String(error)}\n`)
    process.exit(1)
  })
}
