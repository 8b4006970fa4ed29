/**
 * Embedding orgplane in a plain Node `http` app: the host keeps its own routes and mounts the control plane
 * under `/orgplane`. `pnpm --filter @orgplane/examples embed` starts the host on a free port, calls a host route
 * and two orgplane routes through it, prints the answers and stops; add `--serve [port]` to keep it running and try
 * `curl localhost:3000/hello` and `curl localhost:3000/orgplane/health` yourself, or open localhost:3000/orgplane/docs.
 */
import { makeNodeListener } from "@orgplane/server"
import { createServer } from "node:http"

const MOUNT = "/orgplane"

export const startHost = async (options: { readonly port?: number; readonly dataDir?: string } = {}) => {
  // `basePath` names the mount in the OpenAPI document (its `servers`) and in `GET /`'s links; the reference page
  // (`/orgplane/docs`) finds its script and the document relative to itself.
  const orgplane = await makeNodeListener({ dataDir: options.dataDir ?? "memory", basePath: MOUNT })

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
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await orgplane.dispose()
    }
  }
}

/** What a visitor of the host sees: the host's own route, orgplane's through the mount point, and a 404 elsewhere. */
export const tour = async (url: string) => {
  const hello = await fetch(`${url}/hello`)
  const health = await fetch(`${url}${MOUNT}/health`)
  const signUp = await fetch(`${url}${MOUNT}/v1/auth/sign-up`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "host@example.com", password: "a long password", name: "Host" })
  })
  const elsewhere = await fetch(`${url}/elsewhere`)
  return {
    hello: await hello.json(),
    health: await health.json(),
    signUpStatus: signUp.status,
    elsewhereStatus: elsewhere.status
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const serve = process.argv.includes("--serve")
  const port = serve ? Number(process.argv[process.argv.indexOf("--serve") + 1] ?? 3000) || 3000 : 0
  const host = await startHost({ port })
  if (serve) {
    console.log(`host app on ${host.url}: try ${host.url}/hello, ${host.url}${MOUNT}/health and ${host.url}${MOUNT}/docs (Ctrl-C stops it)`)
    // Ctrl-C under pnpm brings SIGINT twice (the terminal's, then pnpm's own): the second one finds the stop under
    // way, rather than Node's default of dying by the signal, which pnpm reports as a failure.
    let stopping = false
    const stop = () => {
      if (stopping) return
      stopping = true
      void host.close().then(() => {
        console.log("host app stopped")
        process.exit(0)
      })
    }
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
  } else {
    try {
      console.log(JSON.stringify(await tour(host.url), null, 2))
    } finally {
      await host.close()
    }
  }
}
