/**
 * identity/PurgeRepository.ts on a fresh migrated database: the tenant tables from the catalog, children before
 * parents (`deletionOrder`), counted and deleted in batches for one organization only (tenancy).
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { OrganizationsRepository } from "../src/identity/OrganizationsRepository.js"
import { deletionOrder, PurgeRepository } from "../src/identity/PurgeRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`PurgeRepository on ${TestDatabase.kind}`, (it) => {
  it.effect("the tenant tables, children before parents", () =>
    Effect.gen(function*() {
      const repository = yield* PurgeRepository.make
      const tables = yield* repository.tenantTables
      expect(tables).toContain("memberships")
      expect(tables).toContain("api_keys")
      expect(tables).not.toContain("organizations")
      expect(tables).not.toContain("users")
      expect(tables.indexOf("api_keys")).toBeLessThan(tables.indexOf("memberships"))
      const sample = [
        { name: "a", references: ["b", "a"] },
        { name: "b", references: ["c"] },
        { name: "c", references: ["organizations"] },
        { name: "d", references: [] }
      ]
      expect(deletionOrder(sample)).toEqual(["a", "d", "b", "c"])
      expect(() => deletionOrder([{ name: "x", references: ["y"] }, { name: "y", references: ["x"] }])).toThrow(/cycle: x, y/)
    }))

  it.effect("counts and deletes one organization's rows in batches, never another's", () =>
    Effect.gen(function*() {
      const repository = yield* PurgeRepository.make
      const organizations = yield* OrganizationsRepository.make
      const doomed = yield* Db.insertOrganization()
      const kept = yield* Db.insertOrganization()
      for (let i = 0; i < 5; i++) yield* Db.insertMembership(doomed, null, "member")
      yield* Db.insertMembership(kept, null, "member")
      expect(yield* repository.count(doomed, ["memberships", "api_keys"])).toEqual({ memberships: 5 })
      expect(yield* repository.count(doomed, [])).toEqual({})
      expect(yield* repository.deleteBatch("memberships", doomed, 2)).toBe(2)
      expect(yield* repository.deleteBatch("memberships", doomed, 2)).toBe(2)
      expect(yield* repository.deleteBatch("memberships", doomed, 2)).toBe(1)
      expect(yield* repository.deleteBatch("memberships", doomed, 2)).toBe(0)
      expect(yield* repository.count(kept, ["memberships"])).toEqual({ memberships: 1 })
      expect(Option.isSome(yield* organizations.find(kept))).toBe(true)
    }))
})
