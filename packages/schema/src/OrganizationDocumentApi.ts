/** Organization as code: the organization's document (OrganizationDocument.ts), exported, planned and applied. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { audits, notAudited } from "./AuditCatalog.js"
import { MaxBodyBytes } from "./BodyLimit.js"
import {
  ConflictResponse,
  ConnectionValidationFailedResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  NotFoundResponse,
  PlanRequiredResponse,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import { AppliedPlan, ApplyDocumentRequest, DocumentDrift, OrganizationDocument, OrganizationPlan, PlanDocumentRequest } from "./OrganizationDocument.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, memberAuthenticationErrors } from "./Security.js"

/** The largest document a plan takes, in bytes of its request body. */
export const PLAN_BODY_BYTES = 8 * 1024 * 1024

export class OrganizationDocumentApi extends HttpApiGroup.make("organizationDocument")
  .add(
    HttpApiEndpoint.get("export", "/v1/organization/document", {
      success: OrganizationDocument,
      error: [ForbiddenResponse, ...memberAuthenticationErrors]
    }).pipe(requires("organizations.export"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Export the organization's document")
      .annotate(
        OpenApi.Description,
        "The organization the caller acts in, as one document (organization as code): its profile, member directory setting, audit log retention, members with their roles, pending invitations, teams with their members, LLM providers and MCP connections (their secrets as references, never values). Members and invitations are named by email and teams by name, never by id, and every list is sorted, so two exports of the same state are the same bytes. The document's JSON Schema is published as `organization-document.schema.json` in `@orgplane/schema`; docs/config-as-code.md has the rules. Changes nothing.\n\nErrors: 401 `unauthorized` without valid credentials; 403 `insufficient_role` below admin, `insufficient_scope` for an API key without the scope; 404 `organization_not_found` when the caller belongs to no organization."
      )
  )
  .add(
    HttpApiEndpoint.post("plan", "/v1/organization/document/plan", {
      payload: PlanDocumentRequest,
      success: OrganizationPlan,
      error: [ForbiddenResponse, InvalidRequestResponse, ...memberAuthenticationErrors]
    }).pipe(notAudited("computes what a document would change; changes nothing"), requires("organizations.export"))
      .middleware(MemberAuthentication)
      // A large organization's document (20,000 members at about 60 bytes each) is over the default 1 MiB.
      .annotate(MaxBodyBytes, PLAN_BODY_BYTES)
      .annotate(OpenApi.Summary, "Plan a document")
      .annotate(
        OpenApi.Description,
        "What applying `document` to the organization the caller acts in would change, computed against its live state: every create, update and delete, field by field with before and after, the hash of the live state (the export's bytes) it was computed against, and the plan as Markdown for a pull request. The plan of the organization's own export is empty. A part the document leaves out changes nothing; a list named in `authoritative` deletes what it leaves out (members removed, invitations cancelled, teams deleted), any other list deletes nothing. Members are named by email and must already be members (people join by invitation, SSO or SCIM); teams by name, ignoring case; what a SCIM directory manages (`suspended`, `directoryManaged`) is the directory's and is not planned. Changes nothing; `POST /v1/organization/document/apply` applies the plan, given its `planHash`.\n\nErrors: 400 `invalid_request` with a detail for each member, invitation or team the plan cannot take (a member who is not one, an invitation for a member, an email or team named twice, a team member who is not a member, a change to a team the directory manages), each with its path in `document`; 401 `unauthorized` without valid credentials; 403 `insufficient_role` below admin, `insufficient_scope` for an API key without the scope; 404 `organization_not_found` when the caller belongs to no organization."
      )
  )
  .add(
    HttpApiEndpoint.post("apply", "/v1/organization/document/apply", {
      payload: ApplyDocumentRequest,
      success: AppliedPlan,
      error: [
        ForbiddenResponse,
        InvalidRequestResponse,
        NotFoundResponse,
        ConflictResponse,
        ConnectionValidationFailedResponse,
        StoredCredentialUnreadableResponse,
        PlanRequiredResponse,
        ...memberAuthenticationErrors
      ]
    }).pipe(
      audits("organization.document.apply"),
      requires(
        "organizations.export",
        "organizations.update",
        "members.manageDirectory",
        "audit.manage",
        "members.changeRole",
        "members.manageOwners",
        "members.remove",
        "invitations.manage",
        "invitations.inviteAdmins",
        "teams.manage",
        "llmProviders.create",
        "mcp.manage",
        "scim.manage"
      )
    )
      .middleware(MemberAuthentication)
      .annotate(MaxBodyBytes, PLAN_BODY_BYTES)
      .annotate(OpenApi.Summary, "Apply a plan")
      .annotate(
        OpenApi.Description,
        "Applies the plan of `document` whose `planHash` the caller reviewed, all or nothing, in one transaction: the organization's document is planned again under its lock and applied only if that plan has the same `planHash` (the same live state and the same changes). Each change is made by the operation the API has for it (a role changed, a member removed, an invitation sent or cancelled, a team created, changed or deleted, an LLM provider or MCP connection registered, changed or deleted), checked and recorded as that operation is, its audit event naming the plan in `via.planHash`, beside this operation's own event; a mailed invitation leaves once everything committed. Applying a document again once it is applied changes nothing and succeeds (`changes` empty). Guards: the organization keeps an owner, the caller cannot remove themselves or lower their own role, and what a SCIM directory manages is refused by the plan. The values of the secrets the plan writes (its `secrets`, by source) go in `secrets`, read by the applier where their references point; they are used for this apply only, never stored or answered. Run it with an `Idempotency-Key` to retry safely.\n\nErrors: 400 `invalid_request` for a document the plan refuses (as the plan says it), or a secret the plan writes that `secrets` lacks or that its field cannot take (each at `secrets.<source>`); 401 `unauthorized` without valid credentials; 403 `insufficient_role` when a change needs a role the caller lacks (an owner's role or removal: owners), `recent_authentication_required` for such a change on a session signed in too long ago; 404 `organization_not_found` when the caller belongs to no organization; 409 `plan_stale` when the organization's plan of the document is no longer the one given (plan again and review), `document_locks_you_out` when the document removes the caller or lowers their role, `last_owner` when it would leave no owner, or a change's own conflict (`team_external_key_taken`, `invitation_quota_reached`, `mail_not_configured`), its message naming the change; 402 `plan_required` for a SCIM connection on an organization without the enterprise plan; 502 `connection_validation_failed` when an MCP connection it registers or changes does not answer `initialize` (nothing is applied)."
      )
  )
  .add(
    HttpApiEndpoint.get("drift", "/v1/organization/document/drift", {
      success: DocumentDrift,
      error: [ForbiddenResponse, ...memberAuthenticationErrors]
    }).pipe(requires("organizations.export"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Show drift from the applied document")
      .annotate(
        OpenApi.Description,
        "The organization the caller acts in against the last document applied to it (`POST /v1/organization/document/apply`): every difference, field by field, as the plan that would bring the document back (`before` the live value, `after` the document's), each with the last change the audit log records of it since the apply, made outside a plan (`changedBy`: the event, the actor and the credential). A background job checks every organization with an applied document every two minutes and records new drift in the audit log (`organization.document.drift`) and in `/metrics` (`orgplane_document_drift_fields`). No applied document: `applied` is null and nothing drifts. Changes nothing.\n\nErrors: 401 `unauthorized` without valid credentials; 403 `insufficient_role` below admin, `insufficient_scope` for an API key without the scope; 404 `organization_not_found` when the caller belongs to no organization."
      )
  )
  .annotate(OpenApi.Description, "Organization as code: the organization described as one document, exported, planned, applied and watched for drift.")
{}
