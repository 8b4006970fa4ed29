/** HTTP handlers of the Members, Roles, Teams and Invitations groups. Thin by design: the services authorize. */
import { Api, CurrentActor, CurrentMember, RoleCapabilities, RoleInfo } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Invitations } from "./Invitations.js"
import { Members } from "./Members.js"
import { Teams } from "./Teams.js"

export const MembersHttp = group(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => members.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => members.get(caller, path.memberId)))
      .handle("changeRole", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => members.changeRole(caller, path.memberId, payload.role)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentMember, (caller) => members.remove(caller, path.memberId)))
      .handle("transferOwnership", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => members.transferOwnership(caller, path.memberId)))
  }))

const roles = { items: RoleCapabilities.map((entry) => new RoleInfo(entry)) }

export const RolesHttp = group(Api, "roles", (handlers) => Effect.succeed(handlers.handle("list", () => Effect.succeed(roles))))

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

export const InvitationsHttp = group(Api, "invitations", (handlers) =>
  Effect.gen(function*() {
    const invitations = yield* Invitations
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => invitations.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => invitations.list(caller, urlParams)))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentMember, (caller) => invitations.cancel(caller, path.invitationId)))
      .handle("accept", ({ payload }) =>
        Effect.flatMap(Effect.serviceOption(CurrentActor), (actor) => invitations.accept(actor, payload)))
  }))

export const layer = Layer.mergeAll(MembersHttp, RolesHttp, TeamsHttp, InvitationsHttp).pipe(
  Layer.provide([Members.Default, Teams.Default, Invitations.Default])
)
