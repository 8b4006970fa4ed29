/**
 * templates/Templates as a service on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL),
 * without HTTP: a template made with its first version, versions kept immutable, documents validated against the
 * registered schema and instantiated with its defaults, the creator's manager access, grants, and what another
 * member or organization is answered (404 without any access, 403 below the role), word for word.
 */
import { expect, layer } from "@effect/vitest"
import { TemplateVersionId } from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { IdGenerator } from "../src/platform/Ids.js"
import { compile } from "../src/templates/SchemaCompiler.js"
import { registryOf, TemplateSchemas } from "../src/templates/SchemaRegistry.js"
import { Templates } from "../src/templates/Templates.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const schema = {
  type: "object",
  properties: { name: { type: "string" }, replicas: { type: "integer", default: 2 } },
  required: ["name"],
  additionalProperties: false
}
const schemas = Layer.succeed(TemplateSchemas, registryOf(new Map([["service/v1", compile(schema)]])))
const TestLayer = Layer.provideMerge(Templates.layer, Layer.mergeAll(Db.layer, IdGenerator.layer, schemas)).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const staffed = Effect.fn("Templates.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const member = Members.member(organization, "member")
  const other = Members.member(organization, "member")
  yield* Members.seed(owner, member, other)
  return { organization, owner, member, other }
})

/** The error an effect fails with, as its plain members (Effect 4 keeps `message` off the object's own). */
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => ({ ...error, ..."message" in error ? { message: error.message } : {} }))

layer(TestLayer, { timeout: 120_000, excludeTestServices: true })(`templates on ${TestDatabase.kind}`, (it) => {
  it.effect("creates with a first version, keeps versions immutable, validates and instantiates with the schema's defaults", () =>
    Effect.gen(function*() {
      const templates = yield* Templates
      const { member, organization } = yield* staffed()
      const created = yield* templates.create(member, { name: "Service", kind: "workspace", schemaVersion: "service/v1", document: { name: "api" } })
      expect(created.template).toMatchObject({
        organizationId: organization.id,
        name: "Service",
        description: "",
        kind: "workspace",
        createdByOrgMembershipId: member.membership.id,
        latestVersion: { number: 1, schemaVersion: "service/v1", validated: true, sizeBytes: 14 }
      })
      const id = created.template.id
      expect(yield* templates.get(member, id)).toEqual({ template: created.template, document: { name: "api" } })

      const refused = yield* failure(templates.create(member, { name: "Bad", kind: "workspace", schemaVersion: "service/v1", document: { replicas: "x" } }))
      expect(refused._tag).toBe("InvalidRequest")
      const unvalidated = yield* templates.create(member, { name: "Free", kind: "workspace", schemaVersion: "other/v9", document: [1] })
      expect(unvalidated.template.latestVersion).toMatchObject({ schemaVersion: "other/v9", validated: false })

      // A rename changes the template in place; a document makes a new version.
      const renamed = yield* templates.update(member, id, { name: "Service API" })
      expect(renamed.template).toMatchObject({ name: "Service API", latestVersion: { number: 1 } })
      const changed = yield* templates.update(member, id, { document: { name: "api", replicas: 5 } })
      expect(changed.template.latestVersion).toMatchObject({ number: 2, validated: true })
      expect(changed.document).toEqual({ name: "api", replicas: 5 })
      const versions = yield* templates.listVersions(member, id, {})
      expect(versions.items.map((version) => version.number)).toEqual([2, 1])
      const first = versions.items[1]
      if (first === undefined) throw new Error("two versions")
      expect(yield* templates.getVersion(member, id, first.id)).toEqual({ version: first, document: { name: "api" } })
      expect(yield* failure(templates.getVersion(member, id, Schema.decodeUnknownSync(TemplateVersionId)(Db.newId("tpv")))))
        .toMatchObject({ error: "template_version_not_found", message: "Template version not found." })

      const latest = yield* templates.instantiate(member, id, {})
      expect(latest).toMatchObject({ templateId: id, name: "Service API", document: { name: "api", replicas: 5 }, defaultsApplied: true })
      const old = yield* templates.instantiate(member, id, { versionId: first.id })
      expect(old).toMatchObject({ document: { name: "api", replicas: 2 }, defaultsApplied: true })
      expect((yield* templates.instantiate(member, unvalidated.template.id, {})).defaultsApplied).toBe(false)

      const listed = yield* templates.list(member, { q: "serv" })
      expect(listed.items.map((template) => template.id)).toEqual([id])
    }))

  it.effect("the creator manages; another member sees nothing until granted, then only what the grant allows", () =>
    Effect.gen(function*() {
      const templates = yield* Templates
      const { member, other, owner } = yield* staffed()
      const { template } = yield* templates.create(member, { name: "Private", kind: "workspace", document: {} })
      const notFound = { error: "template_not_found" }
      expect(yield* failure(templates.get(other, template.id))).toMatchObject(notFound)
      expect(yield* failure(templates.remove(other, template.id))).toMatchObject(notFound)
      expect((yield* templates.list(other, {})).items).toEqual([])
      expect((yield* templates.list(owner, {})).items.map((item) => item.id)).toEqual([template.id])

      yield* templates.grant(member, template.id, { orgMembershipId: other.membership.id, role: "viewer" })
      expect((yield* templates.get(other, template.id)).template.id).toBe(template.id)
      const below = yield* failure(templates.update(other, template.id, { name: "Mine" }))
      expect(below).toMatchObject({ _tag: "Forbidden", reason: "insufficient_access", message: "Missing editor access for template." })
      expect((yield* templates.listGrants(member, template.id, {})).items.length).toBeGreaterThan(0)

      // Another organization's member finds nothing.
      const stranger = Members.member(Members.organization("team"), "owner")
      yield* Members.seed(stranger)
      expect(yield* failure(templates.get(stranger, template.id))).toMatchObject(notFound)

      yield* templates.remove(owner, template.id)
      expect(yield* failure(templates.get(member, template.id))).toMatchObject(notFound)
    }))
})
