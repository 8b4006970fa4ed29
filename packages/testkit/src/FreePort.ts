/**
 * A loopback port that was free a moment ago, for a listener a test names before it starts (a server process's
 * `--port`, a management port, an address nothing answers on).
 *
 * It is drawn below the kernel's range of ephemeral ports, the local ports of outgoing connections: a port from that
 * range (what `listen(0)` gives) can be taken by any connection any process opens between the probe and the listen,
 * and a suite running beside itself opens thousands (a fresh-clone CI run lost `--serve 41687` to one). Below it,
 * only a listener could take the port, and listeners are drawn at random from some twelve thousand ports.
 */
import * as Fs from "node:fs"
import { createServer } from "node:net"

/** The kernel's ephemeral ports: Linux says where; elsewhere IANA's range (macOS, Windows). */
const ephemeralRange = (): readonly [low: number, high: number] => {
  try {
    const [low, high] = Fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number)
    if (low !== undefined && high !== undefined && Number.isInteger(low) && Number.isInteger(high) && low > 1024) return [low, high]
  } catch {
    // not Linux
  }
  return [49152, 65535]
}

/** The ports drawn from: the twelve thousand below the ephemeral range, above the well-known and common ones. */
const portRange = (): readonly [low: number, high: number] => {
  const [ephemeralLow] = ephemeralRange()
  const high = ephemeralLow - 1
  return [Math.max(10_000, high - 12_000), high]
}

/** Whether a listener could take `port` on 127.0.0.1 just now (the probe is closed before this answers). */
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once("error", () => resolve(false))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)))
  })

export const freePort = async (): Promise<number> => {
  const [low, high] = portRange()
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1))
    if (await bindable(port)) return port
  }
  throw new Error(`freePort: no free port among 100 drawn from ${low} to ${high}`)
}
