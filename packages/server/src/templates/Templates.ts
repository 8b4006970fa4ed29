/**
 * Templates: create, read, change, delete and instantiate, with the access rules of the Templates group. Every read
 * of one template carries the caller's rank on it (`Access.rank`), so the rule is one statement: no rank (not the
 * creator, not an owner or admin, no grant) is a 404 like a missing template; a rank below what the operation needs,
 * 403 `insufficient_access`.
 */
import {
  type AccessListQuery,
  type AccessRole,
  AccessRoles,
  type CreateAccessGrantRequest,
  type CreateTemplateRequest,
  type Forbidden,
  type InstantiateTemplateQuery,
  type MemberContext,
  NotFound,
  Template,
  type TemplateAccessGrantId,
  type TemplateId,
  type TemplateListQuery,
  TemplateVersion,
  type TemplateVersionId,
  type TemplateVersionListQuery,
  type UpdateTemplateRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import { Access, insufficientAccess, TemplateKind } from "../access/Access.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { invalidDocument, TemplateSchemas } from "./SchemaRegistry.js"
import { TemplatesRepository } from "./TemplatesRepository.js"

export const templateNotFound = TemplateKind.notFound
export const versionNotFound = () => new NotFound({ error: "template_version_not_found", message: "Template version not found." })

const encoder = new TextEncoder()

const make = Effect.gen(function*() {
  const templates = yield* TemplatesRepository
  const access = yield* Access
  const schemas = yield* TemplateSchemas

  /**
   * A new version's document as stored, checked against the schema registered for `schemaVersion` (a 400 listing
   * every violation); `validated` is false when nothing is registered for it.
   */
  const prepare = (schemaVersion: string | null, document: unknown) =>
    Effect.suspend(() => {
      const violations = schemaVersion === null ? undefined : schemas.check(schemaVersion, document)
      if (schemaVersion !== null && violations !== undefined && violations.length > 0) return Effect.fail(invalidDocument(schemaVersion, violations))
      const text = JSON.stringify(document)
      return Effect.succeed({ schemaVersion, validated: violations !== undefined, document: text, sizeBytes: encoder.encode(text).length })
    })

  /** The live template with the caller's rank on it: 404 without any, 403 below `role`. */
  const reach = (caller: MemberContext, id: TemplateId, role: AccessRole, lock = false) =>
    Effect.flatMap(templates.find(caller.organization.id, id, access.rank(caller, TemplateKind, "t"), lock), (found): Effect.Effect<Template, NotFound | Forbidden> =>
      Option.isNone(found) || found.value.rank === 0
        ? Effect.fail(templateNotFound())
        : found.value.rank < AccessRoles.indexOf(role) + 1
        ? Effect.fail(insufficientAccess(TemplateKind, role))
        : Effect.succeed(found.value.template))

  const withDocument = (caller: MemberContext, id: TemplateId, number: number) =>
    templates.document(caller.organization.id, id, number)

  const create = Effect.fn("Templates.create")(function*(caller: MemberContext, input: CreateTemplateRequest) {
    yield* authorize(caller, "templates.create")
    const version = yield* prepare(input.schemaVersion ?? null, input.document)
    return yield* transaction(
      Effect.gen(function*() {
        const id = yield* makeId("tpl")
        const versionId = yield* makeId("tpv")
        const at = yield* now
        const organizationId = caller.organization.id
        const createdByMembershipId = actingMembershipId(caller)
        const row = {
          id,
          organizationId,
          name: input.name,
          description: input.description ?? "",
          kind: input.kind,
          latestVersion: 1,
          createdByMembershipId,
          createdAt: at,
          updatedAt: at
        }
        yield* templates.insert(row)
        const versionRow = { id: versionId, organizationId, templateId: id, number: 1, ...version, createdByMembershipId, createdAt: at }
        yield* templates.insertVersion(versionRow)
        const template = new Template({
          id,
          organizationId,
          name: row.name,
          description: row.description,
          kind: row.kind,
          latestVersion: new TemplateVersion({
            id: versionId,
            templateId: id,
            number: 1,
            schemaVersion: version.schemaVersion,
            validated: version.validated,
            sizeBytes: version.sizeBytes,
            createdByOrgMembershipId: createdByMembershipId,
            createdAt: at
          }, { disableChecks: true }),
          createdByOrgMembershipId: createdByMembershipId,
          createdAt: at,
          updatedAt: at
        }, { disableChecks: true })
        return { template, document: input.document }
      })
    )
  })

  const list = Effect.fn("Templates.list")(function*(caller: MemberContext, query: TemplateListQuery) {
    yield* authorize(caller, "templates.read")
    return yield* orUnavailable(templates.list(caller.organization.id, access.visible(caller, TemplateKind, "t"), query))
  })

  const get = Effect.fn("Templates.get")(function*(caller: MemberContext, id: TemplateId) {
    yield* authorize(caller, "templates.read")
    return yield* orUnavailable(Effect.gen(function*() {
      const template = yield* reach(caller, id, "viewer")
      return { template, document: yield* withDocument(caller, id, template.latestVersion.number) }
    }))
  })

  /** Name, description and kind change in place; a document or a schemaVersion makes a new version. */
  const update = Effect.fn("Templates.update")(function*(caller: MemberContext, id: TemplateId, input: UpdateTemplateRequest) {
    yield* authorize(caller, "templates.read")
    return yield* transaction(Effect.gen(function*() {
      const current = yield* reach(caller, id, "editor", true)
      const organizationId = caller.organization.id
      const at = yield* now
      let latest = current.latestVersion.number
      let document: Schema.Json
      if (input.document !== undefined || input.schemaVersion !== undefined) {
        document = input.document !== undefined ? input.document : yield* withDocument(caller, id, latest)
        const schemaVersion = input.schemaVersion !== undefined ? input.schemaVersion : current.latestVersion.schemaVersion
        const version = yield* prepare(schemaVersion, document)
        latest += 1
        yield* templates.insertVersion({
          id: yield* makeId("tpv"),
          organizationId,
          templateId: id,
          number: latest,
          ...version,
          createdByMembershipId: actingMembershipId(caller),
          createdAt: at
        })
      } else {
        document = yield* withDocument(caller, id, latest)
      }
      yield* templates.update(organizationId, id, {
        name: input.name ?? current.name,
        description: input.description ?? current.description,
        kind: input.kind ?? current.kind,
        latestVersion: latest
      }, at)
      const template = yield* reach(caller, id, "viewer")
      // The document's versions are kept by the template itself: the event shows which version is latest.
      yield* describeChange(Template, current, template)
      return { template, document }
    }))
  })

  const remove = Effect.fn("Templates.remove")(function*(caller: MemberContext, id: TemplateId) {
    yield* authorize(caller, "templates.read")
    return yield* transaction(Effect.gen(function*() {
      yield* reach(caller, id, "manager", true)
      yield* templates.softDelete(caller.organization.id, id, yield* now)
    }))
  })

  const listVersions = Effect.fn("Templates.listVersions")(function*(caller: MemberContext, id: TemplateId, query: TemplateVersionListQuery) {
    yield* authorize(caller, "templates.read")
    return yield* orUnavailable(Effect.andThen(reach(caller, id, "viewer"), templates.listVersions(caller.organization.id, id, query)))
  })

  const version = (caller: MemberContext, id: TemplateId, versionId: TemplateVersionId) =>
    Effect.flatMap(templates.findVersion(caller.organization.id, id, versionId), Option.match({
      onNone: () => Effect.fail(versionNotFound()),
      onSome: Effect.succeed
    }))

  const getVersion = Effect.fn("Templates.getVersion")(function*(caller: MemberContext, id: TemplateId, versionId: TemplateVersionId) {
    yield* authorize(caller, "templates.read")
    return yield* orUnavailable(Effect.andThen(reach(caller, id, "viewer"), version(caller, id, versionId)))
  })

  /** A version's document with its registered schema's defaults filled in (as stored when none is registered). */
  const instantiate = Effect.fn("Templates.instantiate")(function*(caller: MemberContext, id: TemplateId, query: InstantiateTemplateQuery) {
    yield* authorize(caller, "templates.read")
    return yield* orUnavailable(Effect.gen(function*() {
      const template = yield* reach(caller, id, "viewer")
      const chosen = query.versionId === undefined
        ? { version: template.latestVersion, document: yield* withDocument(caller, id, template.latestVersion.number) }
        : yield* version(caller, id, query.versionId)
      const schemaVersion = chosen.version.schemaVersion
      const resolved = schemaVersion === null ? undefined : schemas.resolve(schemaVersion, chosen.document)
      return {
        templateId: template.id,
        name: template.name,
        kind: template.kind,
        version: chosen.version,
        document: resolved === undefined ? chosen.document : resolved,
        defaultsApplied: schemaVersion !== null && schemas.has(schemaVersion)
      }
    }))
  })

  /** The grant operations of Access, on a template the caller can see (404 otherwise, as every other read). */
  const seen = (caller: MemberContext, id: TemplateId) =>
    Effect.andThen(authorize(caller, "templates.read"), orUnavailable(reach(caller, id, "viewer")))

  const grant = Effect.fn("Templates.grant")(function*(caller: MemberContext, id: TemplateId, input: CreateAccessGrantRequest) {
    yield* seen(caller, id)
    return yield* access.grant(caller, TemplateKind, id, input)
  })

  const listGrants = Effect.fn("Templates.listGrants")(function*(caller: MemberContext, id: TemplateId, query: AccessListQuery) {
    yield* seen(caller, id)
    return yield* access.listGrants(caller, TemplateKind, id, query)
  })

  const revoke = Effect.fn("Templates.revoke")(function*(caller: MemberContext, id: TemplateId, grantId: TemplateAccessGrantId) {
    yield* seen(caller, id)
    return yield* access.revoke(caller, TemplateKind, id, grantId)
  })

  return { create, list, get, update, remove, listVersions, getVersion, instantiate, grant, listGrants, revoke } as const
})

export class Templates extends Context.Service<Templates>()("@orgplane/server/templates/Templates", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      TemplatesRepository.layer,
      Access.layer
    ])
  )
}
