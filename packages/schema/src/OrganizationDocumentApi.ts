/** Organization as code: the organization's document (OrganizationDocument.ts), exported, and a plan of a document. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { notAudited } from "./AuditCatalog.js"
import { MaxBodyBytes } from "./BodyLimit.js"
import { ForbiddenResponse, InvalidRequestResponse } from "./Errors.js"
import { OrganizationDocument, OrganizationPlan, PlanDocumentRequest } from "./OrganizationDocument.js"
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
        "The organization the caller acts in, as one document (organization as code): its profile, member directory setting, members with their roles, pending invitations and teams with their members. Members and invitations are named by email and teams by name, never by id, and every list is sorted, so two exports of the same state are the same bytes. The document's JSON Schema is published as `organization-document.schema.json` in `@orgplane/schema`; docs/config-as-code.md has the rules. Changes nothing.\n\nErrors: 401 `unauthorized` without valid credentials; 403 `insufficient_role` below admin, `insufficient_scope` for an API key without the scope; 404 `organization_not_found` when the caller belongs to no organization."
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
        "What applying `document` to the organization the caller acts in would change, computed against its live state: every create, update and delete, field by field with before and after, the hash of the live state (the export's bytes) it was computed against, and the plan as Markdown for a pull request. The plan of the organization's own export is empty. A part the document leaves out changes nothing; a list named in `authoritative` deletes what it leaves out (members removed, invitations cancelled, teams deleted), any other list deletes nothing. Members are named by email and must already be members (people join by invitation, SSO or SCIM); teams by name, ignoring case; what a SCIM directory manages (`suspended`, `directoryManaged`) is the directory's and is not planned. Changes nothing; applying a plan is not built yet (docs/config-as-code.md).\n\nErrors: 400 `invalid_request` with a detail for each member, invitation or team the plan cannot take (a member who is not one, an invitation for a member, an email or team named twice, a team member who is not a member, a change to a team the directory manages), each with its path in `document`; 401 `unauthorized` without valid credentials; 403 `insufficient_role` below admin, `insufficient_scope` for an API key without the scope; 404 `organization_not_found` when the caller belongs to no organization."
      )
  )
  .annotate(OpenApi.Description, "Organization as code: the organization described as one document, exported and planned.")
{}
