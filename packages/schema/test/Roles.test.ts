import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Roles from "../src/Roles.js"
import { examplesOfComponent, roundTrips, sameSchemas } from "./differential.js"
import { as010 } from "./changes.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Roles3 = effect3("Roles")

describe("Roles on Effect 4", () => {
  it("describes the roles as Effect 3 did", () => {
    expect(as010(Roles.RoleCapabilities)).toEqual(Roles3.RoleCapabilities)
    expect(as010(Roles.RolesDescription)).toBe(Roles3.RolesDescription)
  })

  it("gives RoleInfo and RoleList the JSON Schema and examples of the Effect 3 document", () => {
    expect(sameSchemas(Roles, Roles3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })).toEqual(["RoleInfo", "RoleList"])
    roundTrips(Roles.RoleInfo, Roles3.RoleInfo, examplesOfComponent("RoleInfo"))
    roundTrips(Roles.RoleList, Roles3.RoleList, [{ items: as010(Roles.RoleCapabilities) }])
  })
})
