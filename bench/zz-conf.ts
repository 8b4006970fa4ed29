import { spawn } from "node:child_process"
import { createServer, request as httpRequest } from "node:http"
import * as Http from "../packages/testkit/src/Http.js"
const port = 24567
const proxyPort = 24568
const child = spawn("node", ["/work/main/packages/cli/dist/bin.js", "serve", "--port", String(port), "--data", "memory"], {
  env: { ...process.env, ORGPLANE_MCP: "true", ORGPLANE_CLUSTER_PORT: "0", ORGPLANE_LOG_LEVEL: "warn", ORGPLANE_PUBLIC_URL: `http://127.0.0.1:${proxyPort}` }, stdio: "inherit" })
const base = `http://127.0.0.1:${port}`
for (;;) { try { const r = await fetch(`${base}/health`); if (r.status === 200) break } catch {} ; await new Promise(r => setTimeout(r, 50)) }
const owner = await Http.owner(base)
const proxy = createServer((req, res) => {
  const up = httpRequest({ host: "127.0.0.1", port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${owner.token}` } }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers); r.pipe(res)
  })
  up.on("error", () => { res.writeHead(502); res.end() })
  req.pipe(up)
})
await new Promise<void>((r) => proxy.listen(proxyPort, "127.0.0.1", r))
const t0 = Date.now()
const suite = spawn("/tmp/conf/node_modules/.bin/conformance", ["server", "--url", `http://127.0.0.1:${proxyPort}/mcp`, ...process.argv.slice(2)], { stdio: "inherit", cwd: "/tmp/conf/run" })
await new Promise((r) => suite.once("exit", r))
console.log("suite seconds", (Date.now() - t0) / 1000)
proxy.close(); child.kill("SIGTERM")
