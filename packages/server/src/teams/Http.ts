/** HTTP handlers of the Teams group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Teams } from "./Teams.js"

export const TeamsHttp = group(Api, "teams", (handlers) =>
  Effect.gen(function*() {
    const teams = yield* Teams
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => teams.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => teams.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => teams.get(caller, path.teamId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => teams.update(caller, path.teamId, payload)))
      .handle("addMembers", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => teams.addMembers(caller, path.teamId, payload.memberIds)))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => teams.removeMember(caller, path.teamId, path.memberId)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => teams.remove(caller, path.teamId)))
  }))

export const layer = TeamsHttp.pipe(Layer.provide(Teams.layer))
