/** How the CLI shows a password reset link it was given once: the token, until when, and how the person uses it. */
import type { PasswordResetLink } from "@orgplane-next/schema"
import * as Output from "./Output.js"

/** The link for `url` (the server's address, when known): who it is for, the token, and the command or request. */
export const describe = (link: PasswordResetLink, url: string | undefined) => {
  const base = url ?? "<the server's URL>"
  return [
    `Password reset link for ${link.email} (${link.userId}), valid once until ${Output.date(link.expiresAt)}; it is not shown again:`,
    "",
    `  ${link.token}`,
    "",
    "Give it to that person, and to no one else. They choose a new password with:",
    `  orgplane auth reset-password ${link.token}${url === undefined ? " --url <the server's URL>" : ` --url ${url}`}`,
    `or POST ${base}/v1/auth/password-reset with {"token": "${link.token}", "newPassword": "..."}.`,
    "Using it signs the account out everywhere; issuing another link, or a change of the account's password, voids it."
  ].join("\n")
}
