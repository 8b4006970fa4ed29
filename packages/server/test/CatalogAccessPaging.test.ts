/**
 * Who may do what to one config object, plugin or marketplace, and keyset paging of the catalog's lists while rows
 * are added, through the catalog's services (ConfigObjects, Plugins, Marketplaces, with Access for a config object's
 * grants as its HTTP group uses it) on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * what http/CatalogAccess.test.ts and CatalogPaging.test.ts check through HTTP.
 *
 * The access matrix (kind × grant kind × role) for a plain member, owners and admins without grants, revocation
 * taking effect at once, the organization boundary, and the viewer fallbacks (a plugin through a marketplace, a
 * config object through a plugin); each case works on a resource of its own. Then walks of the config objects list,
 * the plugins list and a plugin's config-objects list with inserts between pages (both databases) and with
 * concurrent writers (Postgres only: the embedded database serializes every statement).
 */
import { expect, layer } from "@effect/vitest"
import {
  type AccessRole,
  AccessRoles,
  type MemberContext,
  type TeamId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import { Access, ConfigObjectKind } from "../src/access/Access.js"
import { ConfigObjects } from "../src/catalog/ConfigObjects.js"
import { Marketplaces } from "../src/catalog/Marketplaces.js"
import { Plugins } from "../src/catalog/Plugins.js"
import { Teams } from "../src/teams/Teams.js"
import * as Catalog from "./support/Catalog.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const {
  createObject,
  newVersion,
  objectsQuery,
  createPlugin,
  updatePlugin,
  pluginsQuery,
  membershipsQuery,
  createMarketplace,
  updateMarketplace,
  marketplacesQuery,
  grantRequest,
  grantsQuery,
  configObjectId,
  pluginId,
  marketplaceId,
  pluginGrantId,
  marketplaceGrantId,
  plain,
  unique,
  idsOf
} = Catalog

/**
 * The organization: an owner, an admin, a plain member (`alice`) in a team, and another organization with an owner
 * and a plain member of its own; their rows written.
 */
const staffed = Effect.fn("CatalogAccessPaging.staffed")(function*() {
  const teams = yield* Teams
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const admin = Members.member(organization, "admin")
  const alice = Members.member(organization, "member")
  yield* Members.seed(owner, admin, alice)
  const elsewhere = Members.organization("team")
  const outsiders = [Members.member(elsewhere, "owner"), Members.member(elsewhere, "member")] as const
  yield* Members.seed(...outsiders)
  const { team } = yield* teams.create(owner, { name: `Team ${unique()}`, memberIds: [alice.membership.id] })
  return { owner, admin, alice, team: team.id, outsiders }
})
type Setting = Effect.Success<ReturnType<typeof staffed>>

type Operation = Effect.Effect<unknown, object, Catalog.Env>

// The three kinds, each with how to make one and what its operations are ----------------------------------------

interface Kind {
  readonly name: "config object" | "plugin" | "marketplace"
  readonly notFound: string
  /** Whether plain members may create this kind (marketplaces need an admin). */
  readonly memberCreates: boolean
  /** Makes one whose name holds `word` (for the list's `q`), and answers its id. */
  readonly create: (who: MemberContext, word: string) => Effect.Effect<string, object, Catalog.Env>
  readonly read: (who: MemberContext, id: string) => Operation
  /** The edit that needs editor access. */
  readonly edit: (who: MemberContext, id: string) => Operation
  /** The lifecycle operation that needs manager access (it comes last: it changes the resource). */
  readonly retire: (who: MemberContext, id: string) => Operation
  /** The ids of the kind's list, filtered to `word`, as `who` sees it. */
  readonly listed: (who: MemberContext, word: string) => Effect.Effect<ReadonlyArray<string>, object, Catalog.Env>
  readonly grant: (who: MemberContext, id: string, request: unknown) => Effect.Effect<{ readonly item: { readonly id: string } }, object, Catalog.Env>
  readonly listGrants: (
    who: MemberContext,
    id: string,
    query?: Record<string, string>
  ) => Effect.Effect<{ readonly items: ReadonlyArray<{ readonly id: string; readonly orgMembershipId: string | null; readonly role: AccessRole; readonly removedAt: Date | null }> }, object, Catalog.Env>
  readonly revoke: (who: MemberContext, id: string, grantId: string) => Operation
}

const configObjectKind: Kind = {
  name: "config object",
  notFound: "config_object_not_found",
  memberCreates: true,
  create: (who, word) =>
    Effect.flatMap(Effect.service(ConfigObjects), (objects) =>
      Effect.map(objects.create(who, createObject({ input: { objectType: "custom", rawSourceText: `Probe ${word}\nbody` } })), ({ item }) => item.id)),
  read: (who, id) => Effect.flatMap(Effect.service(ConfigObjects), (objects) => objects.get(who, configObjectId(id))),
  edit: (who, id) =>
    Effect.flatMap(Effect.service(ConfigObjects), (objects) => objects.createVersion(who, configObjectId(id), newVersion({ input: { rawSourceText: `Edited ${unique()}` } }))),
  retire: (who, id) => Effect.flatMap(Effect.service(ConfigObjects), (objects) => objects.archive(who, configObjectId(id))),
  listed: (who, word) => Effect.flatMap(Effect.service(ConfigObjects), (objects) => Effect.map(objects.list(who, objectsQuery({ q: word, limit: "100" })), idsOf)),
  grant: (who, id, request) => Effect.flatMap(Effect.service(Access), (access) => access.grant(who, ConfigObjectKind, configObjectId(id), grantRequest(request))),
  listGrants: (who, id, query = {}) => Effect.flatMap(Effect.service(Access), (access) => access.listGrants(who, ConfigObjectKind, configObjectId(id), grantsQuery(query))),
  revoke: (who, id, grantId) => Effect.flatMap(Effect.service(Access), (access) => access.revoke(who, ConfigObjectKind, configObjectId(id), grantId))
}

const pluginKind: Kind = {
  name: "plugin",
  notFound: "plugin_not_found",
  memberCreates: true,
  create: (who, word) => Effect.flatMap(Effect.service(Plugins), (plugins) => Effect.map(plugins.create(who, createPlugin({ name: `Plugin ${word} ${unique()}` })), ({ item }) => item.id)),
  read: (who, id) => Effect.flatMap(Effect.service(Plugins), (plugins) => plugins.get(who, pluginId(id))),
  edit: (who, id) => Effect.flatMap(Effect.service(Plugins), (plugins) => plugins.update(who, pluginId(id), updatePlugin({ description: `Edited ${unique()}` }))),
  retire: (who, id) => Effect.flatMap(Effect.service(Plugins), (plugins) => plugins.archive(who, pluginId(id))),
  listed: (who, word) => Effect.flatMap(Effect.service(Plugins), (plugins) => Effect.map(plugins.list(who, pluginsQuery({ q: word, limit: "100" })), idsOf)),
  grant: (who, id, request) => Effect.flatMap(Effect.service(Plugins), (plugins) => plugins.grant(who, pluginId(id), grantRequest(request))),
  listGrants: (who, id, query = {}) => Effect.flatMap(Effect.service(Plugins), (plugins) => plugins.listGrants(who, pluginId(id), grantsQuery(query))),
  revoke: (who, id, grantId) => Effect.flatMap(Effect.service(Plugins), (plugins) => plugins.revoke(who, pluginId(id), pluginGrantId(grantId)))
}

const marketplaceKind: Kind = {
  name: "marketplace",
  notFound: "marketplace_not_found",
  memberCreates: false,
  create: (who, word) =>
    Effect.flatMap(Effect.service(Marketplaces), (marketplaces) =>
      Effect.map(marketplaces.create(who, createMarketplace({ name: `Market ${word} ${unique()}` })), ({ item }) => item.id)),
  read: (who, id) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => marketplaces.get(who, marketplaceId(id))),
  edit: (who, id) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => marketplaces.update(who, marketplaceId(id), updateMarketplace({ description: `Edited ${unique()}` }))),
  retire: (who, id) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => marketplaces.remove(who, marketplaceId(id))),
  listed: (who, word) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => Effect.map(marketplaces.list(who, marketplacesQuery({ q: word, limit: "100" })), idsOf)),
  grant: (who, id, request) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => marketplaces.grant(who, marketplaceId(id), grantRequest(request))),
  listGrants: (who, id, query = {}) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => marketplaces.listGrants(who, marketplaceId(id), grantsQuery(query))),
  revoke: (who, id, grantId) => Effect.flatMap(Effect.service(Marketplaces), (marketplaces) => marketplaces.revoke(who, marketplaceId(id), marketplaceGrantId(grantId)))
}

const kinds: ReadonlyArray<Kind> = [configObjectKind, pluginKind, marketplaceKind]

/** The operations checked for each resource, in order, with the role each needs. */
const operations: ReadonlyArray<{ readonly name: string; readonly needs: AccessRole; readonly run: (kind: Kind, who: MemberContext, id: string) => Operation }> = [
  { name: "read", needs: "viewer", run: (kind, who, id) => kind.read(who, id) },
  { name: "edit", needs: "editor", run: (kind, who, id) => kind.edit(who, id) },
  { name: "list grants", needs: "manager", run: (kind, who, id) => kind.listGrants(who, id) },
  { name: "archive or delete", needs: "manager", run: (kind, who, id) => kind.retire(who, id) }
]

const allows = (role: AccessRole | undefined, needs: AccessRole) => role !== undefined && AccessRoles.indexOf(role) >= AccessRoles.indexOf(needs)

const insufficient = (kind: Kind, needs: AccessRole) => ({ _tag: "Forbidden", reason: "insufficient_access", message: `Missing ${needs} access for ${kind.name}.` })

/** What an operation came to: done, or the error it failed with. */
const outcome = (operation: Operation) =>
  Effect.match(operation, { onSuccess: () => "done" as const, onFailure: (error): object => plain(error) })

/** Runs every operation as `who` and expects each to succeed exactly when `role` allows it. */
const expectOutcomes = Effect.fn("CatalogAccessPaging.expectOutcomes")(function*(kind: Kind, id: string, who: MemberContext, role: AccessRole | undefined) {
  const outcomes: Array<readonly [string, unknown]> = []
  const expected: Array<readonly [string, unknown]> = []
  for (const operation of operations) {
    outcomes.push([operation.name, yield* outcome(operation.run(kind, who, id))])
    expected.push([operation.name, allows(role, operation.needs) ? "done" : insufficient(kind, operation.needs)])
  }
  expect(outcomes).toEqual(expected)
})

type GrantKind = "direct" | "team" | "org-wide"
const grantKinds: ReadonlyArray<GrantKind> = ["direct", "team", "org-wide"]

/** A grant for alice of each kind: to her, to her team, or to the whole organization. */
const target = (setting: Setting, grantKind: GrantKind): { readonly orgMembershipId: string } | { readonly teamId: TeamId } | { readonly orgWide: true } =>
  grantKind === "direct" ? { orgMembershipId: setting.alice.membership.id } : grantKind === "team" ? { teamId: setting.team } : { orgWide: true }

const grant = (setting: Setting, kind: Kind, id: string, grantKind: GrantKind, role: AccessRole) =>
  Effect.map(kind.grant(setting.owner, id, { ...target(setting, grantKind), role }), ({ item }) => item.id)

/** Whether the kind's list, filtered to `word`, shows the resource to `who`. */
const isListed = (kind: Kind, who: MemberContext, word: string, id: string) => Effect.map(kind.listed(who, word), (ids) => ids.includes(id))

const matrix: ReadonlyArray<{ readonly grantKind: GrantKind | "none"; readonly role: AccessRole | undefined; readonly label: string }> = [
  ...grantKinds.flatMap((grantKind) => AccessRoles.map((role) => ({ grantKind, role, label: `a ${grantKind} ${role} grant` }))),
  { grantKind: "none", role: undefined, label: "no grant" }
]

// Paging under inserts ----------------------------------------------------------------------------------------------

/** One list: how to read a page of it, how to add a row to it (answering the row's key). */
interface List {
  readonly name: string
  readonly prepare: (owner: MemberContext) => Effect.Effect<{
    readonly page: (cursor: string | null) => Effect.Effect<{ readonly keys: ReadonlyArray<string>; readonly nextCursor: string | null }, object, Catalog.Env>
    readonly insert: () => Effect.Effect<string, object, Catalog.Env>
  }, object, Catalog.Env>
}

const createContext = (owner: MemberContext, pluginIds?: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.service(ConfigObjects), (objects) =>
    Effect.map(
      objects.create(owner, createObject({ input: { objectType: "context", rawSourceText: `Context ${unique()}` }, ...(pluginIds === undefined ? {} : { pluginIds }) })),
      ({ item }) => item.id
    ))

// Random names: in a list by name, new plugins land before, inside and after the page being read.
const createNamedPlugin = (owner: MemberContext) =>
  Effect.flatMap(Effect.service(Plugins), (plugins) => Effect.map(plugins.create(owner, createPlugin({ name: `${unique()} plugin` })), ({ item }) => item.id))

const paged = (cursor: string | null) => cursor === null ? { limit: "20" } : { limit: "20", cursor }

const lists: ReadonlyArray<List> = [
  {
    name: "the config objects list",
    prepare: (owner) =>
      Effect.succeed({
        page: (cursor) =>
          Effect.flatMap(Effect.service(ConfigObjects), (objects) =>
            Effect.map(objects.list(owner, objectsQuery(paged(cursor))), (page) => ({ keys: idsOf(page), nextCursor: page.nextCursor }))),
        insert: () => createContext(owner)
      })
  },
  {
    name: "the plugins list",
    prepare: (owner) =>
      Effect.succeed({
        page: (cursor) =>
          Effect.flatMap(Effect.service(Plugins), (plugins) =>
            Effect.map(plugins.list(owner, pluginsQuery(paged(cursor))), (page) => ({ keys: idsOf(page), nextCursor: page.nextCursor }))),
        insert: () => createNamedPlugin(owner)
      })
  },
  {
    name: "a plugin's config-objects list",
    prepare: (owner) =>
      Effect.map(createNamedPlugin(owner), (id) => ({
        page: (cursor: string | null) =>
          Effect.flatMap(Effect.service(Plugins), (plugins) =>
            Effect.map(plugins.listConfigObjects(owner, pluginId(id), membershipsQuery(paged(cursor))), (page) => ({
              keys: page.items.map((membership) => membership.configObjectId),
              nextCursor: page.nextCursor
            }))),
        insert: () => createContext(owner, [id])
      }))
  }
]

/**
 * Seeds `rows` rows, then walks the list with limit 20 while `writers` keep inserting (each page waits until at
 * least one more insert has landed since the previous one, so the walk and the inserts interleave), and checks what
 * the walk saw. No writers: one insert between pages, in the walk's own fiber.
 */
const walkWhileInserting = Effect.fn("CatalogAccessPaging.walkWhileInserting")(function*(list: List, rows: number, writers: number) {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  yield* Members.seed(owner)
  const { insert, page } = yield* list.prepare(owner)
  const before = yield* Effect.forEach(Array.from({ length: rows }), () => insert(), { concurrency: 8 })

  const inserted: Array<string> = []
  const walking = yield* Ref.make(true)
  const landed = yield* Ref.make(0)
  const write = Effect.gen(function*() {
    while (yield* Ref.get(walking)) {
      inserted.push(yield* insert())
      yield* Ref.update(landed, (count) => count + 1)
    }
  })
  const running = yield* Effect.forEach(Array.from({ length: writers }), () => Effect.forkChild(write))

  const seen: Array<string> = []
  let pages = 0
  let cursor: string | null = null
  do {
    if (writers === 0) {
      inserted.push(yield* insert())
    } else {
      // Wait for one more insert since the previous page.
      const at = yield* Ref.get(landed)
      while ((yield* Ref.get(landed)) === at) yield* Effect.sleep("2 millis")
    }
    const current: { readonly keys: ReadonlyArray<string>; readonly nextCursor: string | null } = yield* page(cursor)
    expect(current.keys.length).toBeLessThanOrEqual(20)
    seen.push(...current.keys)
    cursor = current.nextCursor
    pages++
  } while (cursor !== null)
  yield* Ref.set(walking, false)
  for (const fiber of running) yield* Fiber.join(fiber)

  const counts = new Map<string, number>()
  for (const key of seen) counts.set(key, (counts.get(key) ?? 0) + 1)
  expect([...counts].filter(([, count]) => count > 1)).toEqual([])
  expect(before.filter((key) => counts.get(key) !== 1)).toEqual([])
  const known = new Set([...before, ...inserted])
  expect(seen.filter((key) => !known.has(key))).toEqual([])
  expect(pages).toBeGreaterThanOrEqual(Math.ceil(rows / 20))
  expect(inserted.length).toBeGreaterThanOrEqual(pages)
})

layer(Catalog.layer, { timeout: 600_000, excludeTestServices: true })(`catalog access and paging on ${TestDatabase.kind}`, (it) => {
  for (const kind of kinds) {
    it.effect(`a plain member on a ${kind.name}: with each grant kind and role, or none, lists, reads, edits and manages exactly as the role allows`, () =>
      Effect.gen(function*() {
        const setting = yield* staffed()
        for (const { grantKind, label, role } of matrix) {
          const word = `w${unique()}`
          const id = yield* kind.create(setting.owner, word)
          if (grantKind !== "none" && role !== undefined) yield* grant(setting, kind, id, grantKind, role)
          expect([label, (yield* kind.listed(setting.alice, word)).includes(id)]).toEqual([label, role !== undefined])
          yield* expectOutcomes(kind, id, setting.alice, role)
        }
      }))

    it.effect(`owners and admins on a ${kind.name}: each manages it without any grant`, () =>
      Effect.gen(function*() {
        const setting = yield* staffed()
        for (const actor of ["owner", "admin"] as const) {
          const who = setting[actor]
          // Made by someone else, so that the actor holds no grant of their own on it.
          const creator = kind.memberCreates ? setting.alice : actor === "owner" ? setting.admin : setting.owner
          const word = `w${unique()}`
          const id = yield* kind.create(creator, word)
          const grants = yield* kind.listGrants(who, id)
          expect(grants.items.map((grant) => [grant.orgMembershipId, grant.role])).toEqual([[creator.membership.id, "manager"]])
          expect(yield* kind.listed(who, word)).toContain(id)
          yield* kind.grant(who, id, { teamId: setting.team, role: "viewer" })
          yield* expectOutcomes(kind, id, who, "manager")
        }
      }))

    it.effect(`revoking a grant on a ${kind.name}, of each kind, stops it applying at once; the record stays`, () =>
      Effect.gen(function*() {
        const setting = yield* staffed()
        for (const grantKind of grantKinds) {
          const word = `w${unique()}`
          const id = yield* kind.create(setting.owner, word)
          const grantId = yield* grant(setting, kind, id, grantKind, "editor")
          yield* kind.edit(setting.alice, id)
          yield* kind.revoke(setting.owner, id, grantId)
          expect(plain(yield* Effect.flip(kind.read(setting.alice, id)))).toEqual(insufficient(kind, "viewer"))
          expect(yield* kind.listed(setting.alice, word)).not.toContain(id)
          yield* kind.revoke(setting.owner, id, grantId)
          const kept = yield* kind.listGrants(setting.owner, id, { includeRevoked: "true" })
          expect(kept.items.find((grant) => grant.id === grantId)).toMatchObject({ role: "editor", removedAt: expect.any(Date) })
        }
      }))

    it.effect(`another organization's ${kind.name} is 404 to that organization's owner and members, for every operation`, () =>
      Effect.gen(function*() {
        const setting = yield* staffed()
        const id = yield* kind.create(setting.owner, `w${unique()}`)
        const grantId = yield* grant(setting, kind, id, "direct", "viewer")
        for (const outsider of setting.outsiders) {
          const calls: ReadonlyArray<readonly [string, Operation]> = [
            ...operations.map((operation) => [operation.name, operation.run(kind, outsider, id)] as const),
            ["grant", kind.grant(outsider, id, { orgMembershipId: outsider.membership.id, role: "manager" })],
            ["revoke", kind.revoke(outsider, id, grantId)]
          ]
          for (const [name, call] of calls) {
            expect([outsider.membership.role, name, yield* outcome(call)]).toEqual([outsider.membership.role, name, expect.objectContaining({ _tag: "NotFound", error: kind.notFound })])
          }
        }
        // Nothing changed: the grant still applies.
        yield* kind.read(setting.alice, id)
      }))
  }

  // The viewer fallbacks ----------------------------------------------------------------------------------------------

  it.effect("the marketplace fallback: a viewer, editor or manager of a marketplace views its plugins, and nothing more, while they are listed in it", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const setting = yield* staffed()
      for (const role of AccessRoles) {
        const word = `w${unique()}`
        const plugin = yield* pluginKind.create(setting.owner, word)
        const marketplace = yield* marketplaceKind.create(setting.owner, `w${unique()}`)
        yield* marketplaces.addPlugin(setting.owner, marketplaceId(marketplace), pluginId(plugin))
        yield* grant(setting, marketplaceKind, marketplace, "team", role)
        expect([role, yield* isListed(pluginKind, setting.alice, word, plugin)]).toEqual([role, true])
        yield* expectOutcomes(pluginKind, plugin, setting.alice, "viewer")

        // Taken out of the marketplace: no longer; listed again: again; the marketplace deleted: no longer.
        const read = Effect.map(outcome(pluginKind.read(setting.alice, plugin)), (result) => result === "done")
        yield* marketplaces.removePlugin(setting.owner, marketplaceId(marketplace), pluginId(plugin))
        expect(yield* read).toBe(false)
        expect(yield* isListed(pluginKind, setting.alice, word, plugin)).toBe(false)
        yield* marketplaces.addPlugin(setting.owner, marketplaceId(marketplace), pluginId(plugin))
        expect(yield* read).toBe(true)
        yield* marketplaces.remove(setting.owner, marketplaceId(marketplace))
        expect(yield* read).toBe(false)
      }
    }))

  it.effect("the plugin fallback: a viewer, editor or manager of a plugin views its config objects, and nothing more, while they are in it", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const setting = yield* staffed()
      for (const role of AccessRoles) {
        const word = `w${unique()}`
        const object = yield* configObjectKind.create(setting.owner, word)
        const plugin = yield* pluginKind.create(setting.owner, `w${unique()}`)
        yield* plugins.addConfigObject(setting.owner, pluginId(plugin), configObjectId(object))
        yield* grant(setting, pluginKind, plugin, "direct", role)
        expect([role, yield* isListed(configObjectKind, setting.alice, word, object)]).toEqual([role, true])
        yield* expectOutcomes(configObjectKind, object, setting.alice, "viewer")

        const read = Effect.map(outcome(configObjectKind.read(setting.alice, object)), (result) => result === "done")
        yield* plugins.removeConfigObject(setting.owner, pluginId(plugin), configObjectId(object))
        expect(yield* read).toBe(false)
        yield* plugins.addConfigObject(setting.owner, pluginId(plugin), configObjectId(object))
        expect(yield* read).toBe(true)
        yield* plugins.remove(setting.owner, pluginId(plugin))
        expect(yield* read).toBe(false)
      }
    }))

  it.effect("the plugin fallback reaches through a marketplace: a viewer of a marketplace views the config objects of its plugins", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const marketplaces = yield* Marketplaces
      const setting = yield* staffed()
      const object = yield* configObjectKind.create(setting.owner, `w${unique()}`)
      const plugin = yield* pluginKind.create(setting.owner, `w${unique()}`)
      const marketplace = yield* marketplaceKind.create(setting.owner, `w${unique()}`)
      yield* plugins.addConfigObject(setting.owner, pluginId(plugin), configObjectId(object))
      yield* marketplaces.addPlugin(setting.owner, marketplaceId(marketplace), pluginId(plugin))
      expect(plain(yield* Effect.flip(configObjectKind.read(setting.alice, object)))).toEqual(insufficient(configObjectKind, "viewer"))
      yield* grant(setting, marketplaceKind, marketplace, "org-wide", "viewer")
      yield* expectOutcomes(configObjectKind, object, setting.alice, "viewer")
    }))

  // Paging under inserts ----------------------------------------------------------------------------------------------

  for (const list of lists) {
    it.effect(`${list.name}: walked with inserts between pages, sees every earlier row exactly once and none twice`, () =>
      walkWhileInserting(list, 60, 0))
    it.effect.runIf(TestDatabase.postgresUrl !== undefined)(
      `${list.name}: walked with limit 20 over 300 rows under 3 concurrent writers, sees every earlier row exactly once and none twice (Postgres only)`,
      () => walkWhileInserting(list, 300, 3)
    )
  }
})
