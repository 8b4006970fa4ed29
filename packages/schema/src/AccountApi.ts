/** Account: the caller's account as a whole, taken out (an export of what the instance keeps of them) and deleted. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { AccountDeletion, AccountExport, DeleteAccountRequest } from "./Account.js"
import { audits } from "./AuditCatalog.js"
import { ForbiddenResponse, InvalidRequestResponse, LastOwnerOfOrganizationsResponse, RateLimitedResponse } from "./Errors.js"
import { Authentication, sessionOnly } from "./Security.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The export's answer is a file to keep: `Content-Disposition` says so (a header the platform's generator cannot say). */
const asAttachment = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = operation["responses"]
  const ok = isRecord(responses) ? responses["200"] : undefined
  if (!isRecord(responses) || !isRecord(ok)) return operation
  const headers = isRecord(ok["headers"]) ? ok["headers"] : {}
  return {
    ...operation,
    responses: {
      ...responses,
      "200": {
        ...ok,
        headers: {
          ...headers,
          "Content-Disposition": {
            description: "`attachment`, with a file name carrying the account's id and the day: a browser saves the document rather than showing it.",
            schema: { type: "string" },
            example: "attachment; filename=\"orgplane-account-usr_01jc0000000000000000000001-2026-11-02.json\""
          }
        }
      }
    }
  }
}

export class AccountApi extends HttpApiGroup.make("account")
  .add(
    HttpApiEndpoint.get("export", "/v1/me/export", { success: AccountExport, error: [ForbiddenResponse] }).pipe(sessionOnly)
      .annotate(OpenApi.Transform, asAttachment)
      .annotate(OpenApi.Summary, "Export the caller's data")
      .annotate(
        OpenApi.Description,
        "Everything the instance keeps of the caller that is theirs, as one JSON document (`AccountExport`, `format: \"orgplane.account-export.v1\"`) sent as an attachment: the profile; every membership, current and ended, with the organization's name and the role; every memory saved in any organization, with its snippets; the live sessions as `GET /v1/me/sessions` shows them; the metadata of the API keys their memberships made (never a secret: the instance keeps only hashes). What organizations keep about what the person did (their audit logs, the resources they made) is the organizations' and is not included. Session only; changes nothing.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/me", { payload: DeleteAccountRequest, success: AccountDeletion, error: [ForbiddenResponse, InvalidRequestResponse, LastOwnerOfOrganizationsResponse, RateLimitedResponse] }).pipe(sessionOnly, audits("user.delete"))
      .annotate(OpenApi.Summary, "Delete the caller's account")
      .annotate(
        OpenApi.Description,
        "Deletes the caller's account, in one transaction: every session ends; every API key the person's memberships made is deleted (with the keys made with them), in every organization; their own MCP credentials, mail and calendar connections, memories and SSO links go; their SCIM Users are marked deleted; every membership ends as a removal (`removedAt`: lists of former members keep it); the sign-in throttle's counts and remembered addresses of their email go. The account becomes a tombstone: its id stays (what organizations made and recorded still points at it), its name and email become a pseudonym (`deleted-user-…`), its password no longer matches anything, and its email is free for a new account. Each organization's audit log keeps its events, the person in them named by the pseudonym, and records `user.delete` in every organization left. Invitations the person sent stay: they are the organization's, as after a removal. Confirmed by the account's `password` in the body, or by a session that signed in within `ORGPLANE_RECENT_AUTHENTICATION` (2 hours by default) with `{}`. Session only. Answers what was removed.\n\nErrors: 400 `invalid_request` on `password` when it is wrong; 401 `unauthorized` without a valid session; 403 `session_required` with an API key, `recent_authentication_required` without `password` from a session older than the setting; 409 `last_owner_of_organizations` while the person is the last owner of organizations that have other members (the message names them: make another member an owner with `POST /v1/members/{memberId}/transfer-ownership`, or delete the organization); 429 `rate_limited` (with `Retry-After`) after 10 password checks, right or wrong, in 15 minutes (shared with `POST /v1/me/password` and `PUT /v1/me/email`)."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Account")
  .annotate(
    OpenApi.Description,
    "The caller's account as a whole: everything the instance keeps of them, exported as one JSON document, and the account's deletion. Both act on the signed-in person and need a session (an API key acts for an organization: 403 `session_required`); 401 `unauthorized` without one. The instance's operator lists, disables, enables and deletes accounts in the Admin group."
  )
{}
