/** The three access-grant operations every shared resource kind has: grant, list, revoke. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import type * as Schema from "effect/Schema"
import { AccessListQuery, CreateAccessGrantRequest } from "./Access.js"
import { NotFoundResponse } from "./Errors.js"
import { type Action, requires } from "./Policy.js"
import { audits } from "./AuditCatalog.js"

/**
 * `POST`, `GET` `<base>/access` and `DELETE <base>/access/:grantId` for one kind (`kind` names it in the
 * descriptions: "config object"), with its path, grant path, grant response and page schemas.
 */
export const accessEndpoints = <
  const Name extends string,
  PathA,
  PathI,
  GrantPathA,
  GrantPathI,
  GrantA,
  GrantI,
  PageA,
  PageI
>(options: {
  readonly name: Name
  readonly kind: string
  readonly base: `/v1/${string}`
  readonly path: Schema.Schema<PathA, PathI>
  readonly grantPath: Schema.Schema<GrantPathA, GrantPathI>
  readonly grant: Schema.Schema<GrantA, GrantI>
  readonly page: Schema.Schema<PageA, PageI>
  /** The policy action the three operations check; default `catalog.read` (the kind's own grants decide the rest). */
  readonly action?: Action | undefined
  /**
   * Who may grant, list and revoke, as the descriptions say it; default: manager access on the resource (an
   * organization-wide grant also needs an owner or admin).
   */
  readonly who?: string | undefined
  /** The 403 a caller without that access gets; default `insufficient_access`. */
  readonly refusal?: string | undefined
}) => {
  const { kind } = options
  const action = options.action ?? "catalog.read"
  const who = options.who
  const refusal = options.refusal ?? "403 `insufficient_access`"
  const notFound = `404 \`${kind.replaceAll(" ", "_")}_not_found\``
  return {
    grant: HttpApiEndpoint.post(`${options.name}Grant` as `${Name}Grant`, `${options.base}/access`).pipe(audits("access.grant"))
      // The generic path cannot be checked against `ValidatePath` here; each caller's path is a struct of ids.
      .setPath<Schema.Schema<PathA, PathI>>(options.path as never)
      .setPayload(CreateAccessGrantRequest)
      .addSuccess(options.grant, { status: 201 })
      .addError(NotFoundResponse)
      .pipe(requires(action))
      .annotate(OpenApi.Summary, `Grant access to a ${kind}`)
      .annotate(
        OpenApi.Description,
        `Gives one member, one team or the whole organization a role on the ${kind}, and answers the grant. Granting again to the same member, team or organization replaces that grant's role (and brings a revoked grant back) instead of adding another. ${who ?? `Needs manager access on the ${kind}; an organization-wide grant also needs an owner or admin (\`catalog.grantOrgWide\`).`}\n\nErrors: ${who === undefined ? "403 `insufficient_access` without manager access, `insufficient_role` for an organization-wide grant by a member" : refusal}; ${notFound}, \`member_not_found\` when the member is not an active member, \`team_not_found\`.`
      ),
    listAccess: HttpApiEndpoint.get(`${options.name}ListAccess` as `${Name}ListAccess`, `${options.base}/access`)
      .setPath<Schema.Schema<PathA, PathI>>(options.path as never)
      .setUrlParams(AccessListQuery)
      .addSuccess(options.page)
      .addError(NotFoundResponse)
      .pipe(requires(action))
      .annotate(OpenApi.Summary, `List grants of a ${kind}`)
      .annotate(
        OpenApi.Description,
        `The direct, team and organization-wide grants of the ${kind}, newest first; revoked ones too with \`includeRevoked=true\`. ${who ?? `Needs manager access on the ${kind}.`} Changes nothing.\n\nErrors: ${refusal}; ${notFound}.`
      ),
    revoke: HttpApiEndpoint.del(`${options.name}Revoke` as `${Name}Revoke`, `${options.base}/access/:grantId`).pipe(audits("access.revoke"))
      .setPath<Schema.Schema<GrantPathA, GrantPathI>>(options.grantPath as never)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires(action))
      .annotate(OpenApi.Summary, `Revoke access to a ${kind}`)
      .annotate(
        OpenApi.Description,
        `Revokes one grant of the ${kind}: it stops applying at once, and its record stays with \`removedAt\` set. Revoking a revoked grant changes nothing and answers 204 again. ${who ?? `Needs manager access on the ${kind}.`}\n\nErrors: ${refusal}; ${notFound}, \`access_grant_not_found\` when the grant is not one of the ${kind}'s.`
      )
  }
}
