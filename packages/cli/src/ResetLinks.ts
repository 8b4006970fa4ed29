/** How the CLI shows a password reset link it issued: mailed to the person, or the token once, and how it is used. */
import type { PasswordResetLink } from "@orgplane/schema"
import * as Output from "./Output.js"

/** The link for `url` (the server's address, when known): who it is for, the token or where it went, and what follows. */
export const describe = (link: PasswordResetLink, url: string | undefined) => {
  const base = url ?? "<the server's URL>"
  const server = url === undefined ? " --url <the server's URL>" : ` --url ${url}`
  if (link.token === null) {
    return [
      `Password reset link for ${link.email} (${link.userId}) mailed to that address, valid once until ${Output.date(link.expiresAt)}.`,
      `They choose a new password with: orgplane auth reset-password <token>${server}`,
      "Using it signs the account out everywhere and revokes its API keys; issuing another link, or a change of the account's password, voids it."
    ].join("\n")
  }
  return [
    `Password reset link for ${link.email} (${link.userId}), valid once until ${Output.date(link.expiresAt)}; it is not shown again:`,
    "",
    `  ${link.token}`,
    "",
    "Give it to that person, and to no one else. They choose a new password with:",
    `  orgplane auth reset-password ${link.token}${server}`,
    `or POST ${base}/v1/auth/password-reset with {"token": "${link.token}", "newPassword": "..."}.`,
    "Using it signs the account out everywhere and revokes its API keys; issuing another link, or a change of the account's password, voids it.",
    ...(link.temporary
      ? ["The password it sets is temporary: their first sign-in chooses their own ('orgplane auth login' asks), and it ends if the account joins another organization."]
      : [])
  ].join("\n")
}
