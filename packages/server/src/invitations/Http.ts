/** HTTP handlers of the Invitations group. Thin by design: the service authorizes. */
import { Api, CurrentActor, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Invitations } from "./Invitations.js"

export const InvitationsHttp = group(Api, "invitations", (handlers) =>
  Effect.gen(function*() {
    const invitations = yield* Invitations
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => invitations.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => invitations.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => invitations.get(caller, path.invitationId)))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentMember, (caller) => invitations.cancel(caller, path.invitationId)))
      .handle("accept", ({ payload }) =>
        Effect.flatMap(Effect.serviceOption(CurrentActor), (actor) => invitations.accept(actor, payload)))
      .handle("preview", ({ payload }) => invitations.preview(payload.token))
  }))

export const layer = InvitationsHttp.pipe(Layer.provide(Invitations.layer))
