/**
 * `orgplane mail draft | read`: the mail suite (suite-a) as yourself, through your own connection
 * (`orgplane connections suite-a connect`). A draft is only ever created, never sent.
 */
import {
  CapabilitiesApi,
  CreateMailDraftRequest,
  Email,
  MAIL_BODY_MAX,
  MailDraftResult,
  type MailMessage,
  MailMessageId,
  MailMessageResult,
  MailRecipient
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const Draft = CreateMailDraftRequest.fields

/** A body of at most MAIL_BODY_MAX characters takes at most four bytes a character. */
const MAX_BODY_BYTES = MAIL_BODY_MAX * 4

const readBody = (path: string) =>
  Effect.mapError(
    Files.readFileOrStdin(path, MAX_BODY_BYTES, `${MAX_BODY_BYTES} bytes`),
    (message) => new UsageError({ message: `--body-file: ${message}` })
  )

/** The request checked with the API's own schema; a problem names the flag it came from. */
const flagOf: Record<string, string> = { to: "--to", cc: "--cc", bcc: "--bcc", subject: "--subject", body: "--body-file" }
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()
const checked = (payload: unknown) =>
  Schema.decodeUnknownEffect(CreateMailDraftRequest)(payload).pipe(
    Effect.mapError((error) => {
      const [issue] = formatIssue(error.issue).issues
      const first = issue === undefined ? undefined : {
        message: issue.message,
        path: (issue.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
      }
      const key = String(first?.path[0] ?? "")
      const message = first?.message ?? "is not valid"
      return new UsageError({
        message: key === "to" && first?.path.length === 1 && /at least/i.test(message)
          ? "give at least one recipient with --to"
          : `${flagOf[key] ?? key}: ${message}`
      })
    })
  )

const person = (recipient: typeof MailRecipient.Type) =>
  recipient.name === "" || recipient.name === recipient.address ? recipient.address : `${recipient.name} <${recipient.address}>`

const people = (recipients: ReadonlyArray<typeof MailRecipient.Type>) => recipients.length === 0 ? "-" : recipients.map(person).join(", ")

/** Each address is checked as it is parsed; how many, with the whole request (see `checked`). */
const recipientsFlag = (name: string, description: string) =>
  Inputs.repeatedText(name, { placeholder: "<address>", description, schema: Schema.Array(Email) })

export const draft = Commands.endpoint("draft", {
  examples: [
    ["Draft a mail to one person.", ["mail", "draft", "--to", "ada@example.com", "--subject", "Weekly report"]],
  ],
  summary: "Create a draft in your mailbox (never sent): recipients, a subject and a plain-text body from a file or standard input.",
  details: [
    "Acts through your own suite-a connection ('orgplane connections suite-a connect'); needs the mailDraft feature. The draft stays in your Drafts folder until you send or delete it there."
  ],
  inputs: {
    to: recipientsFlag("to", "A recipient's address (repeat it; 1 to 50)."),
    cc: recipientsFlag("cc", "A copy recipient's address (repeat it; at most 50)."),
    bcc: recipientsFlag("bcc", "A blind-copy recipient's address (repeat it; at most 50)."),
    subject: Inputs.text("subject", { placeholder: "<subject>", schema: Draft.subject }),
    bodyFile: Inputs.optional(Inputs.text("body-file", {
      placeholder: "<file>",
      description: `A file holding the plain-text body (at most ${MAIL_BODY_MAX} characters), or - for standard input. Default: empty.`
    }))
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const body = Option.isSome(input.bodyFile) ? yield* readBody(input.bodyFile.value) : undefined
      const payload = yield* checked({
        to: input.to,
        subject: input.subject,
        ...(body === undefined ? {} : { body }),
        ...(input.cc.length > 0 ? { cc: input.cc } : {}),
        ...(input.bcc.length > 0 ? { bcc: input.bcc } : {})
      })
      return yield* client.capabilities.createMailDraft({ payload })
    }),
  output: MailDraftResult,
  human: ({ draft }, input) =>
    [
      `Created draft ${draft.id} (not sent).`,
      Output.fields([
        ["  subject", draft.subject],
        ["  to", people(draft.to)],
        ["  cc", people(draft.cc)],
        ...(input.bcc.length > 0 ? [["  bcc", input.bcc.join(", ")] as const] : []),
        ["  link", draft.webLink]
      ])
    ].join("\n")
})

const headers = (message: MailMessage) =>
  Output.fields([
    ["from", message.from === null ? "-" : person(message.from)],
    ["to", people(message.to)],
    ["cc", people(message.cc)],
    ["subject", message.subject],
    ["received", message.receivedDateTime],
    ...(message.hasAttachments ? [["attachments", "yes (not shown)"] as const] : [])
  ])

export const read = Commands.endpoint("read", {
  summary: "Read a message of your mailbox: its headers, then its body as plain text.",
  details: ["Acts through your own suite-a connection; needs the mailRead feature. A body longer than 200000 characters is cut, and says so."],
  inputs: {
    messageId: Inputs.argument("messageId", { schema: MailMessageId, description: "The suite's message id." })
  },
  call: (client, { messageId }) => client.capabilities.readMailMessage({ params: { messageId } }),
  output: MailMessageResult,
  human: ({ message }) => [headers(message), "", message.body, ...(message.bodyTruncated ? ["", "[body truncated]"] : [])].join("\n")
})

export const mail = Commands.group("mail", "Create mail drafts and read messages as yourself, through your own suite-a connection.", [draft, read], [CapabilitiesApi])
