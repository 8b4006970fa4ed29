/** The mail of a mailed invitation: who invites the address to which organization, as what, and how to accept. */
import type { Role } from "@orgplane/schema"
import { type Link, linkMail } from "../integrations/mail/LinkMail.js"
import type { MailMessage } from "../integrations/mail/Mailer.js"

export const invitationMail = (
  link: Link,
  invitation: { readonly inviter: string; readonly organization: string; readonly role: Exclude<Role, "owner"> }
): MailMessage =>
  linkMail(link, {
    subject: `${invitation.inviter} invited you to ${invitation.organization} on orgplane`,
    why: `${invitation.inviter} invited ${link.to} to join the organization ${invitation.organization} as ${
      invitation.role === "admin" ? "an admin" : "a member"
    } at ${link.baseUrl}.`,
    what: "To join, with a new account (add --sign-up --name \"Your Name\") or signed in as this address",
    command: "invitations accept",
    request: `/v1/invitations/accept with {"token": "TOKEN"} and your session, or {"token": "TOKEN", "signUp": {"name": "...", "password": "..."}}`,
    after: [
      "The invitation works once, until EXPIRES. Only this mailbox has it: accepting it proves the address is yours.",
      "If you do not know the organization, ignore this message."
    ]
  })
