/** The three access-grant operations every shared resource kind has: grant, list, revoke. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import type * as Schema from "effect/Schema"
import { AccessListQuery, CreateAccessGrantRequest } from "./Access.js"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { type Action, requires } from "./Policy.js"
import { audits } from "./AuditCatalog.js"

/**
 * `POST`, `GET` `<base>/access` and `DELETE <base>/access/:grantId` for one kind (`kind` names it in the
 * descriptions: "config object"), with its path, grant path, grant response and page schemas. Each answers 403 too
 * (Effect 4 has no group-wide error: the groups' own endpoints list it as well); the group adds the authentication.
 */
export const accessEndpoints = <
  const Name extends string,
  Path extends Schema.Top,
  GrantPath extends Schema.Top,
  Grant extends Schema.Top,
  Page extends Schema.Top
>(options: {
  readonly name: Name
  readonly kind: string
  readonly base: `/v1/${string}`
  readonly path: Path
  readonly grantPath: GrantPath
  readonly grant: Grant
  readonly page: Page
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
    grant: HttpApiEndpoint.post(`${options.name}Grant`, `${options.base}/access`, {
      params: options.path,
      payload: CreateAccessGrantRequest,
      success: options.grant.pipe(HttpApiSchema.status(201)),
      error: [ForbiddenResponse, NotFoundResponse]
    }).pipe(
      audits("access.grant"),
      // Every action the grant may check: an organization-wide grant on the catalog's kinds also `catalog.grantOrgWide`.
      who === undefined ? requires(action, "catalog.grantOrgWide") : requires(action)
    )
      .annotate(OpenApi.Summary, `Grant access to a ${kind}`)
      .annotate(
        OpenApi.Description,
        `Gives one member, one team or the whole organization a role on the ${kind}, and answers the grant. Granting again to the same member, team or organization replaces that grant's role (and brings a revoked grant back) instead of adding another. ${who ?? `Needs manager access on the ${kind}; an organization-wide grant also needs an owner or admin (\`catalog.grantOrgWide\`).`}\n\nErrors: ${who === undefined ? "403 `insufficient_access` without manager access, `insufficient_role` for an organization-wide grant by a member" : refusal}; ${notFound}, \`member_not_found\` when the member is not an active member, \`team_not_found\`.`
      ),
    listAccess: HttpApiEndpoint.get(`${options.name}ListAccess`, `${options.base}/access`, {
      params: options.path,
      query: AccessListQuery,
      success: options.page,
      error: [ForbiddenResponse, NotFoundResponse]
    }).pipe(requires(action))
      .annotate(OpenApi.Summary, `List grants of a ${kind}`)
      .annotate(
        OpenApi.Description,
        `The direct, team and organization-wide grants of the ${kind}, newest first; revoked ones too with \`includeRevoked=true\`. ${who ?? `Needs manager access on the ${kind}.`} Changes nothing.\n\nErrors: ${refusal}; ${notFound}.`
      ),
    revoke: HttpApiEndpoint.delete(`${options.name}Revoke`, `${options.base}/access/:grantId`, {
      params: options.grantPath,
      success: HttpApiSchema.NoContent,
      error: [ForbiddenResponse, NotFoundResponse]
    }).pipe(audits("access.revoke"), requires(action))
      .annotate(OpenApi.Summary, `Revoke access to a ${kind}`)
      .annotate(
        OpenApi.Description,
        `Revokes one grant of the ${kind}: it stops applying at once, and its record stays with \`removedAt\` set. Revoking a revoked grant changes nothing and answers 204 again. ${who ?? `Needs manager access on the ${kind}.`}\n\nErrors: ${refusal}; ${notFound}, \`access_grant_not_found\` when the grant is not one of the ${kind}'s.`
      )
  }
}
