/**
 * Benchmarks: request latency and throughput of a few hot endpoints against a real server on loopback, on the
 * embedded database (or DATABASE_URL). Prints figures; asserts nothing. `pnpm bench [requests]`.
 */
import { Http, TestServer } from "@orgplane/testkit"

const REQUESTS = Number(process.argv[2] ?? 2000)
const CONCURRENCY = 8

const measure = async (label: string, call: () => Promise<Response>) => {
  const latencies: Array<number> = []
  const started = performance.now()
  let next = 0
  const worker = async () => {
    while (next < REQUESTS) {
      next++
      const t = performance.now()
      const response = await call()
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`${label}: HTTP ${response.status}`)
      latencies.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2)
  console.log(
    `${label.padEnd(28)} ${String(Math.round(latencies.length / seconds)).padStart(6)} req/s   p50 ${at(0.5)} ms   p99 ${at(0.99)} ms`
  )
}

const server = await TestServer.start()
try {
  const owner = await Http.owner(server.url, "Bench")
  const key = (await Http.request(server.url, "POST", "/v1/api-keys", { token: owner.token, body: { name: "bench" } })).body.key
  // An organization of 200 members in 20 teams, for the list endpoints.
  const memberIds: Array<string> = []
  for (let i = 0; i < 199; i++) memberIds.push((await Http.join(server.url, owner.token, "member", `Person ${i}`)).membership.id)
  for (let t = 0; t < 20; t++) {
    const body = { name: `Team ${t}`, memberIds: memberIds.filter((_, i) => i % 20 === t) }
    await Http.request(server.url, "POST", "/v1/teams", { token: owner.token, body })
  }
  const memoryBefore = process.memoryUsage().rss
  console.log(`${REQUESTS} requests per endpoint, ${CONCURRENCY} concurrent, server in-process`)
  await measure("GET /health", () => fetch(`${server.url}/health`))
  await measure("GET /v1/me (session)", () => fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${owner.token}` } }))
  await measure("GET /v1/me (API key)", () => fetch(`${server.url}/v1/me`, { headers: { "x-api-key": key } }))
  await measure("GET /v1/api-keys", () => fetch(`${server.url}/v1/api-keys?limit=20`, { headers: { "x-api-key": key } }))
  await measure("GET /v1/members (50 of 200)", () => fetch(`${server.url}/v1/members`, { headers: { "x-api-key": key } }))
  await measure("GET /v1/members?q=", () => fetch(`${server.url}/v1/members?q=person%2019`, { headers: { "x-api-key": key } }))
  await measure("GET /v1/teams (20 teams)", () => fetch(`${server.url}/v1/teams`, { headers: { "x-api-key": key } }))
  let round = 0
  await measure("PATCH /v1/members/{id} role", () =>
    fetch(`${server.url}/v1/members/${memberIds[round % memberIds.length]}`, {
      method: "PATCH",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ role: round++ % 2 === 0 ? "admin" : "member" })
    }))
  console.log(`rss ${Math.round(memoryBefore / 1e6)} MB before, ${Math.round(process.memoryUsage().rss / 1e6)} MB after`)
} finally {
  await server.close()
}
