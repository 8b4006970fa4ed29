import * as Fs from "node:fs"
import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { freePort } from "../src/FreePort.js"

/** Where the kernel takes outgoing connections' local ports from (Linux; IANA's range elsewhere). */
const ephemeralLow = Fs.existsSync("/proc/sys/net/ipv4/ip_local_port_range")
  ? Number(Fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0])
  : 49152

describe("freePort", () => {
  it("draws ports below the kernel's ephemeral range, which a listener then takes", async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()))
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024)
      expect(port).toBeLessThan(ephemeralLow)
    }
    const server = createServer()
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(ports[0], "127.0.0.1", resolve)
    })
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
