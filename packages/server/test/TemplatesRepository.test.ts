/**
 * The templates area's storage on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * templates and their versions written and read back with the caller's rank, documents kept as given, word-prefix
 * search, lists paged with cursors bound to their template, deletion read as missing, and another organization's
 * rows never found (tenancy).
 */
import { expect, layer } from "@effect/vitest"
import { MembershipId, type OrganizationId, TemplateId, TemplateVersionId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { TemplatesRepository } from "../src/templates/TemplatesRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)
const templateId = () => Schema.decodeUnknownSync(TemplateId)(Db.newId("tpl"))
/** A page's cursor to the next one, which the test expects there to be. */
const cursorOf = (page: { readonly nextCursor: string | null }) => {
  if (page.nextCursor === null) throw new Error("expected another page")
  return page.nextCursor
}
const versionId = () => Schema.decodeUnknownSync(TemplateVersionId)(Db.newId("tpv"))

/** A template with its first version holding `document`, made at `at`. */
const create = Effect.fn("test.create")(function*(organizationId: OrganizationId, name: string, options: {
  readonly kind?: string
  readonly at?: Date
  readonly document?: unknown
} = {}) {
  const repository = yield* TemplatesRepository
  const id = templateId()
  const at = options.at ?? Db.at
  const text = JSON.stringify(options.document ?? { name })
  yield* repository.insert({
    id,
    organizationId,
    name,
    description: `${name} described`,
    kind: options.kind ?? "workspace",
    latestVersion: 1,
    createdByMembershipId: null,
    createdAt: at,
    updatedAt: at
  })
  const version = versionId()
  yield* repository.insertVersion({
    id: version,
    organizationId,
    templateId: id,
    number: 1,
    schemaVersion: null,
    validated: false,
    document: text,
    sizeBytes: text.length,
    createdByMembershipId: null,
    createdAt: at
  })
  return { id, version }
})

layer(Layer.provideMerge(TemplatesRepository.layer, Db.layer), { timeout: 120_000, excludeTestServices: true })(`templates storage on ${TestDatabase.kind}`, (it) => {
  it.effect("insert, find with the caller's rank, the document as given; another organization's id finds nothing", () =>
    Effect.gen(function*() {
      const repository = yield* TemplatesRepository
      const sql = yield* SqlClient.SqlClient
      const organizationId = yield* Db.insertOrganization()
      const other = yield* Db.insertOrganization({ name: "Other" })
      const membership = yield* Db.insertMembership(organizationId, yield* Db.insertUser("creator@tpl.test"), "member")
      const document = { z: 1, a: { snake_case: [1, "two"] } }
      const { id, version } = yield* create(organizationId, "Service skeleton", { document })
      const found = Option.getOrThrow(yield* repository.find(organizationId, id, sql`2`))
      expect(found.rank).toBe(2)
      expect(found.template).toMatchObject({
        id,
        organizationId,
        name: "Service skeleton",
        description: "Service skeleton described",
        kind: "workspace",
        createdByOrgMembershipId: null,
        createdAt: Db.at,
        updatedAt: Db.at
      })
      expect(found.template.latestVersion).toMatchObject({
        id: version,
        templateId: id,
        number: 1,
        schemaVersion: null,
        validated: false,
        sizeBytes: JSON.stringify(document).length,
        createdByOrgMembershipId: null,
        createdAt: Db.at
      })
      // Member order and snake_case members are kept: the document is read as text.
      expect(JSON.stringify(yield* repository.document(organizationId, id, 1))).toBe(JSON.stringify(document))
      expect(yield* repository.find(other, id, sql`3`)).toEqual(Option.none())
      expect(yield* repository.findVersion(other, id, version)).toEqual(Option.none())

      // A second version, made by a member; the template points at it after `update`.
      const second = versionId()
      yield* repository.insertVersion({
        id: second,
        organizationId,
        templateId: id,
        number: 2,
        schemaVersion: "v1",
        validated: true,
        document: JSON.stringify({ second: true }),
        sizeBytes: 15,
        createdByMembershipId: Schema.decodeUnknownSync(MembershipId)(membership),
        createdAt: later(1)
      })
      yield* repository.update(organizationId, id, { name: "Renamed", description: "", kind: "service", latestVersion: 2 }, later(2))
      const updated = Option.getOrThrow(yield* repository.find(organizationId, id, sql`1`, true))
      expect(updated.template).toMatchObject({ name: "Renamed", description: "", kind: "service", updatedAt: later(2) })
      expect(updated.template.latestVersion).toMatchObject({ id: second, number: 2, schemaVersion: "v1", validated: true, createdByOrgMembershipId: membership })
      expect(Option.getOrThrow(yield* repository.findVersion(organizationId, id, version))).toMatchObject({
        version: { id: version, number: 1 },
        document
      })
      expect(Option.getOrThrow(yield* repository.findVersion(organizationId, id, second)).document).toEqual({ second: true })
      // A version id of another template finds nothing under this one.
      const elsewhere = yield* create(organizationId, "Elsewhere")
      expect(yield* repository.findVersion(organizationId, id, elsewhere.version)).toEqual(Option.none())
    }))

  it.effect("deleted templates are read as missing, once", () =>
    Effect.gen(function*() {
      const repository = yield* TemplatesRepository
      const sql = yield* SqlClient.SqlClient
      const organizationId = yield* Db.insertOrganization()
      const { id } = yield* create(organizationId, "Doomed")
      const other = yield* Db.insertOrganization({ name: "Other" })
      yield* repository.softDelete(other, id, later(1))
      expect(Option.isSome(yield* repository.find(organizationId, id, sql`3`))).toBe(true)
      yield* repository.softDelete(organizationId, id, later(1))
      expect(yield* repository.find(organizationId, id, sql`3`)).toEqual(Option.none())
      const [row] = yield* sql<{ deletedAt: Date }>`SELECT deleted_at FROM templates WHERE id = ${id}`
      expect(row?.deletedAt).toEqual(later(1))
      yield* repository.softDelete(organizationId, id, later(5))
      const [again] = yield* sql<{ deletedAt: Date }>`SELECT deleted_at FROM templates WHERE id = ${id}`
      expect(again?.deletedAt).toEqual(later(1))
    }))

  it.effect("lists newest first, by kind, by word prefix and by what `visible` lets through, paged with cursors", () =>
    Effect.gen(function*() {
      const repository = yield* TemplatesRepository
      const sql = yield* SqlClient.SqlClient
      const organizationId = yield* Db.insertOrganization()
      const other = yield* Db.insertOrganization({ name: "Other" })
      const made = []
      for (const [index, name] of ["Billing service", "Billing worker", "Search service", "Plain"].entries()) {
        made.push(yield* create(organizationId, name, { at: later(index * 1000), kind: index === 3 ? "other" : "workspace" }))
      }
      yield* create(other, "Billing elsewhere")
      const names = (page: { readonly items: ReadonlyArray<{ readonly name: string }> }) => page.items.map((item) => item.name)
      const all = yield* repository.list(organizationId, sql`true`, {})
      expect(names(all)).toEqual(["Plain", "Search service", "Billing worker", "Billing service"])
      expect(all.nextCursor).toBeNull()
      expect(names(yield* repository.list(organizationId, sql`true`, { kind: "workspace" }))).toEqual(["Search service", "Billing worker", "Billing service"])
      expect(names(yield* repository.list(organizationId, sql`true`, { q: "bill" }))).toEqual(["Billing worker", "Billing service"])
      expect(names(yield* repository.list(organizationId, sql`true`, { q: "bill serv" }))).toEqual(["Billing service"])
      expect(names(yield* repository.list(organizationId, sql`true`, { q: "' & !" }))).toEqual([])
      expect(names(yield* repository.list(organizationId, sql`true`, { q: "o'brien\\" }))).toEqual([])
      expect(names(yield* repository.list(organizationId, sql`t.name <> 'Plain'`, {}))).toEqual(["Search service", "Billing worker", "Billing service"])
      const first = yield* repository.list(organizationId, sql`true`, { limit: 3 })
      expect(names(first)).toEqual(["Plain", "Search service", "Billing worker"])
      expect(first.nextCursor).not.toBeNull()
      const second = yield* repository.list(organizationId, sql`true`, { limit: 3, cursor: cursorOf(first) })
      expect(names(second)).toEqual(["Billing service"])
      // A cursor is bound to its filters.
      const refused = yield* Effect.flip(repository.list(organizationId, sql`true`, { limit: 3, kind: "workspace", cursor: cursorOf(first) }))
      expect(refused._tag).toBe("InvalidRequest")

      // Versions, newest first; a cursor of one template's versions is refused for another's.
      const [a, b] = made
      if (a === undefined || b === undefined) throw new Error("two templates were made")
      for (const number of [2, 3]) {
        yield* repository.insertVersion({
          id: versionId(),
          organizationId,
          templateId: a.id,
          number,
          schemaVersion: null,
          validated: false,
          document: "{}",
          sizeBytes: 2,
          createdByMembershipId: null,
          createdAt: later(number)
        })
      }
      const versions = yield* repository.listVersions(organizationId, a.id, { limit: 2 })
      expect(versions.items.map((version) => version.number)).toEqual([3, 2])
      const rest = yield* repository.listVersions(organizationId, a.id, { limit: 2, cursor: cursorOf(versions) })
      expect(rest.items.map((version) => version.number)).toEqual([1])
      expect(rest.nextCursor).toBeNull()
      const crossed = yield* Effect.flip(repository.listVersions(organizationId, b.id, { limit: 2, cursor: cursorOf(versions) }))
      expect(crossed._tag).toBe("InvalidRequest")
      expect((yield* repository.listVersions(other, a.id, {})).items).toEqual([])
    }))
})
