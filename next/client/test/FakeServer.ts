/** A scripted HTTP server on a loopback port: answers each request with the next scripted reply and records it. */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

export type Reply =
  | { readonly status: number; readonly body?: unknown; readonly headers?: Record<string, string>; readonly delayMs?: number }
  /** Closes the connection without answering: a transport failure. */
  | "drop"
  /** Never answers (until the client gives up). */
  | "hang"

export interface FakeServer {
  readonly url: string
  readonly requests: Array<Recorded>
  /** Replies for the next requests, in order; once used up, every request gets a 500. */
  readonly script: (...replies: ReadonlyArray<Reply>) => void
  /** Resolves when the server has seen a request's connection close before it answered. */
  readonly abandoned: () => Promise<void>
  readonly close: () => Promise<void>
}

export const start = async (): Promise<FakeServer> => {
  let replies: Array<Reply> = []
  const requests: Array<Recorded> = []
  let onAbandoned: (() => void) | undefined
  const answer = (request: IncomingMessage, response: ServerResponse, body: string) => {
    requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body })
    const reply = replies.shift() ?? { status: 500, body: { error: "unscripted" } }
    if (reply === "drop") return request.socket.destroy()
    if (reply === "hang") {
      response.on("close", () => {
        if (!response.writableEnded) onAbandoned?.()
      })
      return
    }
    const send = () => {
      if (response.destroyed) return
      response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
      response.end(reply.body === undefined ? "" : JSON.stringify(reply.body))
    }
    if (reply.delayMs) setTimeout(send, reply.delayMs)
    else send()
  }
  const server = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => answer(request, response, body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...next) => {
      replies = [...next]
      requests.length = 0
    },
    abandoned: () => new Promise<void>((resolve) => (onAbandoned = resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A valid success body for `POST /v1/auth/sign-in`. */
export const authResult = {
  user: { id: "usr_01h2xcejqtf2nbrexx3vqjhp41", email: "ada@example.com", name: "Ada", createdAt: "2025-01-01T00:00:00.000Z" },
  session: { id: "ses_01m7xsja0se4fs7gcbg0w73xhy", token: "session-token", expiresAt: "2025-02-01T00:00:00.000Z" }
}

export const health = { ok: true, version: "9.9.9" }
