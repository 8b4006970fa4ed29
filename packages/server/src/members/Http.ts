/**
 * HTTP handlers of the Members and Roles groups. Thin by design: the service authorizes.
 */
import { Api, CurrentMember, RoleCapabilities, RoleInfo } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Members } from "./Members.js"

export const MembersHttp = group(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    return handlers
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => members.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => members.get(caller, params.memberId)))
      .handle("getDirectorySettings", () => Effect.flatMap(Effect.service(CurrentMember), members.getDirectorySettings))
      .handle("setDirectorySettings", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => members.setDirectorySettings(caller, payload)))
      .handle("changeRole", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => members.changeRole(caller, params.memberId, payload.role)))
      .handle("remove", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => members.remove(caller, params.memberId)))
      .handle("transferOwnership", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => members.transferOwnership(caller, params.memberId)))
  }))

const roles = { items: RoleCapabilities.map((entry) => new RoleInfo(entry)) }

export const RolesHttp = group(Api, "roles", (handlers) => Effect.succeed(handlers.handle("list", () => Effect.succeed(roles))))

export const layer = Layer.merge(MembersHttp, RolesHttp).pipe(Layer.provide(Members.layer))
