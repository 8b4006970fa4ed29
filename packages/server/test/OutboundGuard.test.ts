/**
 * The outbound guard's user-supplied destinations against real servers on loopback and a fake DNS server: refused
 * addresses never get a request, connections are pinned to the address checked (a rebinding DNS answer cannot
 * redirect them), redirects follow the reference's rules hop by hop, and the fetch adapter does the same. Then the
 * guard itself (operator destinations, the cap, the timeout, an aborted fetch), and a table of calls, each answered
 * or refused (why, in the words a caller sees). The loopback servers' ports differ from run to run: the table writes
 * their origins and ports `<target>`, `<other>`, `:<target-port>` and `:<other-port>`, read as the run's own.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { HttpClientRequest } from "effect/http"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as Tls from "node:tls"
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as DnsConfig from "../src/integrations/dns/DnsConfig.js"
import * as Resolver from "../src/integrations/dns/Resolver.js"
import * as Outbound from "../src/platform/Outbound.js"
import { VERSION } from "../src/Version.js"

const swapping = (value: unknown, from: string, to: string): unknown => {
  if (typeof value === "string") return value.replaceAll(from, to)
  if (Array.isArray(value)) return value.map((item) => swapping(item, from, to))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key.replaceAll(from, to), swapping(member, from, to)]))
  }
  return value
}
/** `value` with each pair's first text in its strings (and its members' names) written as the second: the same shape. */
const swap = <A>(value: A, pairs: ReadonlyArray<readonly [string, string]>): A =>
  pairs.reduce<unknown>((swapped, [from, to]) => swapping(swapped, from, to), value) as A

interface Hit {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

interface Fake {
  readonly url: string
  readonly port: number
  readonly hits: Array<Hit>
  readonly close: () => Promise<void>
}

/** An HTTP server on `host` that records every request and answers with `handler` (default: 200 "ok"). */
const serve = async (host: string, handler?: (hit: Hit, response: Http.ServerResponse) => void): Promise<Fake> => {
  const hits: Array<Hit> = []
  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const hit = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString() }
      hits.push(hit)
      if (handler) handler(hit, response)
      else response.end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://${host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

let dns: FakeDns.FakeDns
const fakes: Array<Fake> = []
const fake = async (host: string, handler?: (hit: Hit, response: Http.ServerResponse) => void) => {
  const started = await serve(host, handler)
  fakes.push(started)
  return started
}
beforeAll(async () => {
  dns = await FakeDns.start()
})
afterAll(async () => {
  await Promise.all(fakes.map((one) => one.close()))
  await dns.stop()
})

/** The guard as the server builds it with `ORGPLANE_DNS_SERVERS` pointing at the fake DNS server. */
const guard = (allowPrivate: boolean) =>
  Outbound.layer({ allowPrivate, timeout: "5 seconds" }).pipe(
    Layer.provide(Resolver.addressResolverLayer),
    Layer.provide(Resolver.layer),
    Layer.provide(DnsConfig.layer({ dnsServers: dns.address }))
  )

const withGuard = <A>(allowPrivate: boolean, use: (outbound: Outbound.OutboundService) => Effect.Effect<A, Outbound.OutboundError>) =>
  Effect.runPromise(Effect.result(Effect.flatMap(Outbound.Outbound, use)).pipe(Effect.provide(guard(allowPrivate))))

const user = (request: HttpClientRequest.HttpClientRequest, options: Outbound.RequestOptions = {}) => (outbound: Outbound.OutboundService) =>
  outbound.execute(request, { destination: "user", ...options })

const text = (body: Uint8Array) => new TextDecoder().decode(body)

const refused = async (allowPrivate: boolean, request: HttpClientRequest.HttpClientRequest, options: Outbound.RequestOptions = {}) => {
  const result = await withGuard(allowPrivate, user(request, options))
  if (Result.isSuccess(result)) throw new Error(`${request.url} was not refused`)
  return result.failure
}

const answered = async (allowPrivate: boolean, request: HttpClientRequest.HttpClientRequest, options: Outbound.RequestOptions = {}) => {
  const result = await withGuard(allowPrivate, user(request, options))
  if (Result.isFailure(result)) throw new Error(`${request.url} failed: ${result.failure.message}`)
  return result.success
}

describe("a user-supplied destination, private mode off", () => {
  it("is refused before any request when it is a loopback or private literal, plain http, or carries credentials", async () => {
    const target = await fake("127.0.0.1")
    const cases = [
      [`https://127.0.0.1:${target.port}/x?token=secret`, "127.0.0.1 is a loopback address"],
      [`https://[::1]:${target.port}/`, "::1 is a loopback address"],
      [`https://[::ffff:7f00:1]:${target.port}/`, "::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address"],
      [`https://0x7f.1:${target.port}/`, "127.0.0.1 is a loopback address"],
      [`https://2130706433:${target.port}/`, "127.0.0.1 is a loopback address"],
      ["https://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local (cloud metadata) address"],
      ["https://[fd00:ec2::254]/", "fd00:ec2::254 is a unique local (private) address"],
      [`${target.url}/x`, "https is required"],
      ["https://user:pass@8.8.8.8/", "it carries credentials"]
    ] as const
    for (const [url, reason] of cases) {
      const error = await refused(false, HttpClientRequest.get(url))
      expect(error.reason, url).toBe("blocked")
      expect(error.message, url).toBe(`The outbound URL is not allowed: ${reason}`)
      expect(JSON.stringify(error), url).not.toContain("secret")
      expect(JSON.stringify(error), url).not.toContain("meta-data")
    }
    expect(target.hits).toHaveLength(0)
  })

  it("is refused when any address of its name is not public, and a name without address is a network failure", async () => {
    const target = await fake("127.0.0.1")
    dns.setAddresses("loopback.example", ["127.0.0.1"])
    dns.setAddresses("mixed.example", ["203.0.114.7", "10.0.0.9"])
    dns.setAddresses("v6.example", ["2606:4700:4700::1111", "fe80::1"])
    const cases = [
      ["loopback.example", "loopback.example resolves to 127.0.0.1, a loopback address"],
      ["mixed.example", "mixed.example resolves to 10.0.0.9, a private address"],
      ["v6.example", "v6.example resolves to fe80::1, a link-local address"]
    ] as const
    for (const [name, message] of cases) {
      const error = await refused(false, HttpClientRequest.get(`https://${name}:${target.port}/path?q=1`))
      expect(error).toMatchObject({ reason: "blocked", origin: `https://${name}:${target.port}`, message: `The outbound URL is not allowed: ${message}` })
    }
    const nowhere = await refused(false, HttpClientRequest.get("https://nowhere.example/"))
    expect(nowhere).toMatchObject({ reason: "network", message: "nowhere.example has no address" })
    expect(target.hits).toHaveLength(0)
  })

  it("is never reached through DNS rebinding: the name is resolved once and the connection pinned to that public answer", async () => {
    const loopback = await fake("127.0.0.1")
    // The first answer is public (and unreachable from here), every later one is the loopback server's address.
    dns.rebind("rebind.example", "203.0.114.7", "127.0.0.1")
    const asked = () => dns.queries.filter((name) => name === "rebind.example").length
    const error = await refused(false, HttpClientRequest.get(`https://rebind.example:${loopback.port}/`), { timeout: "1 second" })
    expect(["network", "timeout"]).toContain(error.reason)
    expect(loopback.hits).toHaveLength(0)
    // One A and one AAAA question: nothing asked again at connect time.
    expect(asked()).toBe(2)
    // Asked again, the name is refused for its (now) loopback address.
    const again = await refused(false, HttpClientRequest.get(`https://rebind.example:${loopback.port}/`))
    expect(again.message).toBe("The outbound URL is not allowed: rebind.example resolves to 127.0.0.1, a loopback address")
    expect(loopback.hits).toHaveLength(0)
  })
})

describe("a user-supplied destination, private mode on", () => {
  it("reaches loopback over http, still refuses credentials in the URL", async () => {
    const target = await fake("127.0.0.1")
    const response = await answered(true, HttpClientRequest.get(`${target.url}/fine`))
    expect(response.status).toBe(200)
    expect(text(response.body)).toBe("ok")
    const error = await refused(true, HttpClientRequest.get(`http://a:b@127.0.0.1:${target.port}/`))
    expect(error.message).toBe("The outbound URL is not allowed: it carries credentials")
    expect(target.hits).toHaveLength(1)
  })

  it("connects to the address it resolved, not to what the name answers next (pinning)", async () => {
    const first = await fake("127.0.0.1")
    // A recorder on 127.0.0.2 (Linux routes all of 127/8 to loopback) at the same port: where an unpinned
    // connection would go if it asked the name again.
    const rebound = await new Promise<Fake | undefined>((resolve) => {
      const hits: Array<Hit> = []
      const server = Http.createServer((request, response) => {
        hits.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: "" })
        response.end("rebound")
      })
      server.once("error", () => resolve(undefined))
      server.listen(first.port, "127.0.0.2", () =>
        resolve({
          url: `http://127.0.0.2:${first.port}`,
          port: first.port,
          hits,
          close: () => new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
        }))
    })
    if (rebound === undefined) throw new Error(`port ${first.port} is taken on 127.0.0.2`)
    fakes.push(rebound)
    dns.rebind("pinned.example", "127.0.0.1", "127.0.0.2")
    const response = await answered(true, HttpClientRequest.get(`http://pinned.example:${first.port}/pinned`))
    expect(text(response.body)).toBe("ok")
    expect(first.hits.map((hit) => [hit.path, hit.headers.host])).toEqual([["/pinned", `pinned.example:${first.port}`]])
    expect(rebound.hits).toHaveLength(0)
    // A second request resolves again (no cache): now the second address, and only it, is reached.
    const next = await answered(true, HttpClientRequest.get(`http://pinned.example:${first.port}/next`))
    expect(text(next.body)).toBe("rebound")
    expect(first.hits).toHaveLength(1)
  })
})

/** A self-signed certificate for `secure.example` (test only, never trusted: enough to see what the client sends). */
const TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBozCCAUqgAwIBAgIUBoVYh6HMBod1bg3TgsZtE171m64wCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOc2VjdXJlLmV4YW1wbGUwIBcNMjYxMTIyMjIzODI5WhgPMjEy
NjEwMjkyMjM4MjlaMBkxFzAVBgNVBAMMDnNlY3VyZS5leGFtcGxlMFkwEwYHKoZI
zj0CAQYIKoZIzj0DAQcDQgAEnEVawxj5FM0F/DpldEeXVAOnRj6sxuy88Qj8tpYy
k6Yb6FiohpdBArUMpQu4sJC0xCsBmJ0OeFr2uAIdW3j8FKNuMGwwHQYDVR0OBBYE
FE/+QdXKZBB0Iwp98rN26jvO9b2ZMB8GA1UdIwQYMBaAFE/+QdXKZBB0Iwp98rN2
6jvO9b2ZMA8GA1UdEwEB/wQFMAMBAf8wGQYDVR0RBBIwEIIOc2VjdXJlLmV4YW1w
bGUwCgYIKoZIzj0EAwIDRwAwRAIgPg/1iNPYx7KecbHZwbqEZCu6oZEU4ckuci4X
iMECYSkCIDhxZRcOew3r/SLa62AQpwICPf0Qd9x8CCi3gcvb3u58
-----END CERTIFICATE-----`
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg4bpZA/u8BRK3H89n
XILzTY2ctS2yY9TV5EFT8G6oCZuhRANCAAScRVrDGPkUzQX8OmV0R5dUA6dGPqzG
7LzxCPy2ljKTphvoWKiGl0ECtQylC7iwkLTEKwGYnQ54Wva4Ah1bePwU
-----END PRIVATE KEY-----`

describe("https to a user-supplied name", () => {
  it("connects to the pinned address while TLS still names the host (SNI)", async () => {
    const names: Array<string> = []
    const context = Tls.createSecureContext({ cert: TLS_CERT, key: TLS_KEY })
    const server = Https.createServer({
      cert: TLS_CERT,
      key: TLS_KEY,
      SNICallback: (servername, callback) => {
        names.push(servername)
        callback(null, context)
      }
    }, (_request, response) => response.end("secure"))
    server.on("tlsClientError", () => {})
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as { port: number }).port
    try {
      dns.setAddresses("secure.example", ["127.0.0.1"])
      // The certificate is not trusted, so the exchange fails after the handshake began: the server saw the name.
      const error = await refused(true, HttpClientRequest.get(`https://secure.example:${port}/`))
      expect(error).toMatchObject({ reason: "network", origin: `https://secure.example:${port}` })
      expect(names).toEqual(["secure.example"])
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe("redirects of a user-supplied destination", () => {
  /** A server whose `/hop/<n>` redirects to `/hop/<n-1>` and `/hop/0` answers; `/loop/a` ↔ `/loop/b`. */
  const chain = () =>
    fake("127.0.0.1", (hit, response) => {
      const [, kind, step] = hit.path.split("/")
      if (kind === "hop" && Number(step) > 0) return response.writeHead(302, { location: `/hop/${Number(step) - 1}` }).end()
      if (kind === "loop") return response.writeHead(302, { location: step === "a" ? "/loop/b" : "/loop/a" }).end()
      response.end(`at ${hit.path}`)
    })

  it("are followed at most 5 times, and a URL seen twice is a loop", async () => {
    const server = await chain()
    const five = await answered(true, HttpClientRequest.get(`${server.url}/hop/5`))
    expect(five).toMatchObject({ status: 200, url: `${server.url}/hop/0` })
    expect(text(five.body)).toBe("at /hop/0")
    const six = await refused(true, HttpClientRequest.get(`${server.url}/hop/6`))
    expect(six.message).toBe("The outbound URL is not allowed: more than 5 redirects")
    const loop = await refused(true, HttpClientRequest.get(`${server.url}/loop/a`))
    expect(loop.message).toContain("a redirect loop")
    expect(server.hits.filter((hit) => hit.path.startsWith("/loop"))).toHaveLength(2)
  })

  it("are each checked again: the next name is resolved and pinned anew, credentials and unknown names refused", async () => {
    const inside = await fake("127.0.0.1")
    dns.setAddresses("next.example", ["127.0.0.1"])
    const start = await fake("127.0.0.1", (hit, response) => {
      const location = hit.path === "/named"
        ? `http://next.example:${inside.port}/there`
        : hit.path === "/credentials"
        ? `http://a:b@127.0.0.1:${inside.port}/`
        : `http://unknown.example:${inside.port}/`
      response.writeHead(307, { location }).end()
    })
    const asked = dns.queries.filter((name) => name === "next.example").length
    const followed = await answered(true, HttpClientRequest.get(`${start.url}/named`))
    expect(followed.url).toBe(`http://next.example:${inside.port}/there`)
    expect(inside.hits.map((hit) => hit.headers.host)).toEqual([`next.example:${inside.port}`])
    expect(dns.queries.filter((name) => name === "next.example").length).toBe(asked + 2)
    expect((await refused(true, HttpClientRequest.get(`${start.url}/credentials`))).message).toBe("The outbound URL is not allowed: it carries credentials")
    expect(await refused(true, HttpClientRequest.get(`${start.url}/unknown`))).toMatchObject({ reason: "network", message: "unknown.example has no address" })
    expect(inside.hits).toHaveLength(1)
  })

  it("to another origin drop credential headers and keep the rest; within the origin keep them", async () => {
    const target = await fake("127.0.0.1")
    const source = await fake("127.0.0.1", (hit, response) => {
      if (hit.path === "/same") return response.writeHead(302, { location: "/landed" }).end()
      if (hit.path === "/landed") return response.end("landed")
      response.writeHead(302, { location: `${target.url}/elsewhere` }).end()
    })
    const headers = {
      authorization: "Bearer a",
      cookie: "c=1",
      "proxy-authorization": "Basic p",
      "mcp-session-id": "s",
      "last-event-id": "7",
      "x-api-key": "k",
      "x_apikey": "k",
      "x-auth-token": "t",
      "x-session-id": "s",
      "resume-from": "r",
      "x-tokenizer": "kept",
      "x-sessions-count": "kept",
      accept: "application/json",
      "x-trace": "kept"
    }
    const away = await answered(true, HttpClientRequest.get(`${source.url}/away`, { headers }))
    expect(away.url).toBe(`${target.url}/elsewhere`)
    const received = target.hits[0]!.headers
    for (const name of ["authorization", "cookie", "proxy-authorization", "mcp-session-id", "last-event-id", "x-api-key", "x_apikey", "x-auth-token", "x-session-id", "resume-from"]) {
      expect(received[name], name).toBeUndefined()
    }
    expect(received).toMatchObject({ accept: "application/json", "x-trace": "kept", "x-tokenizer": "kept", "x-sessions-count": "kept" })
    await answered(true, HttpClientRequest.get(`${source.url}/same`, { headers }))
    expect(source.hits.find((hit) => hit.path === "/landed")!.headers).toMatchObject({ authorization: "Bearer a", "x-api-key": "k" })
  })

  it("rewrite a 303, and a 301/302 answering a POST, to a GET without body; refuse other requests with a body across origins", async () => {
    const target = await fake("127.0.0.1")
    const source = await fake("127.0.0.1", (hit, response) => {
      const status = Number(hit.path.slice(1))
      response.writeHead(status, { location: `${target.url}/after-${status}` }).end()
    })
    const post = (status: number) => HttpClientRequest.post(`${source.url}/${status}`).pipe(HttpClientRequest.bodyText("{\"a\":1}", "application/json"))
    for (const status of [301, 302, 303]) {
      await answered(true, post(status))
      const hit = target.hits.at(-1)!
      expect([hit.method, hit.path, hit.body, hit.headers["content-type"], hit.headers["content-length"]], String(status))
        .toEqual(["GET", `/after-${status}`, "", undefined, undefined])
    }
    const hitsBefore = target.hits.length
    for (const status of [307, 308]) {
      const error = await refused(true, post(status))
      expect(error.message).toBe(`The outbound URL is not allowed: a POST request redirected to another origin (${target.url})`)
    }
    const put = await refused(true, HttpClientRequest.put(`${source.url}/307`))
    expect(put.message).toContain("a PUT request redirected to another origin")
    expect(target.hits).toHaveLength(hitsBefore)
    // A HEAD answered 303 stays a HEAD; a GET answered 307 stays a GET.
    await answered(true, HttpClientRequest.head(`${source.url}/303`))
    expect(target.hits.at(-1)!.method).toBe("HEAD")
    await answered(true, HttpClientRequest.get(`${source.url}/307`))
    expect(target.hits.at(-1)!.method).toBe("GET")
  })

  it("keep a POST with its body within the origin on 307, and are refused when the caller follows none", async () => {
    const server = await fake("127.0.0.1", (hit, response) => {
      if (hit.path === "/from") return response.writeHead(307, { location: "/to" }).end()
      response.end(`${hit.method} ${hit.body}`)
    })
    const kept = await answered(true, HttpClientRequest.post(`${server.url}/from`).pipe(HttpClientRequest.bodyText("payload")))
    expect(text(kept.body)).toBe("POST payload")
    const none = await refused(true, HttpClientRequest.get(`${server.url}/from`), { followRedirects: false })
    expect(none.message).toBe("The outbound URL is not allowed: it answered a redirect (307), which is not followed")
  })

  it("to something that is not http(s) are refused", async () => {
    const server = await fake("127.0.0.1", (_hit, response) => response.writeHead(302, { location: "file:///etc/passwd" }).end())
    const error = await refused(true, HttpClientRequest.get(`${server.url}/`))
    expect(error.message).toBe("The outbound URL is not allowed: it redirects to something that is not an http(s) URL")
  })
})

describe("the fetch adapter for user-supplied destinations", () => {
  const fetchWith = (allowPrivate: boolean) =>
    Effect.runPromise(Effect.map(Outbound.Outbound, (outbound) => outbound.fetchWith({ destination: "user", maxBodyBytes: 1024 })).pipe(Effect.provide(guard(allowPrivate))))

  it("applies the same checks, redirect rules and size cap, rejecting like fetch with the guard's error as cause", async () => {
    const target = await fake("127.0.0.1", (hit, response) => response.end(hit.path === "/large" ? "z".repeat(4096) : `${hit.method} ${hit.headers.authorization ?? "-"}`))
    const source = await fake("127.0.0.1", (_hit, response) => response.writeHead(302, { location: `${target.url}/landed` }).end())

    const strict = await fetchWith(false)
    const blocked = await strict(`https://127.0.0.1:${target.port}/`).then(() => undefined, (error: unknown) => error)
    expect(blocked).toBeInstanceOf(TypeError)
    expect((blocked as TypeError).cause).toMatchObject({ _tag: "OutboundError", reason: "blocked" })
    expect((blocked as TypeError).message).toBe(`fetch failed: The outbound URL is not allowed: 127.0.0.1 is a loopback address`)
    expect(target.hits).toHaveLength(0)

    const open = await fetchWith(true)
    const response = await open(`${source.url}/start`, { headers: { authorization: "Bearer secret" } })
    expect(response.status).toBe(200)
    expect(response.url).toBe(`${target.url}/landed`)
    expect(await response.text()).toBe("GET -")
    const large = await open(`${target.url}/large`).then(() => undefined, (error: unknown) => error)
    expect((large as TypeError).cause).toMatchObject({ reason: "too_large" })
    const posted = await open(`${source.url}/start`, { method: "POST", body: "x" })
    expect(posted.status).toBe(200)
    expect(target.hits.at(-1)!.method).toBe("GET")
  })
})

describe("the fetch adapter, aborted", () => {
  it("rejects with the signal's reason, as fetch does, and gives up the connection", async () => {
    let closed = 0
    const hanging = Http.createServer((request) => request.socket.once("close", () => closed++))
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve))
    try {
      const open = await Effect.runPromise(Effect.map(Outbound.Outbound, (outbound) => outbound.fetch).pipe(Effect.provide(guard(false))))
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const url = `http://127.0.0.1:${(hanging.address() as { port: number }).port}/hang`
      const rejected = await open(url, { signal: controller.signal }).then(() => undefined, (error: unknown) => error)
      expect(rejected).toBeInstanceOf(DOMException)
      expect((rejected as DOMException).name).toBe("AbortError")
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(closed).toBe(1)
    } finally {
      hanging.closeAllConnections()
      await new Promise<void>((resolve) => hanging.close(() => resolve()))
    }
  })
})

describe("operator destinations", () => {
  it("keep their behaviour: any address, no https requirement, same-origin redirects only", async () => {
    const target = await fake("127.0.0.1")
    const result = await Effect.runPromise(
      Effect.flatMap(Outbound.Outbound, (outbound) => outbound.execute(HttpClientRequest.get(`${target.url}/operator`))).pipe(Effect.provide(guard(false)))
    )
    expect(result.status).toBe(200)
    expect(target.hits.map((hit) => hit.path)).toEqual(["/operator"])
  })
})

/** A loopback server answering every request with `handler`, closed with the test's scope. */
const serveScoped = (handler: Http.RequestListener) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const server = Http.createServer(handler)
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}` }
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

// The outbound client itself: its user agent, redirects, body cap, timeout and failures.
describe("Outbound", () => {
  it.live("names us, refuses redirects to other origins, and fails with the origin only", () =>
    Effect.gen(function*() {
      const other = yield* serveScoped((_request, response) => response.end("elsewhere"))
      const seen: Array<string | undefined> = []
      const here = yield* serveScoped((request, response) => {
        seen.push(request.headers["user-agent"])
        const path = new URL(request.url ?? "/", "http://x").pathname
        if (path === "/away") return response.writeHead(302, { location: `${other.url}/x` }).end()
        if (path === "/loop") return response.writeHead(302, { location: "/loop" }).end()
        response.end("ok")
      })
      let connections = 0
      here.server.on("connection", () => connections++)
      const outbound = yield* Outbound.Outbound
      const ok = yield* outbound.execute(HttpClientRequest.get(`${here.url}/fine`))
      expect(new TextDecoder().decode(ok.body)).toBe("ok")
      expect(seen[0]).toBe(`orgplane/${VERSION}`)
      // Connections are kept alive: one for several requests in a row (no new TLS handshake each time).
      for (let i = 0; i < 4; i++) yield* outbound.execute(HttpClientRequest.get(`${here.url}/fine`))
      expect(connections).toBe(1)
      const away = yield* Effect.flip(outbound.execute(HttpClientRequest.get(`${here.url}/away?token=secret`)))
      expect(away).toMatchObject({ _tag: "OutboundError", reason: "blocked", origin: here.url })
      expect(JSON.stringify(away)).not.toContain("secret")
      expect(yield* Effect.flip(outbound.execute(HttpClientRequest.get(`${here.url}/loop`)))).toMatchObject({ reason: "blocked" })
      const refused = yield* Effect.flip(outbound.execute(HttpClientRequest.get("http://127.0.0.1:1/x")))
      expect(refused).toMatchObject({ reason: "network", origin: "http://127.0.0.1:1" })
      expect(yield* Effect.flip(outbound.execute(HttpClientRequest.get("file:///etc/passwd")))).toMatchObject({ reason: "blocked" })
      // User-supplied destinations: plain http to a loopback address is refused.
      expect(yield* Effect.flip(outbound.execute(HttpClientRequest.get(`${here.url}/fine`), { destination: "user" }))).toMatchObject({ reason: "blocked" })
    }).pipe(Effect.provide(Outbound.layer()), Effect.scoped))

  it.live("caps a body without a content-length as it streams, and its fetch rejects like fetch", () =>
    Effect.gen(function*() {
      const here = yield* serveScoped((request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        // Chunked: no content-length to refuse up front.
        const kilobytes = request.url === "/large" ? 64 : 8
        for (let i = 0; i < kilobytes; i++) response.write("y".repeat(1024))
        response.end()
      })
      const outbound = yield* Outbound.Outbound
      expect(yield* Effect.flip(outbound.execute(HttpClientRequest.get(`${here.url}/large`)))).toMatchObject({ reason: "too_large" })
      expect((yield* outbound.execute(HttpClientRequest.get(`${here.url}/small`))).body.length).toBe(8 * 1024)
      expect((yield* outbound.execute(HttpClientRequest.get(`${here.url}/large`), { maxBodyBytes: 128 * 1024 })).body.length).toBe(64 * 1024)
      const small = yield* Effect.promise(() => outbound.fetch(`${here.url}/small`, { method: "POST", body: "{}" }))
      expect(small.status).toBe(200)
      expect((yield* Effect.promise(() => small.text())).length).toBe(8 * 1024)
      const rejected = yield* Effect.promise(() => outbound.fetch(`${here.url}/large`).then(() => undefined, (error: unknown) => error))
      expect(rejected).toBeInstanceOf(TypeError)
      expect((rejected as TypeError).cause).toMatchObject({ _tag: "OutboundError", reason: "too_large" })
    }).pipe(Effect.provide(Outbound.layer({ maxBodyBytes: 32 * 1024 })), Effect.scoped))

  it.live("gives up on an answer that never comes within the timeout, and closes its connection", () =>
    Effect.gen(function*() {
      let closed = 0
      const silent = yield* serveScoped((request) => {
        request.socket.once("close", () => closed++)
      })
      const outbound = yield* Outbound.Outbound
      const error = yield* Effect.flip(outbound.execute(HttpClientRequest.get(`${silent.url}/hang?token=secret`), { timeout: "300 millis" }))
      expect(error).toMatchObject({ _tag: "OutboundError", reason: "timeout", origin: silent.url, message: "no complete answer within 300ms" })
      expect(JSON.stringify(error)).not.toContain("secret")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      expect(closed).toBe(1)
    }).pipe(Effect.provide(Outbound.layer()), Effect.scoped))

  it.live("follows an operator destination's same-origin redirects, and none when told not to", () =>
    Effect.gen(function*() {
      const here = yield* serveScoped((request, response) => {
        if (request.url === "/old") return response.writeHead(301, { location: "/new" }).end()
        response.end(`at ${request.url}`)
      })
      const outbound = yield* Outbound.Outbound
      const moved = yield* outbound.execute(HttpClientRequest.get(`${here.url}/old`))
      expect(moved).toMatchObject({ status: 200, url: `${here.url}/new` })
      expect(new TextDecoder().decode(moved.body)).toBe("at /new")
      const refused = yield* Effect.flip(outbound.execute(HttpClientRequest.get(`${here.url}/old`), { followRedirects: false }))
      expect(refused).toMatchObject({ reason: "blocked", message: "answered a redirect (301), which is not followed" })
    }).pipe(Effect.provide(Outbound.layer()), Effect.scoped))
})

describe("the guard, call by call", () => {
  /** Request options (a timeout as text). */
  interface Options {
    readonly destination?: "user"
    readonly maxBodyBytes?: number
    readonly followRedirects?: boolean
    readonly timeout?: `${number} millis`
  }

  /** What a `fetch` call came to: the answer (its date left out), or the rejection with the guard's error. */
  const outcome = (call: Promise<Response>) =>
    call.then(
      async (response) => ({
        status: response.status,
        url: response.url,
        headers: Object.fromEntries([...response.headers].filter(([name]) => name !== "date")),
        body: await response.text()
      }),
      (error: unknown) => {
        const cause: unknown = error instanceof Error ? error.cause : undefined
        const fields = (value: unknown) =>
          typeof value === "object" && value !== null
            ? Object.fromEntries(["_tag", "reason", "origin", "message", "code"].map((name) => [name, Reflect.get(value, name)]))
            : value
        return { rejected: error instanceof Error ? `${error.name}: ${error.message}` : String(error), cause: fields(cause) }
      }
    )

  /** `value` with the table's placeholders read as this run's origins and ports. */
  const show = <A>(value: A) =>
    swap(value, [["<target>", target.url], ["<other>", other.url], [":<target-port>", `:${target.port}`], [":<other-port>", `:${other.port}`]])

  const fetchWith = (allowPrivate: boolean, options: Options) =>
    Effect.runPromise(Effect.map(Outbound.Outbound, (outbound) => outbound.fetchWith(options)).pipe(Effect.provide(guard(allowPrivate))))

  let target: Fake
  let other: Fake
  beforeAll(async () => {
    other = await fake("127.0.0.1", (hit, response) => response.end(`other ${hit.method} ${hit.headers.authorization ?? "-"} ${hit.body}`))
    target = await fake("127.0.0.1", (hit, response) => {
      const [, kind, step] = hit.path.split("/")
      if (kind === "hop" && Number(step) > 0) return response.writeHead(302, { location: `/hop/${Number(step) - 1}` }).end()
      if (kind === "loop") return response.writeHead(302, { location: step === "a" ? "/loop/b" : "/loop/a" }).end()
      if (kind === "file") return response.writeHead(302, { location: "file:///etc/passwd" }).end()
      if (kind === "away") return response.writeHead(Number(step), { location: `${other.url}/landed` }).end()
      if (kind === "large") return response.end("z".repeat(4096))
      if (kind === "hang") return
      if (kind === "json") return response.writeHead(201, { "content-type": "application/json", "x-trace": "t" }).end("{\"a\":1}")
      response.end(`at ${hit.method} ${hit.path} ${hit.body}`)
    })
    dns.setAddresses("diff-loopback.example", ["127.0.0.1"])
    dns.setAddresses("diff-mixed.example", ["203.0.114.7", "10.0.0.9"])
  })

  const cases = (): ReadonlyArray<readonly [allowPrivate: boolean, options: Options, url: string, init?: RequestInit]> => {
    const user = { destination: "user", maxBodyBytes: 1024 } as const
    const p = target.port
    return [
      [false, user, `https://127.0.0.1:${p}/x?token=secret`],
      [false, user, `${target.url}/plain-http`],
      [false, user, "https://u:p@8.8.8.8/"],
      [false, user, "https://169.254.169.254/latest/meta-data/"],
      [false, user, "https://[::ffff:7f00:1]/"],
      [false, user, `https://diff-loopback.example:${p}/`],
      [false, user, "https://diff-mixed.example/"],
      [false, user, "https://nowhere-diff.example/"],
      [false, user, "ftp://files.example/x"],
      [true, user, `${target.url}/fine?q=1`, { method: "POST", body: "payload", headers: { "content-type": "text/plain" } }],
      [true, user, `${target.url}/json`],
      [true, user, `${target.url}/hop/5`],
      [true, user, `${target.url}/hop/6`],
      [true, user, `${target.url}/loop/a`],
      [true, user, `${target.url}/file`],
      [true, user, `${target.url}/away/302`, { method: "POST", body: "x", headers: { authorization: "Bearer secret" } }],
      [true, user, `${target.url}/away/307`, { method: "POST", body: "x" }],
      [true, user, `${target.url}/away/307`, { headers: { authorization: "Bearer secret" } }],
      [true, user, `${target.url}/away/303`, { method: "HEAD" }],
      [true, user, `${target.url}/large`],
      [true, user, "http://127.0.0.1:1/"],
      [true, user, `http://diff-loopback.example:${p}/named`],
      [true, user, "http://nowhere-diff.example/"],
      [true, { ...user, followRedirects: false }, `${target.url}/hop/1`],
      [true, { ...user, timeout: "200 millis" }, `${target.url}/hang`],
      [false, {}, `${target.url}/fine`],
      [false, {}, `${target.url}/hop/5`],
      [false, {}, `${target.url}/hop/6`],
      [false, {}, `${target.url}/away/302`],
      [false, { followRedirects: false }, `${target.url}/hop/1`],
      [false, { maxBodyBytes: 1024 }, `${target.url}/large`],
      [false, {}, "http://127.0.0.1:1/"],
      [false, {}, "file:///etc/passwd"],
      [false, { timeout: "200 millis" }, `${target.url}/hang`]
    ]
  }

  it("answers, or refuses saying why, each destination, redirect, cap and timeout", async () => {
    /** Each case's answer (its status, final URL and body), or its refusal (the guard's reason and words). */
    const expected: ReadonlyArray<{ readonly status: number; readonly url: string; readonly body: string } | { readonly refused: string; readonly message: string }> = [
      { refused: "blocked", message: "The outbound URL is not allowed: 127.0.0.1 is a loopback address" },
      { refused: "blocked", message: "The outbound URL is not allowed: https is required" },
      { refused: "blocked", message: "The outbound URL is not allowed: it carries credentials" },
      { refused: "blocked", message: "The outbound URL is not allowed: 169.254.169.254 is a link-local (cloud metadata) address" },
      { refused: "blocked", message: "The outbound URL is not allowed: ::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address" },
      { refused: "blocked", message: "The outbound URL is not allowed: diff-loopback.example resolves to 127.0.0.1, a loopback address" },
      { refused: "blocked", message: "The outbound URL is not allowed: diff-mixed.example resolves to 10.0.0.9, a private address" },
      { refused: "network", message: "nowhere-diff.example has no address" },
      { refused: "blocked", message: "not an http(s) URL" },
      { status: 200, url: "<target>/fine?q=1", body: "at POST /fine?q=1 payload" },
      { status: 201, url: "<target>/json", body: "{\"a\":1}" },
      { status: 200, url: "<target>/hop/0", body: "at GET /hop/0 " },
      { refused: "blocked", message: "The outbound URL is not allowed: more than 5 redirects" },
      { refused: "blocked", message: "The outbound URL is not allowed: a redirect loop (<target> again)" },
      { refused: "blocked", message: "The outbound URL is not allowed: it redirects to something that is not an http(s) URL" },
      { status: 200, url: "<other>/landed", body: "other GET - " },
      { refused: "blocked", message: "The outbound URL is not allowed: a POST request redirected to another origin (<other>)" },
      { status: 200, url: "<other>/landed", body: "other GET - " },
      { status: 200, url: "<other>/landed", body: "" },
      { refused: "too_large", message: "response body larger than 1024 bytes" },
      { refused: "network", message: "request failed (Transport)" },
      { status: 200, url: "http://diff-loopback.example:<target-port>/named", body: "at GET /named " },
      { refused: "network", message: "nowhere-diff.example has no address" },
      { refused: "blocked", message: "The outbound URL is not allowed: it answered a redirect (302), which is not followed" },
      { refused: "timeout", message: "no complete answer within 200ms" },
      { status: 200, url: "<target>/fine", body: "at GET /fine " },
      { status: 200, url: "<target>/hop/0", body: "at GET /hop/0 " },
      { refused: "blocked", message: "more than 5 redirects" },
      { refused: "blocked", message: "redirect to another origin (<other>)" },
      { refused: "blocked", message: "answered a redirect (302), which is not followed" },
      { refused: "too_large", message: "response body larger than 1024 bytes" },
      { refused: "network", message: "request failed (Transport)" },
      { refused: "blocked", message: "not an http(s) URL" },
      { refused: "timeout", message: "no complete answer within 200ms" }
    ]
    const all = cases()
    expect(all).toHaveLength(expected.length)
    for (const [index, [allowPrivate, options, url, init]] of all.entries()) {
      const answer = await outcome((await fetchWith(allowPrivate, options))(url, init))
      const wanted = show(expected[index]!)
      const label = `${JSON.stringify(options)} ${init?.method ?? "GET"} ${url}`
      if ("status" in wanted) expect(answer, label).toMatchObject(wanted)
      else expect(answer, label).toMatchObject({ cause: { _tag: "OutboundError", reason: wanted.refused, message: wanted.message } })
    }
  })
})
