/**
 * Fake office-suite APIs on 127.0.0.1 (port 0), speaking the upstream shapes the orgplane server calls: mail as
 * Microsoft Graph v1.0 (`startMail`) and calendar as Google Calendar v3 (`startCalendar`). Written on `node:http`.
 * Tokens are checked through `verifyToken` (tests pass a `FakeOAuth`'s `verifyAccessToken`, or a stub).
 *
 * Shared behaviour:
 * - Authentication: `Authorization: Bearer <token>`. Missing, unknown or expired (`verifyToken` answers undefined)
 *   → 401 with `WWW-Authenticate: Bearer` and the upstream's body; a token without a scope the route needs → 403.
 *   Graph scopes compare in both forms (`https://graph.microsoft.com/Mail.Read` and `Mail.Read`, case-insensitive);
 *   Google scopes are full URIs.
 * - `setMode(mode, { times? })`: the mode applies to the next `times` requests (default: until changed), then the
 *   fake is back to `ok`. `status` answers that status (the given body, or an error body in the upstream's shape,
 *   `application/json`; `headers` added, e.g. `retry-after`); `slow` waits `ms` then answers normally; `hang` never
 *   answers (until `close`, which destroys the sockets); `oversized` answers 200 `application/json` with a body of
 *   exactly `bytes` bytes (`{"value":"xxxx…"}`); `invalidJson` answers 200 `application/json` `{"id":`;
 *   `resetAfterWrite` handles the request normally (the draft is created, the event patched) and then destroys the
 *   socket without answering: an outcome the caller cannot know. `status`, `hang`, `oversized` and `invalidJson`
 *   answer before the token is looked at and without touching the data.
 * - `requests` records every request: method, path with query, headers, body text, the status answered (`null`
 *   while unanswered, and for ever after a `hang` or `resetAfterWrite`).
 *
 * Mail (`startMail`, `url` = `http://127.0.0.1:<port>/v1.0`):
 * - `POST /v1.0/me/messages` (Mail.ReadWrite): creates a draft and answers 201 with the Graph message resource
 *   (`body` as sent: `contentType` "text" when sent "Text"/"text", else "html"). Not JSON, not an object or no
 *   string `subject` → 400 `RequestBodyRead`; a recipient without an `emailAddress.address` → 400
 *   `ErrorInvalidRecipients`. Recipient names default to the address.
 * - `GET /v1.0/me/messages/{id}` (Mail.Read or Mail.ReadWrite): the id is URL-decoded from the path (ids carry `-`,
 *   `_` and a trailing `=`). `$select` (comma list) answers only those members plus `@odata.context` and
 *   `@odata.etag` (a member the resource does not have → 400 `RequestBroker--ParseUri`, as Graph). `Prefer:
 *   outlook.body-content-type="text"` answers `body` (and `uniqueBody`) as text with `Preference-Applied`;
 *   otherwise html (a text message is wrapped in a Graph-like html document). Unknown id → 404 `ErrorItemNotFound`.
 * - Anything else → 404 `ResourceNotFound` (after the token check).
 * - `addMessage` stores a received message (recipients may lack an address: `{ emailAddress: { name } }`);
 *   `messages()` every stored message, `drafts()` those created through POST.
 *
 * Calendar (`startCalendar`, `url` = `http://127.0.0.1:<port>`):
 * - `GET /calendar/v3/calendars/primary/events/{eventId}` (calendar.events, calendar.readonly,
 *   calendar.events.readonly or calendar).
 * - `PATCH` the same (calendar.events or calendar): members other than `conferenceData` patch the event shallowly
 *   (read-only members such as `id`, `etag`, `kind` are ignored). `conferenceData` counts only with
 *   `?conferenceDataVersion=1` (as Google: otherwise ignored). A `createRequest` (`conferenceSolutionKey.type`
 *   must be `hangoutsMeet`, `requestId` required, else 400 `invalid`) adds a Meet conference whose entry points
 *   are phone FIRST, then video, then "more" (the caller must pick the video one), and `hangoutLink` unless
 *   `hangoutLink: false`. The same `requestId` again → the same conference; an event that already has
 *   `conferenceData` keeps it. Answers 200 with the full event; `etag` and `updated` change only when something
 *   did. A body that is not a JSON object → 400 `parseError`.
 * - Unknown event, other calendar or path → 404 `notFound` (after the token check).
 * - `addEvent` stores an event (`allDay`: `start`/`end` as `{ date }`, else `{ dateTime, timeZone }`); `events()`;
 *   `patches(eventId)` counts PATCH requests that reached the (existing) event.
 */
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"

// ---------------------------------------------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------------------------------------------

export type Mode =
  | { readonly _tag: "ok" }
  /** Answers `status` with `body` (default: an error body in the upstream's shape) and `headers`. */
  | { readonly _tag: "status"; readonly status: number; readonly body?: string; readonly headers?: Readonly<Record<string, string>> }
  /** Waits `ms`, then answers normally. */
  | { readonly _tag: "slow"; readonly ms: number }
  /** Never answers (until `close`). */
  | { readonly _tag: "hang" }
  /** 200 `application/json` with a JSON-looking body of exactly `bytes` bytes. */
  | { readonly _tag: "oversized"; readonly bytes: number }
  /** 200 `application/json` `{"id":`. */
  | { readonly _tag: "invalidJson" }
  /** Performs the request's effect, then destroys the socket without answering. */
  | { readonly _tag: "resetAfterWrite" }

/** What a resource server learns from a token: `undefined` when unknown or expired. */
export type VerifyToken = (token: string) => { readonly scopes: ReadonlyArray<string> } | undefined

export interface RecordedRequest {
  readonly method: string
  /** Path and query. */
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The body as sent. */
  readonly body: string
  /** `null` while unanswered (and for good after `hang` or `resetAfterWrite`). */
  status: number | null
}

export interface Fake {
  /** The base URL the server is configured with. */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** The mode applies to the next `times` requests (default: until changed), then back to `ok`. */
  readonly setMode: (mode: Mode, options?: { readonly times?: number }) => void
  readonly close: () => Promise<void>
}

interface Incoming {
  readonly method: string
  readonly url: URL
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

interface Answer {
  readonly status: number
  readonly body: string
  readonly headers?: Readonly<Record<string, string>>
}

const jsonAnswer = (status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): Answer => ({
  status,
  body: JSON.stringify(body),
  headers
})

/** The bearer token of a request, if any. */
const bearer = (headers: Http.IncomingHttpHeaders): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "")
  return match?.[1]
}

const oversizedBody = (bytes: number): string => {
  const full = `{"value":"${"x".repeat(Math.max(0, bytes - 12))}"}`
  return full.length > bytes ? full.slice(0, Math.max(0, bytes)) : full
}

const base64url = (bytes: number) => NodeCrypto.randomBytes(bytes).toString("base64url")

const serve = async (
  base: string,
  handle: (incoming: Incoming) => Answer,
  errorBody: (status: number) => unknown
): Promise<{ readonly origin: string } & Omit<Fake, "url">> => {
  const requests: Array<RecordedRequest> = []
  const sockets = new Set<Net.Socket>()
  const timers = new Set<NodeJS.Timeout>()
  let mode: Mode = { _tag: "ok" }
  let remaining: number | undefined

  /** The mode for the request that just arrived; counts it down. */
  const takeMode = (): Mode => {
    const current = mode
    if (remaining !== undefined) {
      remaining -= 1
      if (remaining <= 0) {
        mode = { _tag: "ok" }
        remaining = undefined
      }
    }
    return current
  }

  const send = (response: Http.ServerResponse, answer: Answer) => {
    const body = Buffer.from(answer.body, "utf8")
    response.writeHead(answer.status, { "content-type": "application/json; charset=utf-8", "content-length": String(body.length), ...answer.headers })
    response.end(body)
  }

  const server = Http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const record: RecordedRequest = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, body, status: null }
      requests.push(record)
      response.on("finish", () => {
        record.status = response.statusCode
      })
      const incoming: Incoming = { method: request.method ?? "", url: new URL(request.url ?? "/", "http://127.0.0.1"), headers: request.headers, body }
      const answer = () => {
        try {
          return handle(incoming)
        } catch (error) {
          return jsonAnswer(500, errorBody(500), { "x-fake-error": String(error).slice(0, 200) })
        }
      }
      const current = takeMode()
      switch (current._tag) {
        case "ok":
          return send(response, answer())
        case "status":
          return send(response, {
            status: current.status,
            body: current.body ?? JSON.stringify(errorBody(current.status)),
            ...(current.headers === undefined ? {} : { headers: current.headers })
          })
        case "slow": {
          const timer = setTimeout(() => {
            timers.delete(timer)
            if (!response.destroyed) send(response, answer())
          }, current.ms)
          timers.add(timer)
          return
        }
        case "hang":
          return
        case "oversized":
          return send(response, { status: 200, body: oversizedBody(current.bytes) })
        case "invalidJson":
          return send(response, { status: 200, body: `{"id":` })
        case "resetAfterWrite":
          answer()
          request.socket.destroy()
          return
      }
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  // Idle connections stay open longer than a client's pool keeps them (undici: the server's 5 s hint less 1 s), as
  // orgplane's own server does (65 s): with Node's default of 5 s a busy machine's late event loop could hand a
  // request to a socket this server had just closed, and the call failed as "fetch failed" (CI, 2026-11-30).
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo

  return {
    origin: `http://127.0.0.1:${port}${base}`,
    requests,
    setMode: (next, options) => {
      const times = options?.times
      if (times !== undefined && times <= 0) {
        mode = { _tag: "ok" }
        remaining = undefined
        return
      }
      mode = next
      remaining = times
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.close(() => resolve())
        server.closeAllConnections()
        for (const socket of sockets) socket.destroy()
      })
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)

const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Mail: Microsoft Graph v1.0
// ---------------------------------------------------------------------------------------------------------------

export interface MailAddress {
  readonly name: string
  readonly address: string
}

/** A Graph recipient. `name` or `address` may be missing (a recipient Graph could not resolve). */
export interface Recipient {
  readonly emailAddress: { readonly name?: string; readonly address?: string }
}

/** A message as the fake keeps it. `text` and `html` are the two versions Graph can answer. */
export interface StoredMessage {
  readonly id: string
  readonly changeKey: string
  readonly createdDateTime: string
  readonly lastModifiedDateTime: string
  readonly receivedDateTime: string
  readonly sentDateTime: string
  readonly subject: string
  /** The body as created: its content type and content. */
  readonly body: { readonly contentType: "text" | "html"; readonly content: string }
  readonly text: string
  readonly html: string
  readonly from: { readonly emailAddress: MailAddress } | null
  readonly toRecipients: ReadonlyArray<Recipient>
  readonly ccRecipients: ReadonlyArray<Recipient>
  readonly bccRecipients: ReadonlyArray<Recipient>
  readonly hasAttachments: boolean
  readonly conversationId: string
  readonly isDraft: boolean
  readonly isRead: boolean
}

export interface AddMessage {
  readonly subject: string
  readonly text: string
  /** Default: the text in a Graph-like html document. */
  readonly html?: string
  /** Default `{ name: "Grace Sender", address: "grace@fabrikam.example" }`; `null`: no sender. */
  readonly from?: MailAddress | null
  readonly to?: ReadonlyArray<{ readonly name?: string | undefined; readonly address?: string | undefined }>
  readonly cc?: ReadonlyArray<{ readonly name?: string | undefined; readonly address?: string | undefined }>
  readonly hasAttachments?: boolean
  /** Default: now. */
  readonly receivedDateTime?: string
  readonly conversationId?: string
}

export interface MailOptions {
  readonly verifyToken: VerifyToken
  /** The signed-in user's mailbox (the drafts' sender). Default `{ name: "Ada Member", address: "ada@contoso.example" }`. */
  readonly mailbox?: MailAddress
}

export interface FakeMail extends Fake {
  readonly mailbox: MailAddress
  /** Stores a received message; its Graph id. */
  readonly addMessage: (message: AddMessage) => string
  readonly messages: () => ReadonlyArray<StoredMessage>
  /** Messages created through `POST /me/messages`. */
  readonly drafts: () => ReadonlyArray<StoredMessage>
}

const GRAPH = "https://graph.microsoft.com/"

const graphError = (status: number, code: string, message: string, headers: Readonly<Record<string, string>> = {}) =>
  jsonAnswer(status, { error: { code, message, innerError: { date: new Date().toISOString().slice(0, 19), "request-id": NodeCrypto.randomUUID(), "client-request-id": NodeCrypto.randomUUID() } } }, headers)

const graphStatusCode = (status: number): string => {
  switch (status) {
    case 400:
      return "BadRequest"
    case 401:
      return "InvalidAuthenticationToken"
    case 403:
      return "ErrorAccessDenied"
    case 404:
      return "ResourceNotFound"
    case 429:
      return "TooManyRequests"
    case 503:
      return "ServiceNotAvailable"
    case 504:
      return "GatewayTimeout"
    default:
      return status >= 500 ? "InternalServerError" : "UnknownError"
  }
}

/** A Graph-like message id: `AAMkAD…` base64url with `-`, `_` and a trailing `=` (needs URL-encoding). */
const graphId = () => `AAMkAD${base64url(15)}-${base64url(6)}_${base64url(21)}AAA=`

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** The html version Graph answers for a text message. */
const textToHtml = (text: string) =>
  `<html><head>\r\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\r\n</head>\r\n<body>\r\n<div>${escapeHtml(text).replace(/\r?\n/g, "<br>\r\n")}</div>\r\n</body>\r\n</html>\r\n`

/** The text version Graph answers for an html message (roughly). */
const htmlToText = (html: string) =>
  html
    .replace(/<(head|style|script)[^>]*>[\s\S]*?<\/\1>/gi, "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|tr|h[1-6])>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\r\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

const recipient = (entry: { readonly name?: string | undefined; readonly address?: string | undefined }): Recipient => {
  const name = entry.name ?? entry.address
  return { emailAddress: { ...(name === undefined ? {} : { name }), ...(entry.address === undefined ? {} : { address: entry.address }) } }
}

/** Every member of the message resource, so `$select` can name them. */
const MESSAGE_MEMBERS = new Set([
  "id",
  "createdDateTime",
  "lastModifiedDateTime",
  "changeKey",
  "categories",
  "receivedDateTime",
  "sentDateTime",
  "hasAttachments",
  "internetMessageId",
  "subject",
  "bodyPreview",
  "importance",
  "parentFolderId",
  "conversationId",
  "conversationIndex",
  "isDeliveryReceiptRequested",
  "isReadReceiptRequested",
  "isRead",
  "isDraft",
  "webLink",
  "inferenceClassification",
  "body",
  "uniqueBody",
  "sender",
  "from",
  "toRecipients",
  "ccRecipients",
  "bccRecipients",
  "replyTo",
  "flag"
])

export const startMail = async (options: MailOptions): Promise<FakeMail> => {
  const mailbox = options.mailbox ?? { name: "Ada Member", address: "ada@contoso.example" }
  const stored = new Map<string, StoredMessage>()
  const draftIds = new Set<string>()
  const parentFolderId = `AAMkAD${base64url(30)}AAA=`
  const context = (select?: ReadonlyArray<string>) =>
    `https://graph.microsoft.com/v1.0/$metadata#users('${encodeURIComponent(mailbox.address)}')/messages${select === undefined ? "" : `(${select.join(",")})`}/$entity`

  const resource = (message: StoredMessage, bodyType: "text" | "html" | "asCreated"): Record<string, unknown> => {
    const body =
      bodyType === "asCreated" ? message.body : bodyType === "text" ? { contentType: "text", content: message.text } : { contentType: "html", content: message.html }
    return {
      "@odata.context": context(),
      "@odata.etag": `W/"${message.changeKey}"`,
      id: message.id,
      createdDateTime: message.createdDateTime,
      lastModifiedDateTime: message.lastModifiedDateTime,
      changeKey: message.changeKey,
      categories: [],
      receivedDateTime: message.receivedDateTime,
      sentDateTime: message.sentDateTime,
      hasAttachments: message.hasAttachments,
      internetMessageId: `<${message.id.slice(6, 22).replace(/[^A-Za-z0-9]/g, "x")}@contoso.example>`,
      subject: message.subject,
      bodyPreview: message.text.slice(0, 255),
      importance: "normal",
      parentFolderId,
      conversationId: message.conversationId,
      conversationIndex: Buffer.from(message.conversationId).toString("base64").slice(0, 30),
      isDeliveryReceiptRequested: false,
      isReadReceiptRequested: false,
      isRead: message.isRead,
      isDraft: message.isDraft,
      webLink: `https://outlook.example/owa/?ItemID=${encodeURIComponent(message.id)}&exvsurl=1&viewmodel=ReadMessageItem`,
      inferenceClassification: "focused",
      body,
      uniqueBody: body,
      sender: message.from,
      from: message.from,
      toRecipients: message.toRecipients,
      ccRecipients: message.ccRecipients,
      bccRecipients: message.bccRecipients,
      replyTo: [],
      flag: { flagStatus: "notFlagged" }
    }
  }

  const scopeOf = (scope: string) => (scope.toLowerCase().startsWith(GRAPH) ? scope.slice(GRAPH.length) : scope).toLowerCase()

  const createDraft = (incoming: Incoming): Answer => {
    const parsed = parseJson(incoming.body)
    if (!parsed.ok || !isObject(parsed.value)) {
      return graphError(400, "RequestBodyRead", "Cannot read the request body: it is not a JSON object.")
    }
    const draft = parsed.value
    if (typeof draft.subject !== "string") {
      return graphError(400, "RequestBodyRead", "The request body has no 'subject' string.")
    }
    const lists: Record<"toRecipients" | "ccRecipients" | "bccRecipients", Array<Recipient>> = { toRecipients: [], ccRecipients: [], bccRecipients: [] }
    for (const key of ["toRecipients", "ccRecipients", "bccRecipients"] as const) {
      const list = draft[key]
      if (list === undefined || list === null) continue
      if (!Array.isArray(list)) return graphError(400, "RequestBodyRead", `'${key}' must be an array.`)
      for (const entry of list) {
        const emailAddress = isObject(entry) ? entry.emailAddress : undefined
        if (!isObject(emailAddress) || typeof emailAddress.address !== "string" || emailAddress.address === "") {
          return graphError(400, "ErrorInvalidRecipients", "At least one recipient isn't valid., A recipient has no email address.")
        }
        lists[key].push(recipient({ address: emailAddress.address, ...(typeof emailAddress.name === "string" ? { name: emailAddress.name } : {}) }))
      }
    }
    const sentBody = isObject(draft.body) ? draft.body : {}
    const content = typeof sentBody.content === "string" ? sentBody.content : ""
    const isText = typeof sentBody.contentType === "string" && sentBody.contentType.toLowerCase() === "text"
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z")
    const message: StoredMessage = {
      id: graphId(),
      changeKey: `CQAAABYAAAA${base64url(12)}`,
      createdDateTime: now,
      lastModifiedDateTime: now,
      receivedDateTime: now,
      sentDateTime: now,
      subject: draft.subject,
      body: { contentType: isText ? "text" : "html", content },
      text: isText ? content : htmlToText(content),
      html: isText ? textToHtml(content) : content,
      from: { emailAddress: mailbox },
      ...lists,
      hasAttachments: false,
      conversationId: `AAQkAD${base64url(30)}=`,
      isDraft: true,
      isRead: true
    }
    stored.set(message.id, message)
    draftIds.add(message.id)
    return jsonAnswer(201, resource(message, "asCreated"))
  }

  const getMessage = (incoming: Incoming, id: string): Answer => {
    const message = stored.get(id)
    if (message === undefined) return graphError(404, "ErrorItemNotFound", "The specified object was not found in the store.")
    const header = incoming.headers.prefer
    const prefer = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((part) => part.trim())
    const preference = prefer
      .map((part) => /^outlook\.body-content-type\s*=\s*"?(text|html)"?$/i.exec(part)?.[1]?.toLowerCase())
      .find((value) => value !== undefined)
    const headers: Record<string, string> = preference === undefined ? {} : { "preference-applied": `outlook.body-content-type="${preference}"` }
    const full = resource(message, preference === "text" ? "text" : "html")
    const selectParam = incoming.url.searchParams.get("$select")
    if (selectParam === null) return jsonAnswer(200, full, headers)
    const select = selectParam.split(",").map((member) => member.trim()).filter((member) => member !== "")
    const unknown = select.find((member) => !MESSAGE_MEMBERS.has(member))
    if (unknown !== undefined) {
      return graphError(400, "RequestBroker--ParseUri", `Could not find a property named '${unknown}' on type 'microsoft.graph.message'.`)
    }
    const answer: Record<string, unknown> = { "@odata.context": context(select), "@odata.etag": full["@odata.etag"] }
    for (const member of select) answer[member] = full[member]
    return jsonAnswer(200, answer, headers)
  }

  const handle = (incoming: Incoming): Answer => {
    const token = bearer(incoming.headers)
    const grant = token === undefined ? undefined : options.verifyToken(token)
    if (grant === undefined) {
      return graphError(401, "InvalidAuthenticationToken", "Access token has expired or is not yet valid.", { "www-authenticate": 'Bearer realm="", error="invalid_token"' })
    }
    const scopes = new Set(grant.scopes.map(scopeOf))
    const needs = (...any: ReadonlyArray<string>) => any.some((scope) => scopes.has(scope.toLowerCase()))
    const denied = () => graphError(403, "ErrorAccessDenied", "Access is denied. Check credentials and try again.")
    const path = incoming.url.pathname
    if (incoming.method === "POST" && path === "/v1.0/me/messages") {
      return needs("Mail.ReadWrite") ? createDraft(incoming) : denied()
    }
    const match = /^\/v1\.0\/me\/messages\/([^/]+)$/.exec(path)
    if (incoming.method === "GET" && match !== null) {
      if (!needs("Mail.Read", "Mail.ReadWrite")) return denied()
      let id: string
      try {
        id = decodeURIComponent(match[1]!)
      } catch {
        return graphError(400, "BadRequest", "The message id is not URL-encoded properly.")
      }
      return getMessage(incoming, id)
    }
    return graphError(404, "ResourceNotFound", `Resource not found for the segment '${path.split("/").filter((s) => s !== "").slice(1).join("/")}'.`)
  }

  const served = await serve("/v1.0", handle, (status) => ({
    error: { code: graphStatusCode(status), message: `The fake was told to answer ${status}.` }
  }))

  return {
    url: served.origin,
    requests: served.requests,
    setMode: served.setMode,
    close: served.close,
    mailbox,
    addMessage: (input) => {
      const received = input.receivedDateTime ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z")
      const from = input.from === undefined ? { name: "Grace Sender", address: "grace@fabrikam.example" } : input.from
      const message: StoredMessage = {
        id: graphId(),
        changeKey: `CQAAABYAAAA${base64url(12)}`,
        createdDateTime: received,
        lastModifiedDateTime: received,
        receivedDateTime: received,
        sentDateTime: received,
        subject: input.subject,
        body: input.html === undefined ? { contentType: "text", content: input.text } : { contentType: "html", content: input.html },
        text: input.text,
        html: input.html ?? textToHtml(input.text),
        from: from === null ? null : { emailAddress: from },
        toRecipients: (input.to ?? []).map(recipient),
        ccRecipients: (input.cc ?? []).map(recipient),
        bccRecipients: [],
        hasAttachments: input.hasAttachments ?? false,
        conversationId: input.conversationId ?? `AAQkAD${base64url(30)}=`,
        isDraft: false,
        isRead: false
      }
      stored.set(message.id, message)
      return message.id
    },
    messages: () => [...stored.values()],
    drafts: () => [...stored.values()].filter((message) => draftIds.has(message.id))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Calendar: Google Calendar v3
// ---------------------------------------------------------------------------------------------------------------

const CALENDAR_SCOPE = "https://www.googleapis.com/auth/calendar"
const READ_SCOPES = [`${CALENDAR_SCOPE}.events`, `${CALENDAR_SCOPE}.readonly`, `${CALENDAR_SCOPE}.events.readonly`, CALENDAR_SCOPE]
const WRITE_SCOPES = [`${CALENDAR_SCOPE}.events`, CALENDAR_SCOPE]

/** A Google Calendar event resource, as the fake keeps and answers it (patched members included). */
export interface CalendarEvent {
  readonly kind: "calendar#event"
  readonly etag: string
  readonly id: string
  readonly status: string
  readonly htmlLink: string
  readonly created: string
  readonly updated: string
  readonly summary?: string
  readonly start: { readonly dateTime: string; readonly timeZone: string } | { readonly date: string }
  readonly end: { readonly dateTime: string; readonly timeZone: string } | { readonly date: string }
  readonly organizer: { readonly email: string; readonly self?: boolean }
  readonly attendees?: ReadonlyArray<{ readonly email: string; readonly responseStatus?: string }>
  readonly hangoutLink?: string
  readonly conferenceData?: ConferenceData
  readonly [member: string]: unknown
}

export interface ConferenceData {
  readonly createRequest: {
    readonly requestId: string
    readonly conferenceSolutionKey: { readonly type: string }
    readonly status: { readonly statusCode: string }
  }
  readonly entryPoints: ReadonlyArray<{ readonly entryPointType: string; readonly uri: string; readonly label?: string; readonly [member: string]: unknown }>
  readonly conferenceSolution: { readonly key: { readonly type: string }; readonly name: string; readonly iconUri: string }
  readonly conferenceId: string
}

export interface AddEvent {
  readonly summary: string
  /** An RFC 3339 date-time, or a date (`YYYY-MM-DD`) when `allDay`. */
  readonly start: string
  readonly end: string
  readonly allDay?: boolean
  /** Default: a Google-like id. */
  readonly id?: string
  /** Default "UTC" (timed events). */
  readonly timeZone?: string
  readonly attendees?: ReadonlyArray<{ readonly email: string; readonly responseStatus?: string }>
}

export interface CalendarOptions {
  readonly verifyToken: VerifyToken
  /** Default true: a created conference also sets the event's `hangoutLink`. */
  readonly hangoutLink?: boolean
  /** The calendar owner (organizer of added events). Default "ada@contoso.example". */
  readonly owner?: string
}

export interface FakeCalendar extends Fake {
  /** Stores an event; its id. */
  readonly addEvent: (event: AddEvent) => string
  readonly events: () => ReadonlyArray<CalendarEvent>
  /** PATCH requests that reached the event (it existed and the token was good). */
  readonly patches: (eventId: string) => number
}

const googleError = (status: number, message: string, reason: string, extra: Record<string, unknown> = {}) =>
  jsonAnswer(status, { error: { code: status, message, errors: [{ domain: "global", reason, message }], ...extra } })

const googleStatus = (status: number): string => {
  switch (status) {
    case 400:
      return "INVALID_ARGUMENT"
    case 401:
      return "UNAUTHENTICATED"
    case 403:
      return "PERMISSION_DENIED"
    case 404:
      return "NOT_FOUND"
    case 429:
      return "RESOURCE_EXHAUSTED"
    case 503:
      return "UNAVAILABLE"
    default:
      return status >= 500 ? "INTERNAL" : "UNKNOWN"
  }
}

/** Google event ids: base32hex, lower case. */
const eventId = () => {
  const alphabet = "0123456789abcdefghijklmnopqrstuv"
  return [...NodeCrypto.randomBytes(26)].map((byte) => alphabet[byte % 32]).join("")
}

const meetCode = () => {
  const letters = "abcdefghijkmnopqrstuvwxyz"
  const part = (n: number) => [...NodeCrypto.randomBytes(n)].map((byte) => letters[byte % letters.length]).join("")
  return `${part(3)}-${part(4)}-${part(3)}`
}

const googleTime = () => new Date().toISOString()

/** Members a PATCH cannot change. */
const READ_ONLY_EVENT_MEMBERS = new Set(["kind", "etag", "id", "htmlLink", "created", "updated", "iCalUID", "hangoutLink", "conferenceData", "organizer", "creator"])

export const startCalendar = async (options: CalendarOptions): Promise<FakeCalendar> => {
  const withHangoutLink = options.hangoutLink ?? true
  const owner = options.owner ?? "ada@contoso.example"
  const events = new Map<string, CalendarEvent>()
  const patchCounts = new Map<string, number>()
  const conferences = new Map<string, ConferenceData>()
  let etagCounter = 3_400_000_000_000_000

  const nextEtag = () => {
    etagCounter += Math.floor(Math.random() * 1000) + 1
    return `"${etagCounter}"`
  }

  const conference = (requestId: string, type: string): ConferenceData => {
    const known = conferences.get(requestId)
    if (known !== undefined) return known
    const code = meetCode()
    const created: ConferenceData = {
      createRequest: { requestId, conferenceSolutionKey: { type }, status: { statusCode: "success" } },
      entryPoints: [
        { entryPointType: "phone", uri: "tel:+1-555-0100", label: "+1 555-0100", pin: "123456789", regionCode: "US" },
        { entryPointType: "video", uri: `https://meet.example/${code}`, label: `meet.example/${code}` },
        { entryPointType: "more", uri: `https://tel.meet.example/${code}?pin=123456789`, pin: "123456789" }
      ],
      conferenceSolution: { key: { type }, name: "Google Meet", iconUri: "https://meet.example/icon.png" },
      conferenceId: code
    }
    conferences.set(requestId, created)
    return created
  }

  const patchEvent = (incoming: Incoming, event: CalendarEvent): Answer => {
    const parsed = parseJson(incoming.body === "" ? "{}" : incoming.body)
    if (!parsed.ok || !isObject(parsed.value)) return googleError(400, "Parse Error", "parseError")
    const patch = parsed.value
    const next: Record<string, unknown> = { ...event }
    let changed = false
    for (const [member, value] of Object.entries(patch)) {
      if (READ_ONLY_EVENT_MEMBERS.has(member)) continue
      if (JSON.stringify(next[member]) !== JSON.stringify(value)) {
        next[member] = value
        changed = true
      }
    }
    if (incoming.url.searchParams.get("conferenceDataVersion") === "1" && patch.conferenceData !== undefined && event.conferenceData === undefined) {
      const createRequest = isObject(patch.conferenceData) ? patch.conferenceData.createRequest : undefined
      if (createRequest !== undefined) {
        if (!isObject(createRequest) || typeof createRequest.requestId !== "string" || createRequest.requestId === "") {
          return googleError(400, "Invalid conference create request.", "invalid")
        }
        const key = isObject(createRequest.conferenceSolutionKey) ? createRequest.conferenceSolutionKey.type : undefined
        if (key !== "hangoutsMeet") return googleError(400, "Invalid conference type value.", "invalid")
        const data = conference(createRequest.requestId, key)
        next.conferenceData = data
        if (withHangoutLink) next.hangoutLink = data.entryPoints.find((entry) => entry.entryPointType === "video")!.uri
        changed = true
      }
    }
    if (changed) {
      next.etag = nextEtag()
      next.updated = googleTime()
    }
    const updated = next as CalendarEvent
    events.set(event.id, updated)
    return jsonAnswer(200, updated)
  }

  const handle = (incoming: Incoming): Answer => {
    const token = bearer(incoming.headers)
    const grant = token === undefined ? undefined : options.verifyToken(token)
    if (grant === undefined) {
      return jsonAnswer(
        401,
        {
          error: {
            code: 401,
            message:
              "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            status: "UNAUTHENTICATED"
          }
        },
        { "www-authenticate": 'Bearer realm="https://accounts.google.com/", error="invalid_token"' }
      )
    }
    const needs = (any: ReadonlyArray<string>) => any.some((scope) => grant.scopes.includes(scope))
    const denied = () =>
      jsonAnswer(403, {
        error: {
          code: 403,
          message: "Request had insufficient authentication scopes.",
          errors: [{ message: "Insufficient Permission", domain: "global", reason: "insufficientPermissions" }],
          status: "PERMISSION_DENIED"
        }
      })
    const notFound = () => googleError(404, "Not Found", "notFound")
    const match = /^\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)$/.exec(incoming.url.pathname)
    if (match === null || (incoming.method !== "GET" && incoming.method !== "PATCH")) return notFound()
    if (!needs(incoming.method === "GET" ? READ_SCOPES : WRITE_SCOPES)) return denied()
    let calendarId: string
    let id: string
    try {
      calendarId = decodeURIComponent(match[1]!)
      id = decodeURIComponent(match[2]!)
    } catch {
      return notFound()
    }
    const event = calendarId === "primary" ? events.get(id) : undefined
    if (event === undefined) return notFound()
    if (incoming.method === "GET") return jsonAnswer(200, event)
    patchCounts.set(id, (patchCounts.get(id) ?? 0) + 1)
    return patchEvent(incoming, event)
  }

  const served = await serve("", handle, (status) => ({
    error: { code: status, message: `The fake was told to answer ${status}.`, status: googleStatus(status) }
  }))

  return {
    url: served.origin,
    requests: served.requests,
    setMode: served.setMode,
    close: served.close,
    addEvent: (input) => {
      const id = input.id ?? eventId()
      const now = googleTime()
      const moment = (value: string) => (input.allDay === true ? { date: value.slice(0, 10) } : { dateTime: value, timeZone: input.timeZone ?? "UTC" })
      const event: CalendarEvent = {
        kind: "calendar#event",
        etag: nextEtag(),
        id,
        status: "confirmed",
        htmlLink: `https://calendar.example/event?eid=${Buffer.from(id).toString("base64url")}`,
        created: now,
        updated: now,
        summary: input.summary,
        creator: { email: owner, self: true },
        organizer: { email: owner, self: true },
        start: moment(input.start),
        end: moment(input.end),
        iCalUID: `${id}@google.com`,
        sequence: 0,
        ...(input.attendees === undefined ? {} : { attendees: input.attendees }),
        reminders: { useDefault: true },
        eventType: "default"
      }
      events.set(id, event)
      return id
    },
    events: () => [...events.values()],
    patches: (id) => patchCounts.get(id) ?? 0
  }
}
