/**
 * HTTP handlers of the Invitations group. Thin by design: the service authorizes.
 */
import { Api, CurrentActor, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RefusedCredential } from "../platform/PresentedCredential.js"
import { clientAddress } from "../platform/ClientAddress.js"
import { group } from "../platform/HttpErrors.js"
import { Invitations } from "./Invitations.js"

export const InvitationsHttp = group(Api, "invitations", (handlers) =>
  Effect.gen(function*() {
    const invitations = yield* Invitations
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => invitations.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => invitations.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => invitations.get(caller, params.invitationId)))
      .handle("cancel", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => invitations.cancel(caller, params.invitationId)))
      .handle("accept", ({ payload }) =>
        Effect.flatMap(
          Effect.all([Effect.serviceOption(CurrentActor), Effect.serviceOption(RefusedCredential), clientAddress]),
          ([actor, refused, address]) => invitations.accept(actor, payload, address, refused)
        ))
      .handle("preview", ({ payload }) => invitations.preview(payload.token))
  }))

export const layer = InvitationsHttp.pipe(Layer.provide(Invitations.layer))
