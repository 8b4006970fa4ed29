/**
 * suite-a's mail through Microsoft Graph (pure): the draft request `POST me/messages` takes, the message read with
 * its body as text, and a Graph message mapped to the API's mail message (missing values become empty strings,
 * false or null; recipients without an address are dropped; the body is cut at 200000 characters).
 */
import { type CreateMailDraftRequest, MAIL_BODY_MAX, MailMessage } from "@orgplane/schema"

/** The members a read selects. */
export const MESSAGE_SELECT = "id,conversationId,subject,receivedDateTime,bodyPreview,body,from,toRecipients,ccRecipients,webLink,hasAttachments"

/** Asks Graph for the body as plain text. */
export const PREFER_TEXT = { prefer: "outlook.body-content-type=\"text\"" } as const

const recipients = (addresses: ReadonlyArray<string> | undefined) => (addresses ?? []).map((address) => ({ emailAddress: { address } }))

/** The body of `POST me/messages`: a draft, never sent. cc and bcc are always present, possibly empty. */
export const draftBody = (request: CreateMailDraftRequest) => ({
  subject: request.subject,
  body: { contentType: "Text", content: request.body ?? "" },
  toRecipients: recipients(request.to),
  ccRecipients: recipients(request.cc),
  bccRecipients: recipients(request.bcc)
})

/** `<base>/me/messages/<id>?$select=…`, the id encoded as one path segment. */
export const messageUrl = (apiBaseUrl: string, id: string) =>
  `${apiBaseUrl.replace(/\/+$/, "")}/me/messages/${encodeURIComponent(id)}?$select=${MESSAGE_SELECT}`

export const draftsUrl = (apiBaseUrl: string) => `${apiBaseUrl.replace(/\/+$/, "")}/me/messages`

const text = (value: unknown) => (typeof value === "string" ? value : "")
const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

/** `{emailAddress: {name, address}}` → `{name, address}`, or undefined without an address. */
const recipient = (value: unknown) => {
  const email = record(record(value).emailAddress)
  const address = text(email.address)
  return address === "" ? undefined : { name: text(email.name), address }
}

const recipientList = (value: unknown) =>
  (Array.isArray(value) ? value : []).map(recipient).filter((entry): entry is { name: string; address: string } => entry !== undefined)

/** A Graph message as the API answers it. */
export const toMailMessage = (graph: Record<string, unknown>): MailMessage => {
  const body = record(graph.body)
  const content = text(body.content)
  const truncated = content.length > MAIL_BODY_MAX
  return new MailMessage({
    id: text(graph.id),
    conversationId: text(graph.conversationId),
    subject: text(graph.subject),
    receivedDateTime: text(graph.receivedDateTime),
    preview: text(graph.bodyPreview),
    from: recipient(graph.from) ?? null,
    to: recipientList(graph.toRecipients),
    webLink: text(graph.webLink),
    hasAttachments: graph.hasAttachments === true,
    cc: recipientList(graph.ccRecipients),
    body: truncated ? content.slice(0, MAIL_BODY_MAX) : content,
    bodyContentType: text(body.contentType),
    bodyTruncated: truncated
  })
}
