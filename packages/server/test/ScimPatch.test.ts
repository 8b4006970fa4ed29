/** SCIM resources read from what clients send, and PATCH as Okta and Entra send it: pure, no server. */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { EnterpriseUserSchemaId, GroupResourceType, UserResourceType } from "../src/scim/Attributes.js"
import { applyPatch, readResource } from "../src/scim/Patch.js"
import { withOnePrimary } from "../src/scim/Primary.js"

const user = {
  userName: "ada@example.com",
  name: { givenName: "Ada", familyName: "Lovelace" },
  displayName: "Ada Lovelace",
  active: true,
  emails: [{ value: "ada@example.com", type: "work", primary: true }],
  externalId: "ext-1",
  [EnterpriseUserSchemaId]: { department: "R&D" }
}

const patched = (operations: ReadonlyArray<unknown>, resource: Record<string, unknown> = user) => {
  const result = applyPatch(UserResourceType, resource, operations)
  if (Result.isFailure(result)) throw new Error(`expected a patch, got ${result.failure.scimType}: ${result.failure.detail}`)
  return result.success
}
const refused = (operations: ReadonlyArray<unknown>, resource: Record<string, unknown> = user, type = UserResourceType) => {
  const result = applyPatch(type, resource, operations)
  if (Result.isSuccess(result)) throw new Error("expected a refusal")
  return result.failure.scimType
}

describe("readResource", () => {
  it("keeps advertised attributes under canonical names, ignores unknown ones, password and readOnly ones", () => {
    const read = readResource(UserResourceType, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      id: "om_forged",
      meta: { created: "x" },
      UserName: "a@x.com",
      password: "hunter2",
      nickName: "ignored",
      active: "False",
      NAME: { GivenName: "A", middleName: "ignored" },
      emails: { value: "a@x.com" },
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { manager: "om_boss", costCenter: "x" }
    })
    expect(read).toEqual(Result.succeed({
      userName: "a@x.com",
      active: false,
      name: { givenName: "A" },
      emails: [{ value: "a@x.com" }],
      [EnterpriseUserSchemaId]: { manager: { value: "om_boss" } }
    }))
  })
  it("refuses wrong types, NUL characters and a missing userName with invalidValue", () => {
    const type = (input: unknown) => Result.isFailure(readResource(UserResourceType, input)) ? Result.getFailure(readResource(UserResourceType, input)).pipe((o) => o._tag === "Some" ? o.value.scimType : "") : "accepted"
    expect(type({ userName: "a", active: "maybe" })).toBe("invalidValue")
    expect(type({ userName: 7 })).toBe("invalidValue")
    expect(type({ userName: "a\u0000b" })).toBe("invalidValue")
    expect(type({ userName: "a", emails: [{ value: 1 }] })).toBe("invalidValue")
    expect(type({ userName: "a", name: "Ada" })).toBe("invalidValue")
    expect(type({ displayName: "no userName" })).toBe("invalidValue")
    expect(type({ userName: "  " })).toBe("invalidValue")
    expect(type([])).toBe("invalidSyntax")
  })
})

describe("applyPatch: Entra", () => {
  it("takes capitalised ops and \"False\" strings", () => {
    expect(patched([{ op: "Replace", path: "active", value: "False" }]).active).toBe(false)
    expect(patched([{ op: "Replace", path: "active", value: "True" }]).active).toBe(true)
  })
  it("splits a no-path replace with dotted and value-filter keys into paths, merging sub-attributes", () => {
    const result = patched([
      {
        op: "Replace",
        value: { "name.givenName": "Augusta", "emails[type eq \"work\"].value": "augusta@example.com", displayName: "A. L." }
      }
    ])
    expect(result.name).toEqual({ givenName: "Augusta", familyName: "Lovelace" })
    expect(result.emails).toEqual([{ value: "augusta@example.com", type: "work", primary: true }])
    expect(result.displayName).toBe("A. L.")
    expect(patched([{ op: "replace", value: { name: { givenName: "B" } } }]).name).toEqual({ givenName: "B", familyName: "Lovelace" })
  })
  it("sets the enterprise manager by a URN path with a bare id, and other extension attributes by URN keys", () => {
    const result = patched([
      { op: "Add", path: `${EnterpriseUserSchemaId}:manager`, value: "om_boss" },
      { op: "Replace", value: { [EnterpriseUserSchemaId]: { employeeNumber: "42" } } }
    ])
    expect(result[EnterpriseUserSchemaId]).toEqual({ department: "R&D", manager: { value: "om_boss" }, employeeNumber: "42" })
    expect(patched([{ op: "Remove", path: `${EnterpriseUserSchemaId}:manager` }])[EnterpriseUserSchemaId]).toEqual({ department: "R&D" })
  })
  it("adds an email by a value-filter path that matches nothing yet, and a null replace unassigns", () => {
    expect(patched([{ op: "Add", path: "emails[type eq \"home\"].value", value: "h@x.com" }]).emails).toEqual([
      { value: "ada@example.com", type: "work", primary: true },
      { type: "home", value: "h@x.com" }
    ])
    expect(patched([{ op: "Replace", path: "title", value: "Engineer" }, { op: "replace", path: "title", value: null }]).title).toBeUndefined()
  })
})

describe("applyPatch: Okta and refusals", () => {
  it("replaces active with a boolean and ignores password", () => {
    const result = patched([{ op: "replace", value: { active: false, password: "secret" } }])
    expect(result.active).toBe(false)
    expect(result).not.toHaveProperty("password")
  })
  it("refuses readOnly and immutable targets with mutability, removing userName too", () => {
    expect(refused([{ op: "replace", path: "id", value: "om_x" }])).toBe("mutability")
    expect(refused([{ op: "replace", path: "meta.created", value: "2030-01-01T00:00:00Z" }])).toBe("mutability")
    expect(refused([{ op: "remove", path: "userName" }])).toBe("mutability")
    expect(refused([{ op: "replace", path: "members[value eq \"om_1\"].value", value: "om_2" }], { displayName: "G", members: [{ value: "om_1" }] }, GroupResourceType)).toBe("mutability")
  })
  it("refuses unknown paths with invalidPath and bad ops with invalidSyntax", () => {
    expect(refused([{ op: "add", path: "nickName", value: "x" }])).toBe("invalidPath")
    expect(refused([{ op: "add", path: "name.middleName", value: "x" }])).toBe("invalidPath")
    expect(refused([{ op: "add", path: "emails[type eq]", value: "x" }])).toBe("invalidPath")
    expect(refused([{ op: "add", path: "title[value eq \"x\"]", value: "x" }])).toBe("invalidPath")
    expect(refused([{ op: "replace", value: { favouriteColour: "x" } }])).toBe("invalidPath")
    expect(refused([{ op: "move", path: "title", value: "x" }])).toBe("invalidSyntax")
    expect(refused(["replace"])).toBe("invalidSyntax")
  })
  it("refuses a replace whose value filter matches nothing with noTarget (RFC 7644 §3.5.2.3), but not Entra's no-path form", () => {
    expect(refused([{ op: "replace", path: "emails[type eq \"home\"].value", value: "h@x.com" }])).toBe("noTarget")
    expect(refused([{ op: "Replace", path: "emails[type eq \"home\"]", value: { value: "h@x.com" } }])).toBe("noTarget")
    expect(patched([{ op: "replace", path: "emails[type eq \"work\"].value", value: "w@x.com" }]).emails).toEqual([
      { value: "w@x.com", type: "work", primary: true }
    ])
    // A no-path replace is of the resource itself, which "adds where an attribute did not previously exist".
    expect(patched([{ op: "Replace", value: { "emails[type eq \"home\"].value": "h@x.com" } }]).emails).toEqual([
      { value: "ada@example.com", type: "work", primary: true },
      { type: "home", value: "h@x.com" }
    ])
  })
  it("refuses a remove whose filter matches nothing, or without a path, with noTarget", () => {
    expect(refused([{ op: "remove", path: "emails[type eq \"home\"]" }])).toBe("noTarget")
    expect(refused([{ op: "remove" }])).toBe("noTarget")
    expect(patched([{ op: "remove", path: "emails[type eq \"work\"]" }])).not.toHaveProperty("emails")
  })
  it("refuses values of the wrong type with invalidValue", () => {
    expect(refused([{ op: "replace", path: "active", value: "yes" }])).toBe("invalidValue")
    expect(refused([{ op: "replace", path: "displayName", value: 12 }])).toBe("invalidValue")
    expect(refused([{ op: "replace", path: "emails", value: ["a@x"] }])).toBe("invalidValue")
    expect(refused([{ op: "replace", value: "not an object" }])).toBe("invalidValue")
    expect(refused([{ op: "replace", path: "userName", value: null }])).toBe("invalidValue")
    expect(refused([])).toBe("invalidValue")
  })
})

describe("primary: true on one value at most (RFC 7643 §2.4, RFC 7644 §3.5.2)", () => {
  const two = {
    ...user,
    emails: [{ value: "ada@example.com", type: "work", primary: true }, { value: "ada@home.example", type: "home" }]
  }
  it("refuses a resource sent with two primary values with invalidValue", () => {
    const read = readResource(UserResourceType, { userName: "a@x.com", emails: [{ value: "a@x.com", primary: true }, { value: "b@x.com", primary: "True" }] })
    expect(Result.getFailure(read).pipe((o) => (o._tag === "Some" ? o.value.scimType : "accepted"))).toBe("invalidValue")
    expect(Result.isSuccess(readResource(UserResourceType, { userName: "a@x.com", emails: [{ value: "a@x.com", primary: true }, { value: "b@x.com", primary: false }] }))).toBe(true)
  })
  it("makes a value primary and the others not, whichever way the PATCH says it", () => {
    const expected = [{ value: "ada@example.com", type: "work", primary: false }, { value: "ada@home.example", type: "home", primary: true }]
    expect(patched([{ op: "replace", path: "emails[type eq \"home\"].primary", value: true }], two).emails).toEqual(expected)
    expect(patched([{ op: "Replace", value: { "emails[type eq \"home\"].primary": "True" } }], two).emails).toEqual(expected)
    expect(patched([{ op: "add", path: "emails", value: [{ value: "new@x.com", primary: true }] }], two).emails).toEqual([
      { value: "ada@example.com", type: "work", primary: false },
      { value: "ada@home.example", type: "home" },
      { value: "new@x.com", primary: true }
    ])
    expect(patched([{ op: "replace", path: "emails", value: [{ value: "a@x.com" }, { value: "b@x.com", primary: true }] }], two).emails).toEqual([
      { value: "a@x.com" },
      { value: "b@x.com", primary: true }
    ])
  })
  it("refuses an operation that makes two values primary at once with invalidValue", () => {
    expect(refused([{ op: "add", path: "emails", value: [{ value: "a@x.com", primary: true }, { value: "b@x.com", primary: true }] }], two)).toBe("invalidValue")
    expect(refused([{ op: "replace", path: "emails", value: [{ value: "a@x.com", primary: true }, { value: "b@x.com", primary: true }] }], two)).toBe("invalidValue")
    expect(refused([{ op: "replace", path: "emails[value pr].primary", value: true }], two)).toBe("invalidValue")
  })
  it("reads a resource stored with two primary values with the first one primary", () => {
    const stored = { ...two, emails: [two.emails[0], { ...two.emails[1], primary: true }] }
    expect(withOnePrimary(UserResourceType, stored).emails).toEqual([
      { value: "ada@example.com", type: "work", primary: true },
      { value: "ada@home.example", type: "home", primary: false }
    ])
    expect(withOnePrimary(UserResourceType, user)).toBe(user)
  })
})

describe("applyPatch: group members", () => {
  const group = { displayName: "Eng", members: [{ value: "om_1" }, { value: "om_2" }] }
  const apply = (operations: ReadonlyArray<unknown>) => {
    const result = applyPatch(GroupResourceType, group, operations)
    if (Result.isFailure(result)) throw new Error(result.failure.detail)
    return result.success.members
  }
  it("adds without duplicates, removes by value filter and by value list, ignores display", () => {
    expect(apply([{ op: "Add", path: "members", value: [{ value: "om_3", display: "C" }, { value: "om_1" }] }])).toEqual([
      { value: "om_1" },
      { value: "om_2" },
      { value: "om_3" }
    ])
    expect(apply([{ op: "Remove", path: "members[value eq \"om_1\"]" }])).toEqual([{ value: "om_2" }])
    expect(apply([{ op: "Remove", path: "members", value: [{ value: "om_2" }] }])).toEqual([{ value: "om_1" }])
    expect(refused([{ op: "remove", path: "members[value eq \"om_9\"]" }], group, GroupResourceType)).toBe("noTarget")
  })
})

describe("what the server reads is bounded, as the OpenAPI document says", () => {
  const long = "a".repeat(2049)
  it("refuses a string over 2048 characters, externalId in a body too, and a PATCH path over 2048", () => {
    const scimType = (input: unknown) => Result.getFailure(readResource(UserResourceType, input)).pipe((o) => (o._tag === "Some" ? o.value.scimType : "accepted"))
    expect(scimType({ userName: "a", externalId: long })).toBe("invalidValue")
    expect(scimType({ userName: "a", title: long })).toBe("invalidValue")
    expect(scimType({ userName: "a", externalId: long.slice(1), title: long.slice(1) })).toBe("accepted")
    expect(refused([{ op: "replace", path: "externalId", value: long }])).toBe("invalidValue")
    expect(refused([{ op: "replace", path: `emails[value eq "${long}"].value`, value: "x" }])).toBe("invalidPath")
  })
  it("refuses more than 10,000 values of a multi-valued attribute", () => {
    const emails = (n: number) => Array.from({ length: n }, (_, i) => ({ value: `u${i}@example.com` }))
    expect(Result.isSuccess(readResource(UserResourceType, { userName: "a", emails: emails(10_000) }))).toBe(true)
    expect(Result.isFailure(readResource(UserResourceType, { userName: "a", emails: emails(10_001) }))).toBe(true)
  })
})
