/**
 * scim/GroupPatch.ts and TeamSync.ts's pure rules: a Group PatchOp's operations as identity providers send them, the
 * rules giving a group's members a role, Group bodies, the bounds the OpenAPI document states; and a table of
 * operation lists and bodies, each taken or refused with its SCIM error type and words.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { groupChange, groupInput, namedMembers, type PatchFailure } from "../src/scim/GroupPatch.js"
import { roleChange, ruleRole } from "../src/scim/TeamSync.js"

/** `groupChange`'s change; it reads the operations as they come in a body (any member names and values), as the test's do. */
const ok = (operations: ReadonlyArray<unknown>) => {
  const result = groupChange(operations)
  if (Result.isFailure(result)) throw new Error(`${result.failure.scimType}: ${result.failure.detail}`)
  return result.success
}
const failure = (operations: ReadonlyArray<{ op: string; path?: string; value?: unknown }>) => {
  const result = groupChange(operations)
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

describe("Group PatchOp", () => {
  it("reads Entra's capitalised member add and filtered remove", () => {
    expect(ok([
      { op: "Add", path: "members", value: [{ value: "om_a" }, { value: "om_b" }] },
      { op: "Remove", path: "members[value eq \"om_a\"]" }
    ]).members).toEqual({ exactly: null, add: ["om_b"], remove: ["om_a"] })
  })

  it("reads or-joined filters, the schema URN prefix and a member given as one object", () => {
    expect(ok([
      { op: "remove", path: "urn:ietf:params:scim:schemas:core:2.0:Group:members[value eq \"om_a\" or value eq \"om_b\"]" },
      { op: "add", path: "Members", value: { value: "om_c" } }
    ]).members).toEqual({ exactly: null, add: ["om_c"], remove: ["om_a", "om_b"] })
  })

  it("removes all members without a value, then adds what follows", () => {
    expect(ok([{ op: "remove", path: "members" }, { op: "add", path: "members", value: [{ value: "om_x" }] }]).members)
      .toEqual({ exactly: ["om_x"], add: [], remove: [] })
  })

  it("removes the members a remove names in its value (Entra's other form)", () => {
    expect(ok([{ op: "Remove", path: "members", value: [{ value: "om_a" }] }]).members).toEqual({ exactly: null, add: [], remove: ["om_a"] })
  })

  it("replaces displayName by path and by a no-path object (Okta's rename with its id ignored)", () => {
    expect(ok([{ op: "Replace", path: "displayName", value: "Sales" }]).displayName).toBe("Sales")
    const change = ok([{ op: "replace", value: { id: "scg_x", displayName: "Renamed", externalId: "ext-1", members: [{ value: "om_a" }] } }])
    expect(change).toEqual({ displayName: "Renamed", externalId: "ext-1", members: { exactly: ["om_a"], add: [], remove: [] } })
    expect(namedMembers(change)).toEqual(["om_a"])
  })

  it("clears externalId on remove", () => {
    expect(ok([{ op: "remove", path: "externalId" }]).externalId).toBeNull()
  })

  it("refuses what does not fit with the SCIM error type", () => {
    expect(failure([{ op: "move", path: "members" }]).scimType).toBe("invalidSyntax")
    expect(failure([{ op: "replace", path: "owner", value: "x" }]).scimType).toBe("invalidPath")
    expect(failure([{ op: "add", path: "members", value: [{ value: 3 }] }]).scimType).toBe("invalidValue")
    expect(failure([{ op: "add", path: "members", value: "om_a" }]).scimType).toBe("invalidValue")
    expect(failure([{ op: "replace", path: "displayName", value: "" }]).scimType).toBe("invalidValue")
    expect(failure([{ op: "remove", path: "displayName" }]).scimType).toBe("mutability")
    expect(failure([{ op: "replace", path: "id", value: "x" }]).scimType).toBe("mutability")
    expect(failure([{ op: "remove", path: "members[display eq \"x\"]" }]).scimType).toBe("invalidPath")
    expect(failure([{ op: "remove" }]).scimType).toBe("noTarget")
    expect(failure([{ op: "replace", value: [1] }]).scimType).toBe("invalidValue")
    expect(failure([]).scimType).toBe("invalidValue")
  })
})

describe("Group → role rules", () => {
  const connection = { defaultRole: "member" as const, roleRules: [{ group: "Platform Admins", role: "admin" as const }] }
  it("gives a rule's role to a member of a group it names, by displayName or externalId, case-insensitively", () => {
    expect(ruleRole(connection, [{ displayName: "platform admins", externalId: null }])).toBe("admin")
    expect(ruleRole(connection, [{ displayName: "Other", externalId: "PLATFORM ADMINS" }])).toBe("admin")
    expect(ruleRole(connection, [{ displayName: "Admins", externalId: null }])).toBe("member")
    expect(ruleRole(connection, [])).toBe("member")
  })
  it("never lowers below the default role, never from a group name alone, never demotes an owner", () => {
    expect(ruleRole({ defaultRole: "admin", roleRules: [{ group: "g", role: "member" }] }, [{ displayName: "g", externalId: null }])).toBe("admin")
    expect(ruleRole({ defaultRole: "member", roleRules: [] }, [{ displayName: "admin", externalId: "owner" }])).toBe("member")
    expect(roleChange("owner", "member")._tag).toBe("None")
    expect(roleChange("admin", "admin")._tag).toBe("None")
    expect(roleChange("member", "admin")).toMatchObject({ _tag: "Some", value: "admin" })
  })
})

describe("Group bodies", () => {
  it("reads displayName, externalId and members in any case, ignoring what the Group does not have", () => {
    expect(groupInput({ schemas: [], DisplayName: "Eng", externalID: "x", Members: [{ Value: "om_a", display: "A" }], id: "scg_1", locale: "fr" }))
      .toEqual(Result.succeed({ displayName: "Eng", externalId: "x", members: ["om_a"] }))
    expect(groupInput({ displayName: "Eng" })).toEqual(Result.succeed({ displayName: "Eng", externalId: null, members: [] }))
  })
  it("refuses a missing or empty displayName and members of the wrong shape", () => {
    for (const body of [{}, { displayName: "" }, { displayName: 1 }, { displayName: "x", members: "om_a" }, { displayName: "x", externalId: 5 }]) {
      expect(Result.getFailure(groupInput(body)).pipe((left) => left._tag === "Some" && left.value.scimType)).toBe("invalidValue")
    }
  })
  it("reads operations whose members are capitalised, and refuses more than 1000 operations", () => {
    expect(ok([{ Op: "Add", Path: "members", Value: [{ value: "om_a" }] }]).members.add).toEqual(["om_a"])
    expect(failure(Array.from({ length: 1001 }, () => ({ op: "remove", path: "externalId" }))).scimType).toBe("invalidValue")
  })
})

describe("Group bounds, as the OpenAPI document says", () => {
  const long = "a".repeat(2049)
  it("refuses a displayName or externalId over 2048 characters, and a path over 2048", () => {
    expect(Result.getFailure(groupInput({ displayName: long })).pipe((o) => o._tag === "Some" && o.value.scimType)).toBe("invalidValue")
    expect(Result.getFailure(groupInput({ displayName: "Eng", externalId: long })).pipe((o) => o._tag === "Some" && o.value.scimType)).toBe("invalidValue")
    expect(Result.isSuccess(groupInput({ displayName: long.slice(1), externalId: long.slice(1) }))).toBe(true)
    expect(failure([{ op: "replace", path: "displayName", value: long }]).scimType).toBe("invalidValue")
    expect(failure([{ op: "remove", path: `members[value eq "${long}"]` }]).scimType).toBe("invalidPath")
  })
  it("refuses more than 10,000 members in one body or operation", () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `om_${i}` }))
    expect(Result.isSuccess(groupInput({ displayName: "Eng", members: members(10_000) }))).toBe(true)
    expect(Result.isFailure(groupInput({ displayName: "Eng", members: members(10_001) }))).toBe(true)
    expect(failure([{ op: "add", path: "members", value: members(10_001) }]).scimType).toBe("invalidValue")
  })
})

describe("Group PatchOp and bodies, case by case", () => {
  /** Taken, or the refusal's SCIM type and words. */
  const outcome = <A>(answer: Result.Result<A, PatchFailure>) => Result.isSuccess(answer) ? "ok" : answer.failure
  const long = "a".repeat(2049)
  const members = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `om_${i}` }))
  const operations: ReadonlyArray<ReadonlyArray<unknown>> = [
    [{ op: "Add", path: "members", value: [{ value: "om_a" }, { value: "om_b" }] }, { op: "Remove", path: "members[value eq \"om_a\"]" }],
    [{ op: "remove", path: "urn:ietf:params:scim:schemas:core:2.0:Group:members[value eq \"om_a\" or value eq \"om_b\"]" }, { op: "add", path: "Members", value: { value: "om_c" } }],
    [{ op: "remove", path: "members" }, { op: "add", path: "members", value: [{ value: "om_x" }] }],
    [{ op: "remove", path: "members" }, { op: "remove", path: "members", value: [{ value: "om_x" }] }, { op: "replace", path: "members", value: [] }],
    [{ op: "Remove", path: "members", value: [{ value: "om_a" }] }, { op: "add", path: "members", value: [{ value: "om_a" }] }],
    [{ op: "Replace", path: "displayName", value: "Sales" }],
    [{ op: "replace", value: { id: "scg_x", displayName: "Renamed", externalId: "ext-1", members: [{ value: "om_a" }], schemas: [], meta: {} } }],
    [{ op: "add", value: { "urn:ietf:params:scim:schemas:core:2.0:Group:displayName": "U", externalId: null } }],
    [{ op: "remove", path: "externalId" }],
    [{ Op: "Add", Path: "members", Value: [{ VALUE: "om_a" }] }],
    [{ op: "remove", path: "members[value eq \"a\\\"b\"]" }],
    [{ op: "move", path: "members" }], [{ op: 5 }], [null], [[]], [{ op: "add", path: 5 }], [{ op: "add", path: null, value: { displayName: "x" } }],
    [{ op: "replace", path: "owner", value: "x" }], [{ op: "add", path: "members", value: [{ value: 3 }] }],
    [{ op: "add", path: "members", value: "om_a" }], [{ op: "add", path: "members", value: [{ value: "" }] }],
    [{ op: "replace", path: "displayName", value: "" }], [{ op: "replace", path: "displayName", value: " " }],
    [{ op: "remove", path: "displayName" }], [{ op: "replace", path: "id", value: "x" }], [{ op: "remove", path: "meta" }],
    [{ op: "remove", path: "nickName" }], [{ op: "add", path: "members[value eq \"x\"]", value: [] }],
    [{ op: "remove", path: "members[display eq \"x\"]" }], [{ op: "remove" }], [{ op: "replace", value: [1] }], [{ op: "replace", value: "x" }],
    [], Array.from({ length: 1001 }, () => ({ op: "remove", path: "externalId" })),
    [{ op: "replace", path: "displayName", value: long }], [{ op: "replace", path: "externalId", value: long }],
    [{ op: "remove", path: `members[value eq "${long}"]` }], [{ op: "add", path: "members", value: members(10_001) }],
    [{ op: "add", path: "members", value: members(10_000) }]
  ]
  it("takes an operation list or refuses it with its SCIM type and words", () => {
    const expected = [
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      "ok",
      { scimType: "invalidSyntax", detail: "op must be add, replace or remove, not \"move\"." },
      { scimType: "invalidSyntax", detail: "op must be add, replace or remove, not \"5\"." },
      { scimType: "invalidSyntax", detail: "Each operation must be an object with an op." },
      { scimType: "invalidSyntax", detail: "Each operation must be an object with an op." },
      { scimType: "invalidPath", detail: "path must be a string." },
      "ok",
      { scimType: "invalidPath", detail: "The Group has no attribute \"owner\"." },
      { scimType: "invalidValue", detail: "Each member must be an object with a string value (the SCIM User's id)." },
      { scimType: "invalidValue", detail: "members must be an array of objects with a value." },
      { scimType: "invalidValue", detail: "Each member must be an object with a string value (the SCIM User's id)." },
      { scimType: "invalidValue", detail: "displayName must be a non-empty string." },
      { scimType: "invalidValue", detail: "displayName must be a non-empty string." },
      { scimType: "mutability", detail: "displayName is required and cannot be removed." },
      { scimType: "mutability", detail: "id is read-only." },
      { scimType: "mutability", detail: "meta is read-only." },
      { scimType: "invalidPath", detail: "The Group has no attribute \"nickName\"." },
      { scimType: "invalidPath", detail: "A members[value eq \"\u2026\"] path takes only remove." },
      { scimType: "invalidPath", detail: "Only members[value eq \"\u2026\"] filters are supported, not \"members[display eq \\\"x\\\"]\"." },
      { scimType: "noTarget", detail: "A remove operation needs a path." },
      { scimType: "invalidValue", detail: "An operation without a path needs an object value." },
      { scimType: "invalidValue", detail: "An operation without a path needs an object value." },
      { scimType: "invalidValue", detail: "Operations must hold at least one operation." },
      { scimType: "invalidValue", detail: "Operations may hold at most 1000 operations." },
      { scimType: "invalidValue", detail: "displayName is longer than 2048 characters." },
      { scimType: "invalidValue", detail: "externalId is longer than 2048 characters." },
      { scimType: "invalidPath", detail: "path is longer than 2048 characters." },
      { scimType: "invalidValue", detail: "members has more than 10000 values." },
      "ok"
    ]
    expect(operations.map((input) => outcome(groupChange(input)))).toEqual(expected)
    // The members a change names: the 10,000 of the last list, once each.
    const last = groupChange(operations.at(-1)!)
    expect(Result.isSuccess(last) && namedMembers(last.success).length).toBe(10_000)
  })
  it("takes a Group body or refuses it with its SCIM type and words", () => {
    const bodies: ReadonlyArray<Record<string, unknown>> = [
      { schemas: [], DisplayName: "Eng", externalID: "x", Members: [{ Value: "om_a", display: "A" }], id: "scg_1", locale: "fr" },
      { displayName: "Eng" }, {}, { displayName: "" }, { displayName: 1 }, { displayName: "x", members: "om_a" }, { displayName: "x", externalId: 5 },
      { displayName: "x", members: null }, { displayName: "x", members: { value: "om_a" } }, { "urn:ietf:params:scim:schemas:core:2.0:Group:displayName": "y" },
      { displayName: long }, { displayName: "Eng", externalId: long }, { displayName: long.slice(1), externalId: long.slice(1) },
      { displayName: "Eng", members: members(10_000) }, { displayName: "Eng", members: members(10_001) }
    ]
    expect(bodies.map((body) => outcome(groupInput(body)))).toEqual([
      "ok",
      "ok",
      { scimType: "invalidValue", detail: "displayName is required." },
      { scimType: "invalidValue", detail: "displayName must be a non-empty string." },
      { scimType: "invalidValue", detail: "displayName must be a non-empty string." },
      { scimType: "invalidValue", detail: "members must be an array of objects with a value." },
      { scimType: "invalidValue", detail: "externalId must be a non-empty string." },
      "ok",
      "ok",
      "ok",
      { scimType: "invalidValue", detail: "displayName is longer than 2048 characters." },
      { scimType: "invalidValue", detail: "externalId is longer than 2048 characters." },
      "ok",
      "ok",
      { scimType: "invalidValue", detail: "members has more than 10000 values." }
    ])
  })
})
