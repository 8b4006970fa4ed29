/** SCIM filter text → SQL condition over the Users and Groups mappings: pure, the SQL is compiled, never run. */
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Statement from "effect/sql/Statement"
import { GroupResourceType, UserResourceType } from "../src/scim/Attributes.js"
import { condition, groupMapping, userMapping } from "../src/scim/Filter.js"

const sql = Statement.make(Effect.die("no database in this test"), PgClient.makeCompiler(), [], undefined)

const compile = (text: string, mapping = userMapping(sql, "u", UserResourceType)) => {
  const result = condition(sql, mapping, text)
  if (Result.isFailure(result)) throw new Error(`expected SQL, got ${result.failure.detail}`)
  const [query, params] = sql`SELECT 1 FROM scim_users u WHERE ${result.success}`.compile()
  return { where: query.replace("SELECT 1 FROM scim_users u WHERE ", ""), params }
}
const refusal = (text: string, mapping = userMapping(sql, "u", UserResourceType)) => {
  const result = condition(sql, mapping, text)
  if (Result.isSuccess(result)) throw new Error(`expected invalidFilter for ${text}`)
  expect(result.failure._tag).toBe("InvalidFilter")
  return result.failure.detail
}

describe("SCIM filters on Users", () => {
  it("userName compares lowercased on the indexed expression, the value bound", () => {
    expect(compile('userName eq "Bjensen@Example.com"')).toEqual({
      where: "lower(u.user_name) = $1",
      params: ["bjensen@example.com"]
    })
    expect(compile('USERNAME Eq "X"').where).toBe("lower(u.user_name) = $1")
  })

  it("externalId is case-exact on its column; the core URN prefix is accepted", () => {
    expect(compile('externalId eq "AbC"')).toEqual({ where: "u.external_id = $1", params: ["AbC"] })
    expect(compile('urn:ietf:params:scim:schemas:core:2.0:User:externalId eq "AbC"').where).toBe("u.external_id = $1")
  })

  it("co, sw and ew escape LIKE wildcards", () => {
    expect(compile('userName co "a%b_c\\\\d"').params).toEqual(["%a\\%b\\_c\\\\d%"])
    expect(compile('displayName sw "Ad"')).toEqual({ where: "lower(u.display_name) LIKE $1", params: ["ad%"] })
    expect(compile('userName ew "@x.com"').params).toEqual(["%@x.com"])
    expect(compile(String.raw`userName eq "\u0041\"q"`).params).toEqual(['a"q'])
  })

  it("emails.value and value paths become EXISTS over the emails array", () => {
    expect(compile('emails.value eq "A@x.com"')).toEqual({
      where: "EXISTS (SELECT 1 FROM jsonb_array_elements(u.emails) AS email (item) WHERE lower((email.item ->> 'value')) = $1)",
      params: ["a@x.com"]
    })
    expect(compile('emails[type eq "work" and value co "@x"]')).toEqual({
      where:
        "EXISTS (SELECT 1 FROM jsonb_array_elements(u.emails) AS email (item) WHERE (lower((email.item ->> 'type')) = $1 AND lower((email.item ->> 'value')) LIKE $2))",
      params: ["work", "%@x%"]
    })
    expect(compile('emails[primary eq true]').where).toContain("(email.item ->> 'primary')::boolean = $1")
    expect(compile("emails pr").where).toBe("EXISTS (SELECT 1 FROM jsonb_array_elements(u.emails) AS email (item) WHERE true)")
  })

  it("active, names, enterprise attributes and timestamps map to their columns or the stored resource", () => {
    expect(compile("active eq false")).toEqual({ where: "u.active = $1", params: [false] })
    expect(compile('name.familyName eq "Love"').where).toBe("lower((u.resource -> 'name' ->> 'familyName')) = $1")
    expect(compile('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "R&D"').where).toBe(
      "lower((u.resource -> 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' ->> 'department')) = $1"
    )
    const at = compile('meta.lastModified gt "2030-01-01T00:00:00Z"')
    expect(at.where).toBe("u.updated_at > $1")
    expect(at.params).toEqual([new Date("2030-01-01T00:00:00Z")])
    expect(compile('meta.created le "2030-01-01T00:00:00Z"').where).toBe("u.created_at <= $1")
  })

  it("and, or, not and grouping compose; ne and not keep resources without the attribute", () => {
    expect(compile('not (title eq "x") and (active eq true or userName pr)').where).toBe(
      "(NOT COALESCE((lower((u.resource ->> 'title')) = $1), false) AND (u.active = $2 OR u.user_name IS NOT NULL))"
    )
    expect(compile('title ne "x"').where).toBe("lower((u.resource ->> 'title')) IS DISTINCT FROM $1")
  })

  it("refuses bad syntax, unknown attributes, wrong value types and misapplied operators", () => {
    expect(refusal("userName eq")).toMatch(/not valid/)
    expect(refusal('userName eq "a" and')).toMatch(/not valid/)
    expect(refusal('nickName eq "x"')).toMatch(/nickName/)
    expect(refusal('name.middleName eq "x"')).toMatch(/name.middleName/)
    expect(refusal('urn:example:custom:thing eq "x"')).toMatch(/not an attribute/)
    expect(refusal('active eq "yes"')).toMatch(/boolean/)
    expect(refusal("active gt true")).toMatch(/does not apply/)
    expect(refusal("userName eq 42")).toMatch(/string/)
    expect(refusal('meta.lastModified gt "not a date"')).toMatch(/dateTime/)
    expect(refusal('emails[type eq "work" and emails[value pr]]')).toBeTruthy()
    expect(refusal("")).toMatch(/empty/)
    expect(refusal("(".repeat(100) + 'userName eq "a"' + ")".repeat(100))).toMatch(/nests/)
    expect(refusal(`userName eq "${"a".repeat(5000)}"`)).toMatch(/longer/)
    expect(refusal("active eq True")).toMatch(/not valid/)
  })
})

describe("SCIM filters on Groups", () => {
  const groups = groupMapping(sql, "g", GroupResourceType)
  it("members.value is an EXISTS over the group's members in the same organization", () => {
    expect(compile('members[value eq "om_1"]', groups)).toEqual({
      where:
        "EXISTS (SELECT 1 FROM scim_group_members AS member WHERE member.organization_id = g.organization_id AND member.group_id = g.id AND member.membership_id = $1)",
      params: ["om_1"]
    })
    expect(compile('displayName eq "Eng"', groups)).toEqual({ where: "lower(g.display_name) = $1", params: ["eng"] })
    expect(compile('members.value eq "om_1"', groups).where).toContain("member.membership_id = $1")
  })
  it("refuses what groups do not filter on", () => {
    expect(refusal('members.display eq "x"', groups)).toMatch(/members.display/)
    expect(refusal('userName eq "x"', groups)).toMatch(/userName/)
  })
})
