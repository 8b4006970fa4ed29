/** HTTP handlers of the Members and Roles groups. Thin by design: the service authorizes. */
import { Api, CurrentMember, RoleCapabilities, RoleInfo } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Members } from "./Members.js"

export const MembersHttp = group(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => members.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => members.get(caller, path.memberId)))
      .handle("getDirectorySettings", () => Effect.flatMap(CurrentMember, members.getDirectorySettings))
      .handle("setDirectorySettings", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => members.setDirectorySettings(caller, payload)))
      .handle("changeRole", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => members.changeRole(caller, path.memberId, payload.role)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentMember, (caller) => members.remove(caller, path.memberId)))
      .handle("transferOwnership", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => members.transferOwnership(caller, path.memberId)))
  }))

const roles = { items: RoleCapabilities.map((entry) => new RoleInfo(entry)) }

export const RolesHttp = group(Api, "roles", (handlers) => Effect.succeed(handlers.handle("list", () => Effect.succeed(roles))))

export const layer = Layer.merge(MembersHttp, RolesHttp).pipe(Layer.provide(Members.layer))
