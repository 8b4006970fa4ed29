/**
 * A fake worker runtime on 127.0.0.1: checks the bearer credential the server presents, records every request,
 * answers `POST /runtime/upgrade`, and can be switched to misbehave: hang (never answer), answer text that is
 * not JSON, nothing, a redirect, or an error status. `downUrl` is a closed port (a runtime that is down).
 */
import * as Http from "node:http"
import type * as Net from "node:net"

export type Mode =
  | { readonly _tag: "ok" }
  /** Answers nothing until the fake closes: a runtime that hangs. */
  | { readonly _tag: "hang" }
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "empty"; readonly status: number }
  | { readonly _tag: "redirect"; readonly location: string }
  | { readonly _tag: "status"; readonly status: number; readonly body: unknown }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The body as sent. */
  readonly body: string
}

export interface FakeWorkerRuntime {
  /** The runtime's base URL (what its instance reports as `url`). */
  readonly url: string
  /** The credential the runtime expects as `Authorization: Bearer <credential>`. */
  readonly credential: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly setMode: (mode: Mode) => void
  readonly close: () => Promise<void>
}

const json = (response: Http.ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

export const start = async (options: { readonly credential?: string } = {}): Promise<FakeWorkerRuntime> => {
  const credential = options.credential ?? `runtime-secret-${Math.random().toString(36).slice(2)}`
  const requests: Array<RecordedRequest> = []
  let mode: Mode = { _tag: "ok" }

  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body })
      if (request.headers["authorization"] !== `Bearer ${credential}`) return json(response, 401, { error: "unauthorized" })
      if (request.method !== "POST" || request.url !== "/runtime/upgrade") return json(response, 404, { error: "not_found" })
      switch (mode._tag) {
        case "hang":
          return
        case "text":
          response.writeHead(200, { "content-type": "text/plain" })
          return response.end(mode.text)
        case "empty":
          response.writeHead(mode.status)
          return response.end()
        case "redirect":
          response.writeHead(307, { location: mode.location })
          return response.end()
        case "status":
          return json(response, mode.status, mode.body)
        case "ok": {
          const parsed = body === "" ? null : JSON.parse(body)
          return json(response, 200, { ok: true, upgraded: true, requested: parsed })
        }
      }
    })
  })
  // Idle connections outlive the client pool's 4 s (as in FakeSuites.ts): no request handed to a socket just closed.
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    credential,
    requests,
    setMode: (next) => {
      mode = next
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** A URL on 127.0.0.1 where nothing listens: a port that was just bound and released. */
export const downUrl = async (): Promise<string> => {
  const server = Http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}
