/**
 * A throwaway orgplane server for the examples that talk to one over HTTP: in-memory database, a free loopback
 * port, warnings only in the log. In your own code, point the client at your server instead.
 */
import { makeNodeListener, type ServerOptions } from "@orgplane/server"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export const startLocalServer = async (
  options: ServerOptions = {}
): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const orgplane = await makeNodeListener({ dataDir: "memory", logLevel: "warn", ...options })
  const server = createServer(orgplane.listener)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await orgplane.dispose()
    }
  }
}
