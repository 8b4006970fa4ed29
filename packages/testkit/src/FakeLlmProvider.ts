/**
 * A stand-in LLM provider on 127.0.0.1, speaking enough of one API style for the official SDKs: `openai`
 * (`GET /v1/models`, `POST /v1/chat/completions`, `Authorization: Bearer <key>`; base URL `<url>/v1`) or
 * `anthropic` (`GET /v1/models` paged with `after_id`, `POST /v1/messages`, `x-api-key` or a Bearer token, and
 * `anthropic-version`; base URL `<url>`). A wrong credential answers 401 the way the real ones do, quoting the key
 * it was given (so tests can check it is scrubbed). It records every request and can be switched to misbehave.
 */
import * as Http from "node:http"
import type * as Net from "node:net"

export type Style = "openai" | "anthropic"

export type Mode =
  | { readonly _tag: "ok" }
  /** Answers nothing until the fake closes. */
  | { readonly _tag: "hang" }
  | { readonly _tag: "status"; readonly status: number; readonly body: unknown }
  | { readonly _tag: "text"; readonly text: string }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

export interface FakeLlmProvider {
  readonly style: Style
  readonly url: string
  /** What a client takes as `baseURL`: `<url>/v1` for openai, `<url>` for anthropic. */
  readonly baseUrl: string
  /** The credential it accepts (an API key, or an OAuth access token sent as a Bearer token). */
  readonly apiKey: string
  readonly models: ReadonlyArray<string>
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly setMode: (mode: Mode) => void
  readonly close: () => Promise<void>
}

export interface StartOptions {
  readonly style?: Style
  readonly apiKey?: string
  readonly models?: ReadonlyArray<string>
  /** Anthropic: models per page of `GET /v1/models` (the real default is 20). */
  readonly pageSize?: number
}

const json = (response: Http.ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

export const start = async (options: StartOptions = {}): Promise<FakeLlmProvider> => {
  const style = options.style ?? "openai"
  const apiKey = options.apiKey ?? `sk-fake-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`
  const models = options.models ?? (style === "openai" ? ["gpt-4o", "gpt-4o-mini", "o3"] : ["claude-test-large", "claude-test-small", "claude-test-medium"])
  const pageSize = options.pageSize ?? 20
  const requests: Array<RecordedRequest> = []
  let mode: Mode = { _tag: "ok" }

  /** The credential the request carries, as its style sends it. */
  const presented = (headers: Http.IncomingHttpHeaders): string | undefined => {
    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? "")?.[1]
    if (style === "openai") return bearer
    return typeof headers["x-api-key"] === "string" ? headers["x-api-key"] : bearer
  }

  const unauthorized = (response: Http.ServerResponse, given: string | undefined) =>
    style === "openai"
      ? json(response, 401, {
        error: { message: `Incorrect API key provided: ${given ?? "(none)"}. You can find your API key at https://platform.example/account/api-keys.`, type: "invalid_request_error", param: null, code: "invalid_api_key" }
      })
      : json(response, 401, { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${given ?? "(none)"}` } })

  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const url = new URL(request.url ?? "/", "http://fake")
      requests.push({ method: request.method ?? "", path: request.url ?? "", headers: request.headers, body })
      if (mode._tag === "hang") return
      if (mode._tag === "status") return json(response, mode.status, mode.body)
      if (mode._tag === "text") {
        response.writeHead(200, { "content-type": "text/plain" })
        return response.end(mode.text)
      }
      const given = presented(request.headers)
      if (given !== apiKey) return unauthorized(response, given)
      if (style === "anthropic" && request.headers["anthropic-version"] === undefined) {
        return json(response, 400, { type: "error", error: { type: "invalid_request_error", message: "anthropic-version: header is required" } })
      }
      if (request.method === "GET" && url.pathname === "/v1/models") {
        if (style === "openai") {
          return json(response, 200, { object: "list", data: models.map((id) => ({ id, object: "model", created: 1700000000, owned_by: "fake" })) })
        }
        const after = url.searchParams.get("after_id")
        const limit = Math.min(Number(url.searchParams.get("limit") ?? pageSize), pageSize)
        const from = after === null ? 0 : models.indexOf(after) + 1
        const page = models.slice(from, from + limit)
        return json(response, 200, {
          data: page.map((id) => ({ type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" })),
          has_more: from + limit < models.length,
          first_id: page[0] ?? null,
          last_id: page.at(-1) ?? null
        })
      }
      const parsed = body === "" ? {} : JSON.parse(body) as { model?: string; messages?: Array<{ content?: unknown }> }
      const last = parsed.messages?.at(-1)?.content
      const reply = `echo: ${typeof last === "string" ? last : JSON.stringify(last)}`
      if (style === "openai" && request.method === "POST" && url.pathname === "/v1/chat/completions") {
        return json(response, 200, {
          id: "chatcmpl-fake",
          object: "chat.completion",
          created: 1700000000,
          model: parsed.model,
          choices: [{ index: 0, message: { role: "assistant", content: reply, refusal: null }, logprobs: null, finish_reason: "stop" }],
          usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 }
        })
      }
      if (style === "anthropic" && request.method === "POST" && url.pathname === "/v1/messages") {
        return json(response, 200, {
          id: "msg_fake",
          type: "message",
          role: "assistant",
          model: parsed.model,
          content: [{ type: "text", text: reply }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 3, output_tokens: 3 }
        })
      }
      return json(response, 404, { error: { message: `no route ${request.method} ${url.pathname}` } })
    })
  })
  // Idle connections outlive the client pool's 4 s (as in FakeSuites.ts): no request handed to a socket just closed.
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  const base = `http://127.0.0.1:${port}`

  return {
    style,
    url: base,
    baseUrl: style === "openai" ? `${base}/v1` : base,
    apiKey,
    models,
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
