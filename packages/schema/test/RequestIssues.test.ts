/** The wording of a 400's details on one line, as error messages show them (the details themselves: HttpErrors and HostileInput tests). */
import { describe, expect, it } from "vitest"
import { formatPath, invalidRequestDetails, summarizeDetails } from "@orgplane/schema"

describe("summarizeDetails", () => {
  it("names the first problems with their paths, then counts the rest", () => {
    const details = invalidRequestDetails([
      { path: ["name"], message: "must be 1 to 255 characters long (after trimming white space)" },
      { path: ["memberIds", 0], message: "TypeID must start with 'om_'" },
      { path: [], message: "Expected an object,\n  actual null" },
      { path: ["input", "rawSourceText"], message: "is missing" },
      { path: ["limit"], message: "must be an integer from 1 to 100" }
    ])
    expect(summarizeDetails(details)).toBe(
      "name: must be 1 to 255 characters long (after trimming white space); memberIds[0]: TypeID must start with 'om_'; "
        + "Expected an object, actual null (and 2 more problems)"
    )
    expect(summarizeDetails(details.slice(0, 4))).toMatch(/ \(and 1 more problem\)$/)
    expect(summarizeDetails(details.slice(0, 1))).toBe("name: must be 1 to 255 characters long (after trimming white space)")
  })

  it("counts what a capped list left out", () => {
    const details = invalidRequestDetails(Array.from({ length: 120 }, (_, index) => ({ path: ["items", index], message: "is missing" })))
    expect(details).toHaveLength(51)
    expect(details.at(-1)).toEqual({ path: [], message: "70 more problems not listed." })
    expect(summarizeDetails(details)).toBe("items[0]: is missing; items[1]: is missing; items[2]: is missing (and 117 more problems)")
  })

  it("writes paths as code would", () => {
    expect(formatPath(["input", "rawSourceText"])).toBe("input.rawSourceText")
    expect(formatPath(["memberIds", 3, "id"])).toBe("memberIds[3].id")
    expect(formatPath(["headers", "x-api-key"])).toBe("headers[\"x-api-key\"]")
    expect(formatPath([])).toBe("")
  })
})
