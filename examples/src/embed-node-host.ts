/**
 * Embedding orgplane in a plain Node `http` app: the host keeps its own routes and mounts the control plane
 * under `/orgplane`. Run: `pnpm --filter @orgplane/examples embed` (or `tsx src/embed-node-host.ts`), then
 * `curl localhost:3000/hello` and `curl localhost:3000/orgplane/health`.
 */
import { makeNodeListener } from "@orgplane/server"
import { createServer } from "node:http"

const MOUNT = "/orgplane"

export const startHost = async (options: { readonly port?: number; readonly dataDir?: string } = {}) => {
  const orgplane = await makeNodeListener({ dataDir: options.dataDir ?? "memory" })

  const server = createServer((request, response) => {
    const url = request.url ?? "/"
    if (url === MOUNT || url.startsWith(`${MOUNT}/`)) {
      // orgplane's routes are absolute (/v1/..., /health): strip the mount point before handing over.
      request.url = url.slice(MOUNT.length) || "/"
      return orgplane.listener(request, response)
    }
    if (url === "/hello") {
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(JSON.stringify({ hello: "from the host app" }))
    }
    response.writeHead(404).end()
  })

  await new Promise<void>((resolve) => server.listen(options.port ?? 3000, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : options.port ?? 3000
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await orgplane.dispose()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const host = await startHost({ port: Number(process.argv[2] ?? 3000) })
  console.log(`host app on ${host.url}: try ${host.url}/hello and ${host.url}${MOUNT}/health`)
  const stop = () => void host.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
