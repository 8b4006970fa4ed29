/** HTTP handlers of the Members, Roles, Teams and Invitations groups. Thin by design: the services check roles. */
import { Api, CurrentActor, RoleCapabilities, RoleInfo } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { currentMember } from "../platform/Auth.js"
import { group } from "../platform/HttpErrors.js"
import { Invitations } from "./Invitations.js"
import { Members } from "./Members.js"
import { Teams } from "./Teams.js"

export const MembersHttp = group(Api, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(currentMember, (caller) => members.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(currentMember, (caller) => members.get(caller, path.memberId)))
      .handle("changeRole", ({ path, payload }) =>
        Effect.flatMap(currentMember, (caller) => members.changeRole(caller, path.memberId, payload.role)))
      .handle("remove", ({ path }) => Effect.flatMap(currentMember, (caller) => members.remove(caller, path.memberId)))
      .handle("transferOwnership", ({ path }) =>
        Effect.flatMap(currentMember, (caller) => members.transferOwnership(caller, path.memberId)))
  }))

const roles = { items: RoleCapabilities.map((entry) => new RoleInfo(entry)) }

export const RolesHttp = group(Api, "roles", (handlers) => Effect.succeed(handlers.handle("list", () => Effect.succeed(roles))))

export const TeamsHttp = group(Api, "teams", (handlers) =>
  Effect.gen(function*() {
    const teams = yield* Teams
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(currentMember, (caller) => teams.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(currentMember, (caller) => teams.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(currentMember, (caller) => teams.get(caller, path.teamId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(currentMember, (caller) => teams.update(caller, path.teamId, payload)))
      .handle("addMembers", ({ path, payload }) =>
        Effect.flatMap(currentMember, (caller) => teams.addMembers(caller, path.teamId, payload.memberIds)))
      .handle("removeMember", ({ path }) =>
        Effect.flatMap(currentMember, (caller) => teams.removeMember(caller, path.teamId, path.memberId)))
      .handle("delete", ({ path }) => Effect.flatMap(currentMember, (caller) => teams.remove(caller, path.teamId)))
  }))

export const InvitationsHttp = group(Api, "invitations", (handlers) =>
  Effect.gen(function*() {
    const invitations = yield* Invitations
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(currentMember, (caller) => invitations.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(currentMember, (caller) => invitations.list(caller, urlParams)))
      .handle("cancel", ({ path }) => Effect.flatMap(currentMember, (caller) => invitations.cancel(caller, path.invitationId)))
      .handle("accept", ({ payload }) =>
        Effect.flatMap(Effect.serviceOption(CurrentActor), (actor) => invitations.accept(actor, payload)))
  }))

export const layer = Layer.mergeAll(MembersHttp, RolesHttp, TeamsHttp, InvitationsHttp).pipe(
  Layer.provide([Members.Default, Teams.Default, Invitations.Default])
)
