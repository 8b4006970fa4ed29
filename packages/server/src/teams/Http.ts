/**
 * HTTP handlers of the Teams group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Teams } from "./Teams.js"

export const TeamsHttp = group(Api, "teams", (handlers) =>
  Effect.gen(function*() {
    const teams = yield* Teams
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.get(caller, params.teamId)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.update(caller, params.teamId, payload)))
      .handle("addMembers", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.addMembers(caller, params.teamId, payload.memberIds)))
      .handle("removeMember", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.removeMember(caller, params.teamId, params.memberId)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => teams.remove(caller, params.teamId)))
  }))

export const layer = TeamsHttp.pipe(Layer.provide(Teams.layer))
