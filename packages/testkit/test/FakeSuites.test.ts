/**
 * The suite fakes speak Microsoft Graph (mail) and Google Calendar: driven by plain fetch, with tokens issued by a
 * `FakeOAuth` (authorization code + PKCE, by hand) or a `verifyToken` stub. No orgplane server and no database here.
 */
import * as NodeCrypto from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { FakeOAuth, FakeSuites, Wait } from "../src/index.js"

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})

const MAIL_RW = "https://graph.microsoft.com/Mail.ReadWrite"
const CAL = "https://www.googleapis.com/auth/calendar"

/** A token from a FakeOAuth, through the authorization-code flow with PKCE. */
const issueToken = async (oauth: FakeOAuth.FakeOAuth, scopes: ReadonlyArray<string>) => {
  const redirect = "http://127.0.0.1:9/callback"
  const clientId = `suite-${NodeCrypto.randomUUID()}`
  oauth.addClient({ client_id: clientId, redirect_uris: [redirect], token_endpoint_auth_method: "none" })
  const verifier = NodeCrypto.randomBytes(32).toString("base64url")
  const authorize = new URL(`${oauth.url}/authorize`)
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: NodeCrypto.createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    scope: scopes.join(" ")
  }).toString()
  const redirected = await fetch(authorize, { redirect: "manual" })
  const code = new URL(redirected.headers.get("location")!).searchParams.get("code")!
  const answer = await fetch(`${oauth.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirect, client_id: clientId, code_verifier: verifier })
  })
  return ((await answer.json()) as { access_token: string }).access_token
}

const startOAuth = async () => {
  const oauth = await FakeOAuth.start({
    scopesSupported: [MAIL_RW, "Mail.Read", "Mail.ReadWrite", "User.Read", `${CAL}.events`, `${CAL}.readonly`, CAL]
  })
  closers.push(oauth.close)
  return oauth
}

/** A stub: token "t:<scope> <scope>" grants those scopes; anything else is unknown. */
const stubVerify: FakeSuites.VerifyToken = (token) => (token.startsWith("t:") ? { scopes: token.slice(2).split(" ").filter((s) => s !== "") } : undefined)

const startMail = async (options: Partial<FakeSuites.MailOptions> = {}) => {
  const fake = await FakeSuites.startMail({ verifyToken: stubVerify, ...options })
  closers.push(fake.close)
  return fake
}

const startCalendar = async (options: Partial<FakeSuites.CalendarOptions> = {}) => {
  const fake = await FakeSuites.startCalendar({ verifyToken: stubVerify, ...options })
  closers.push(fake.close)
  return fake
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` })

const postDraft = (url: string, token: string, body: unknown) =>
  fetch(`${url}/me/messages`, { method: "POST", headers: { ...auth(token), "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) })

const draftBody = {
  subject: "Quarterly numbers",
  body: { contentType: "Text", content: "Hello <team>,\nthe numbers are in." },
  toRecipients: [{ emailAddress: { address: "bob@contoso.example", name: "Bob" } }, { emailAddress: { address: "carol@contoso.example" } }],
  ccRecipients: [],
  bccRecipients: [{ emailAddress: { address: "audit@contoso.example" } }]
}

/** A member of a JSON answer at `path` (undefined where a step is missing): the fakes answer third parties' documents. */
const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>((member, key) => (typeof member === "object" && member !== null ? Reflect.get(member, key) : undefined), value)

/** A member that must be a string (an id, a URL). */
const text = (value: unknown, ...path: ReadonlyArray<string | number>): string => {
  const found = at(value, ...path)
  if (typeof found !== "string") throw new Error(`expected a string at ${path.join(".")}, got ${JSON.stringify(found)}`)
  return found
}

/** An object's member names, sorted (anything else as it is, to fail the comparison). */
const keysOf = (value: unknown) => (typeof value === "object" && value !== null ? Object.keys(value).sort() : value)

const json = (response: Response): Promise<unknown> => response.json()

describe("FakeSuites mail (Microsoft Graph)", () => {
  it("creates a draft with a FakeOAuth token and answers the Graph message resource", async () => {
    const oauth = await startOAuth()
    const mail = await startMail({ verifyToken: oauth.verifyAccessToken })
    expect(mail.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\.0$/)
    const token = await issueToken(oauth, [MAIL_RW])
    const answer = await postDraft(mail.url, token, draftBody)
    expect(answer.status).toBe(201)
    const created = await json(answer)
    expect(at(created, "@odata.context")).toContain("/messages/$entity")
    expect(at(created, "@odata.etag")).toMatch(/^W\/"/)
    expect(at(created, "id")).toMatch(/^AAMkAD[A-Za-z0-9_-]*-[A-Za-z0-9_-]*_[A-Za-z0-9_-]*=$/)
    expect(at(created, "webLink")).toBe(`https://outlook.example/owa/?ItemID=${encodeURIComponent(text(created, "id"))}&exvsurl=1&viewmodel=ReadMessageItem`)
    expect(created).toMatchObject({
      subject: "Quarterly numbers",
      bodyPreview: "Hello <team>,\nthe numbers are in.",
      importance: "normal",
      isRead: true,
      isDraft: true,
      hasAttachments: false,
      body: { contentType: "text", content: "Hello <team>,\nthe numbers are in." },
      sender: { emailAddress: { name: "Ada Member", address: "ada@contoso.example" } },
      from: { emailAddress: { name: "Ada Member", address: "ada@contoso.example" } },
      toRecipients: [{ emailAddress: { address: "bob@contoso.example", name: "Bob" } }, { emailAddress: { address: "carol@contoso.example", name: "carol@contoso.example" } }],
      ccRecipients: [],
      bccRecipients: [{ emailAddress: { address: "audit@contoso.example", name: "audit@contoso.example" } }]
    })
    for (const member of ["createdDateTime", "lastModifiedDateTime", "receivedDateTime", "sentDateTime", "conversationId"]) {
      expect(typeof at(created, member)).toBe("string")
    }
    expect(mail.drafts().map((d) => d.id)).toEqual([at(created, "id")])
    expect(mail.messages()).toHaveLength(1)
    expect(mail.requests[0]).toMatchObject({ method: "POST", path: "/v1.0/me/messages", status: 201, body: JSON.stringify(draftBody) })
    expect(mail.requests[0]!.headers.authorization).toBe(`Bearer ${token}`)

    // An html draft keeps html; its text version drops the markup.
    const html = await postDraft(mail.url, token, { subject: "Html", body: { contentType: "HTML", content: "<p>Hi &amp; bye</p>" } })
    expect(at(await json(html), "body")).toEqual({ contentType: "html", content: "<p>Hi &amp; bye</p>" })
    expect(mail.drafts()[1]!.text).toBe("Hi & bye")

    // Expired → 401.
    oauth.expireAccessTokens()
    const expired = await postDraft(mail.url, token, draftBody)
    expect(expired.status).toBe(401)
    expect(await expired.json()).toMatchObject({ error: { code: "InvalidAuthenticationToken", message: "Access token has expired or is not yet valid." } })
    expect(mail.drafts()).toHaveLength(2)
  })

  it("reads a message by URL-encoded id: html by default, text with Prefer, $select", async () => {
    const mail = await startMail({ mailbox: { name: "Zed", address: "zed@contoso.example" } })
    const id = mail.addMessage({
      subject: "Lunch?",
      text: "Shall we <eat>?\nNoon.",
      from: { name: "Grace", address: "grace@fabrikam.example" },
      to: [{ name: "Zed", address: "zed@contoso.example" }, { name: "No address", address: undefined }],
      cc: [{ address: "dan@contoso.example" }],
      hasAttachments: true,
      receivedDateTime: "2026-11-20T09:30:00Z",
      conversationId: "conv-1"
    })
    const token = "t:Mail.Read"
    const url = `${mail.url}/me/messages/${encodeURIComponent(id)}`

    const plain = await fetch(url, { headers: auth(token) })
    expect(plain.status).toBe(200)
    expect(plain.headers.get("preference-applied")).toBeNull()
    const html = await json(plain)
    expect(at(html, "body", "contentType")).toBe("html")
    expect(at(html, "body", "content")).toContain("Shall we &lt;eat&gt;?<br>")
    expect(html).toMatchObject({
      id,
      subject: "Lunch?",
      hasAttachments: true,
      isDraft: false,
      receivedDateTime: "2026-11-20T09:30:00Z",
      conversationId: "conv-1",
      bodyPreview: "Shall we <eat>?\nNoon.",
      from: { emailAddress: { name: "Grace", address: "grace@fabrikam.example" } },
      sender: { emailAddress: { name: "Grace", address: "grace@fabrikam.example" } },
      toRecipients: [{ emailAddress: { name: "Zed", address: "zed@contoso.example" } }, { emailAddress: { name: "No address" } }],
      ccRecipients: [{ emailAddress: { name: "dan@contoso.example", address: "dan@contoso.example" } }]
    })
    expect(at(html, "@odata.context")).toContain("zed%40contoso.example")

    const asText = await fetch(url, { headers: { ...auth(token), prefer: 'outlook.body-content-type="text"' } })
    expect(asText.headers.get("preference-applied")).toBe('outlook.body-content-type="text"')
    expect(at(await json(asText), "body")).toEqual({ contentType: "text", content: "Shall we <eat>?\nNoon." })

    const selected = await fetch(`${url}?$select=subject,body,from`, { headers: { ...auth(token), prefer: 'IdType="ImmutableId", outlook.body-content-type="text"' } })
    const narrow = await json(selected)
    expect(keysOf(narrow)).toEqual(["@odata.context", "@odata.etag", "body", "from", "subject"])
    expect(at(narrow, "body")).toEqual({ contentType: "text", content: "Shall we <eat>?\nNoon." })
    expect(at(narrow, "@odata.context")).toContain("/messages(subject,body,from)/$entity")

    const encodedSelect = await fetch(`${url}?%24select=id`, { headers: auth(token) })
    expect(keysOf(await json(encodedSelect))).toEqual(["@odata.context", "@odata.etag", "id"])

    const badSelect = await fetch(`${url}?$select=subject,nope`, { headers: auth(token) })
    expect(badSelect.status).toBe(400)
    expect(at(await json(badSelect), "error", "code")).toBe("RequestBroker--ParseUri")

    // A message without a sender; an html message answers its html, and text with Prefer.
    const other = mail.addMessage({ subject: "Html", text: "Bold move", html: "<b>Bold</b> move", from: null })
    const otherUrl = `${mail.url}/me/messages/${encodeURIComponent(other)}`
    const otherHtml = await json(await fetch(otherUrl, { headers: auth(token) }))
    expect(otherHtml).toMatchObject({ from: null, sender: null, body: { contentType: "html", content: "<b>Bold</b> move" } })
    const otherText = await json(await fetch(otherUrl, { headers: { ...auth(token), prefer: 'outlook.body-content-type="text"' } }))
    expect(at(otherText, "body")).toEqual({ contentType: "text", content: "Bold move" })

    const missing = await fetch(`${mail.url}/me/messages/${encodeURIComponent("AAMkADnope=")}`, { headers: auth(token) })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { code: "ErrorItemNotFound", message: "The specified object was not found in the store." } })
    expect(mail.drafts()).toEqual([])
    expect(mail.messages().map((m) => m.id)).toEqual([id, other])
  })

  it("401 without or with an unknown token, 403 without the scope (both scope forms), 400 on bad bodies, 404 elsewhere", async () => {
    const mail = await startMail()
    const id = mail.addMessage({ subject: "s", text: "t" })
    const get = (headers: Record<string, string>) => fetch(`${mail.url}/me/messages/${encodeURIComponent(id)}`, { headers })

    const none = await get({})
    expect(none.status).toBe(401)
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/)
    expect(await none.json()).toMatchObject({ error: { code: "InvalidAuthenticationToken" } })
    expect((await get(auth("unknown"))).status).toBe(401)
    expect((await get({ authorization: "Basic dXNlcjpwdw==" })).status).toBe(401)

    const forbidden = await get(auth("t:User.Read"))
    expect(forbidden.status).toBe(403)
    expect(await forbidden.json()).toMatchObject({ error: { code: "ErrorAccessDenied", message: "Access is denied. Check credentials and try again." } })
    expect((await get(auth("t:https://graph.microsoft.com/Mail.Read"))).status).toBe(200)
    expect((await get(auth("t:Mail.ReadWrite"))).status).toBe(200)
    expect((await get(auth("t:mail.read"))).status).toBe(200)

    // Mail.Read cannot create drafts; either form of Mail.ReadWrite can.
    expect((await postDraft(mail.url, "t:Mail.Read", draftBody)).status).toBe(403)
    expect((await postDraft(mail.url, "t:Mail.ReadWrite", draftBody)).status).toBe(201)
    expect((await postDraft(mail.url, `t:${MAIL_RW}`, draftBody)).status).toBe(201)
    expect(mail.drafts()).toHaveLength(2)

    const notJson = await postDraft(mail.url, "t:Mail.ReadWrite", "{not json")
    expect(notJson.status).toBe(400)
    expect(at(await json(notJson), "error", "code")).toBe("RequestBodyRead")
    const noSubject = await postDraft(mail.url, "t:Mail.ReadWrite", { body: { contentType: "text", content: "x" } })
    expect(noSubject.status).toBe(400)
    expect(at(await json(noSubject), "error", "code")).toBe("RequestBodyRead")
    const badRecipient = await postDraft(mail.url, "t:Mail.ReadWrite", { subject: "x", toRecipients: [{ emailAddress: { name: "nobody" } }] })
    expect(badRecipient.status).toBe(400)
    expect(at(await json(badRecipient), "error", "code")).toBe("ErrorInvalidRecipients")
    expect(mail.drafts()).toHaveLength(2)

    for (const [method, path] of [["GET", "/me/messages"], ["DELETE", `/me/messages/${encodeURIComponent(id)}`], ["GET", "/me/events/x"]] as const) {
      const other = await fetch(`${mail.url}${path}`, { method, headers: auth("t:Mail.ReadWrite") })
      expect(other.status).toBe(404)
      expect(at(await json(other), "error", "code")).toBe("ResourceNotFound")
    }
  })
})

describe("FakeSuites calendar (Google Calendar)", () => {
  const eventUrl = (url: string, id: string, query = "") => `${url}/calendar/v3/calendars/primary/events/${encodeURIComponent(id)}${query}`

  const patch = (url: string, token: string, body: unknown, signal?: AbortSignal) =>
    fetch(url, { method: "PATCH", headers: { ...auth(token), "content-type": "application/json" }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }) })

  const meet = (requestId: string) => ({ conferenceData: { createRequest: { requestId, conferenceSolutionKey: { type: "hangoutsMeet" } } } })

  it("answers events; conferenceData only with conferenceDataVersion=1; one conference per requestId; phone entry first", async () => {
    const oauth = await startOAuth()
    const calendar = await startCalendar({ verifyToken: oauth.verifyAccessToken })
    expect(calendar.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const token = await issueToken(oauth, [`${CAL}.events`])
    const id = calendar.addEvent({ summary: "Planning", start: "2026-12-01T10:00:00Z", end: "2026-12-01T11:00:00Z" })
    const allDay = calendar.addEvent({ summary: "Offsite", start: "2026-12-02", end: "2026-12-03", allDay: true, id: "offsite2026" })
    expect(allDay).toBe("offsite2026")

    const got = await fetch(eventUrl(calendar.url, id), { headers: auth(token) })
    expect(got.status).toBe(200)
    const event = await json(got)
    expect(event).toMatchObject({
      kind: "calendar#event",
      id,
      status: "confirmed",
      htmlLink: `https://calendar.example/event?eid=${Buffer.from(id).toString("base64url")}`,
      summary: "Planning",
      start: { dateTime: "2026-12-01T10:00:00Z", timeZone: "UTC" },
      end: { dateTime: "2026-12-01T11:00:00Z", timeZone: "UTC" },
      organizer: { email: "ada@contoso.example" }
    })
    expect(typeof at(event, "etag")).toBe("string")
    expect(at(event, "conferenceData")).toBeUndefined()
    expect(at(event, "hangoutLink")).toBeUndefined()
    const offsite = await json(await fetch(eventUrl(calendar.url, allDay), { headers: auth(token) }))
    expect(at(offsite, "start")).toEqual({ date: "2026-12-02" })
    expect(at(offsite, "end")).toEqual({ date: "2026-12-03" })

    // Without conferenceDataVersion=1 the conference request is ignored: the event comes back unchanged.
    const ignored = await patch(eventUrl(calendar.url, id), token, meet("req-1"))
    expect(ignored.status).toBe(200)
    expect(await ignored.json()).toEqual(event)
    const ignored0 = await patch(eventUrl(calendar.url, id, "?conferenceDataVersion=0"), token, meet("req-1"))
    expect(await ignored0.json()).toEqual(event)
    expect(calendar.patches(id)).toBe(2)

    const created = await patch(eventUrl(calendar.url, id, "?conferenceDataVersion=1"), token, meet("req-1"))
    expect(created.status).toBe(200)
    const withMeet = await json(created)
    expect(at(withMeet, "etag")).not.toBe(at(event, "etag"))
    expect(at(withMeet, "conferenceData", "createRequest")).toEqual({ requestId: "req-1", conferenceSolutionKey: { type: "hangoutsMeet" }, status: { statusCode: "success" } })
    expect(at(withMeet, "conferenceData", "conferenceSolution")).toMatchObject({ key: { type: "hangoutsMeet" }, name: "Google Meet" })
    const entryPoints = at(withMeet, "conferenceData", "entryPoints")
    expect(Array.isArray(entryPoints)).toBe(true)
    const listed: ReadonlyArray<unknown> = Array.isArray(entryPoints) ? entryPoints : []
    expect(listed[0]).toMatchObject({ entryPointType: "phone", uri: "tel:+1-555-0100" })
    const video = listed.find((entry) => at(entry, "entryPointType") === "video")
    const videoUri = text(video, "uri")
    expect(videoUri).toMatch(/^https:\/\/meet\.example\/[a-z]{3}-[a-z]{4}-[a-z]{3}$/)
    expect(at(video, "label")).toBe(videoUri.replace("https://", ""))
    expect(at(withMeet, "conferenceData", "conferenceId")).toBe(videoUri.slice("https://meet.example/".length))
    expect(at(withMeet, "hangoutLink")).toBe(videoUri)
    expect(calendar.patches(id)).toBe(3)
    expect(calendar.events().find((e) => e.id === id)!.conferenceData).toEqual(at(withMeet, "conferenceData"))

    // Once it has conferenceData, the event keeps it (a new requestId changes nothing); the same requestId on
    // another event answers the same conference.
    const again = await json(await patch(eventUrl(calendar.url, id, "?conferenceDataVersion=1"), token, meet("req-2")))
    expect(at(again, "conferenceData")).toEqual(at(withMeet, "conferenceData"))
    expect(at(again, "etag")).toBe(at(withMeet, "etag"))
    const same = await json(await patch(eventUrl(calendar.url, allDay, "?conferenceDataVersion=1"), token, meet("req-1")))
    expect(at(same, "conferenceData")).toEqual(at(withMeet, "conferenceData"))

    // Other members patch shallowly; read-only ones are left alone.
    const renamed = await json(await patch(eventUrl(calendar.url, id), token, { summary: "Planning (moved)", id: "other", location: "Room 1" }))
    expect(renamed).toMatchObject({ id, summary: "Planning (moved)", location: "Room 1", conferenceData: at(withMeet, "conferenceData") })

    const wrongType = await patch(eventUrl(calendar.url, calendar.addEvent({ summary: "x", start: "2026-12-05T10:00:00Z", end: "2026-12-05T11:00:00Z" }), "?conferenceDataVersion=1"), token, {
      conferenceData: { createRequest: { requestId: "r", conferenceSolutionKey: { type: "eventHangout" } } }
    })
    expect(wrongType.status).toBe(400)

    const unknown = await fetch(eventUrl(calendar.url, "nope"), { headers: auth(token) })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: { code: 404, message: "Not Found", errors: [{ domain: "global", reason: "notFound", message: "Not Found" }] } })
    expect((await patch(eventUrl(calendar.url, "nope", "?conferenceDataVersion=1"), token, meet("z"))).status).toBe(404)
    expect(calendar.patches("nope")).toBe(0)
    expect((await fetch(`${calendar.url}/calendar/v3/calendars/other/events/${id}`, { headers: auth(token) })).status).toBe(404)

    oauth.expireAccessTokens()
    const expired = await fetch(eventUrl(calendar.url, id), { headers: auth(token) })
    expect(expired.status).toBe(401)
    expect(await expired.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } })
  })

  it("no hangoutLink when told; scopes: read-only tokens read but cannot patch", async () => {
    const calendar = await startCalendar({ hangoutLink: false })
    const id = calendar.addEvent({ summary: "Sync", start: "2026-12-01T10:00:00+01:00", end: "2026-12-01T10:30:00+01:00", timeZone: "Europe/Berlin" })
    const url = eventUrl(calendar.url, id)

    expect((await fetch(url)).status).toBe(401)
    expect((await fetch(url, { headers: auth("unknown") })).status).toBe(401)
    for (const scope of [`${CAL}.readonly`, `${CAL}.events.readonly`, `${CAL}.events`, CAL]) {
      expect((await fetch(url, { headers: auth(`t:${scope}`) })).status).toBe(200)
    }
    const denied = await fetch(url, { headers: auth("t:https://www.googleapis.com/auth/drive") })
    expect(denied.status).toBe(403)
    expect(await denied.json()).toMatchObject({
      error: { code: 403, message: "Request had insufficient authentication scopes.", status: "PERMISSION_DENIED", errors: [{ reason: "insufficientPermissions" }] }
    })
    for (const scope of [`${CAL}.readonly`, `${CAL}.events.readonly`]) {
      expect((await patch(`${url}?conferenceDataVersion=1`, `t:${scope}`, meet("a"))).status).toBe(403)
    }
    expect(calendar.patches(id)).toBe(0)
    const done = await json(await patch(`${url}?conferenceDataVersion=1`, `t:${CAL}`, meet("a")))
    expect(at(done, "conferenceData", "conferenceId")).toMatch(/^[a-z]{3}-[a-z]{4}-[a-z]{3}$/)
    expect(at(done, "hangoutLink")).toBeUndefined()
    expect(at(done, "start")).toEqual({ dateTime: "2026-12-01T10:00:00+01:00", timeZone: "Europe/Berlin" })
  })

  it("resetAfterWrite patches the event, then drops the connection", async () => {
    const calendar = await startCalendar()
    const id = calendar.addEvent({ summary: "Sync", start: "2026-12-01T10:00:00Z", end: "2026-12-01T10:30:00Z" })
    calendar.setMode({ _tag: "resetAfterWrite" }, { times: 1 })
    await expect(patch(eventUrl(calendar.url, id, "?conferenceDataVersion=1"), `t:${CAL}.events`, meet("r1"))).rejects.toThrow()
    expect(calendar.patches(id)).toBe(1)
    const stored = calendar.events()[0]!
    expect(stored.conferenceData?.createRequest.requestId).toBe("r1")
    expect(calendar.requests.at(-1)!.status).toBeNull()
    // The retry with the same requestId finds the same conference.
    const retried = await json(await patch(eventUrl(calendar.url, id, "?conferenceDataVersion=1"), `t:${CAL}.events`, meet("r1")))
    expect(at(retried, "conferenceData")).toEqual(stored.conferenceData)
    expect(calendar.patches(id)).toBe(2)
  })
})

describe("FakeSuites modes", () => {
  const read = async (mail: FakeSuites.FakeMail, init: RequestInit = {}) => {
    const id = mail.messages()[0]?.id ?? mail.addMessage({ subject: "s", text: "t" })
    return fetch(`${mail.url}/me/messages/${encodeURIComponent(id)}`, { ...init, headers: auth("t:Mail.Read") })
  }

  it("status: the given status, headers and body, for `times` requests, then ok", async () => {
    const mail = await startMail()
    mail.setMode({ _tag: "status", status: 429, headers: { "retry-after": "7" } }, { times: 2 })
    for (let i = 0; i < 2; i++) {
      const limited = await read(mail)
      expect(limited.status).toBe(429)
      expect(limited.headers.get("retry-after")).toBe("7")
      expect(await limited.json()).toMatchObject({ error: { code: "TooManyRequests" } })
    }
    expect((await read(mail)).status).toBe(200)

    mail.setMode({ _tag: "status", status: 503, body: "upstream down", headers: { "content-type": "text/plain" } })
    for (let i = 0; i < 3; i++) {
      const down = await read(mail)
      expect(down.status).toBe(503)
      expect(down.headers.get("content-type")).toBe("text/plain")
      expect(await down.text()).toBe("upstream down")
    }
    mail.setMode({ _tag: "ok" })
    expect((await read(mail)).status).toBe(200)
    expect(mail.requests.map((r) => r.status)).toEqual([429, 429, 200, 503, 503, 503, 200])

    const calendar = await startCalendar()
    calendar.setMode({ _tag: "status", status: 500 }, { times: 1 })
    const failed = await fetch(`${calendar.url}/calendar/v3/calendars/primary/events/x`)
    expect(failed.status).toBe(500)
    expect(await failed.json()).toMatchObject({ error: { code: 500, status: "INTERNAL" } })
    expect((await fetch(`${calendar.url}/calendar/v3/calendars/primary/events/x`)).status).toBe(401)
  })

  it("slow answers normally after the delay", async () => {
    const mail = await startMail()
    mail.setMode({ _tag: "slow", ms: 10 }, { times: 1 })
    expect((await read(mail)).status).toBe(200)
    // A client deadline shorter than the delay expires first, the request unanswered; with `times: 1` the next one
    // is answered without the delay (with it, the test would wait out the minute and time out).
    mail.setMode({ _tag: "slow", ms: 60_000 }, { times: 1 })
    await expect(read(mail, { signal: AbortSignal.timeout(200) })).rejects.toThrow()
    expect(mail.requests.at(-1)!.status).toBeNull()
    expect((await read(mail)).status).toBe(200)
  })

  it("hang never answers; close does not hang", async () => {
    const mail = await startMail()
    mail.setMode({ _tag: "hang" })
    await expect(read(mail, { signal: AbortSignal.timeout(300) })).rejects.toThrow()
    expect(mail.requests.at(-1)!.status).toBeNull()
    // A second hanging request stays open while the fake closes (a close that waited for it would never end).
    const seen = mail.requests.length
    const pending = read(mail).then(
      () => "answered",
      () => "failed"
    )
    await Wait.until(() => mail.requests.length > seen, "the second request")
    await mail.close()
    expect(await pending).toBe("failed")
  })

  it("oversized answers 200 with exactly that many bytes of JSON-looking text", async () => {
    const mail = await startMail()
    mail.setMode({ _tag: "oversized", bytes: 5 * 1024 * 1024 }, { times: 1 })
    const answer = await read(mail)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("application/json")
    const body = await answer.text()
    expect(Buffer.byteLength(body)).toBe(5 * 1024 * 1024)
    expect(body.startsWith('{"value":"')).toBe(true)
    expect(body.endsWith('"}')).toBe(true)
  })

  it("invalidJson answers 200 application/json that does not parse", async () => {
    const mail = await startMail()
    mail.setMode({ _tag: "invalidJson" })
    const answer = await read(mail)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toContain("application/json")
    await expect(answer.json()).rejects.toThrow()
    expect(await (await read(mail)).text()).toBe('{"id":')
  })

  it("resetAfterWrite stores the draft, then drops the connection; the next request is answered", async () => {
    const mail = await startMail()
    mail.setMode({ _tag: "resetAfterWrite" }, { times: 1 })
    await expect(postDraft(mail.url, "t:Mail.ReadWrite", draftBody)).rejects.toThrow()
    expect(mail.drafts()).toHaveLength(1)
    expect(mail.drafts()[0]).toMatchObject({ subject: "Quarterly numbers", isDraft: true })
    expect(mail.requests[0]!.status).toBeNull()
    const next = await postDraft(mail.url, "t:Mail.ReadWrite", draftBody)
    expect(next.status).toBe(201)
    expect(mail.drafts()).toHaveLength(2)
  })
})
