/** Invitations: bringing a person into an organization by email. */
import * as Schema from "effect/Schema"
import { Email, Timestamp } from "./Common.js"
import { exampleId, InvitationId, MembershipId, OrganizationId } from "./Ids.js"
import { Membership, Organization } from "./Organizations.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { Password, PersonName, Session, User } from "./Users.js"
import { acme, ada, edsger, examplePassword, exampleTime, exampleToken } from "./Examples.js"

export const InvitationStatus = Schema.Literals(["pending", "accepted", "canceled", "expired"]).annotate({
  identifier: "InvitationStatus",
  description: "`expired` is a pending invitation past its `expiresAt`."
})
export type InvitationStatus = typeof InvitationStatus.Type

export const InvitableRole = Schema.Literals(["admin", "member"]).annotate({
  description: "Invitations make members or admins; owners are made by an owner (role change or ownership transfer)."
})

export const InvitationDelivery = Schema.Literals(["mailed", "shown"]).annotate({
  identifier: "InvitationDelivery",
  description:
    "How the invite token reaches the invitee. `mailed`: the server mails it to the invited address and nobody else ever sees it, so accepting it proves the address is the acceptor's (as a mailed verification link does). `shown`: the token is in the answer to its inviter, who sends it on; accepting it proves only that someone holding the token joined, not that the mailbox is theirs (docs/security.md, \"Who owns an account\")."
})
export type InvitationDelivery = typeof InvitationDelivery.Type

export class Invitation extends Schema.Class<Invitation>("Invitation")(Schema.Struct({
  id: InvitationId,
  organizationId: OrganizationId,
  email: Schema.String,
  role: InvitableRole,
  status: InvitationStatus,
  delivery: InvitationDelivery,
  createdByOrgMembershipId: MembershipId,
  acceptedByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  expiresAt: Timestamp
}).annotate({
  examples: [{
    id: exampleId("inv"),
    organizationId: acme.id,
    email: edsger.email,
    role: "member",
    status: "pending",
    delivery: "shown",
    createdByOrgMembershipId: ada.membershipId,
    acceptedByOrgMembershipId: null,
    createdAt: exampleTime(30),
    expiresAt: exampleTime(30 + 7 * 24 * 60)
  }]
})) {}

export const InvitationPage = Page(Invitation).annotate({ identifier: "InvitationPage" })

/** Every bad member reported: the API's `HttpApi.QueryParseOptions` (`allErrors`), not an annotation here. */
export const InvitationListQuery = Schema.Struct({
  ...PageQueryFields,
  status: Schema.optionalKey(InvitationStatus).annotateKey({
    description: "Only invitations in this status (default: all)."
  })
})
export type InvitationListQuery = typeof InvitationListQuery.Type

export const InvitationPath = Schema.Struct({ invitationId: InvitationId })

export const CreateInvitationRequest = Schema.Struct({
  email: Email,
  role: InvitableRole,
  delivery: Schema.optionalKey(InvitationDelivery).annotateKey({
    description:
      "`mailed` (the default when the instance has mail settings) or `shown` (the default without them): see `InvitationDelivery`. `mailed` without mail settings is refused (409 `mail_not_configured`)."
  })
}).annotate({ examples: [{ email: edsger.email, role: "member" }, { email: edsger.email, role: "member", delivery: "shown" }] })

const inviteToken = Schema.NullOr(Schema.String).annotate({
  description:
    "The invitation's secret, for `POST /v1/invitations/accept`, when its delivery is `shown`: shown only here, for the inviter to send to the invitee. Null when it is `mailed`: only the invited address's mailbox has it.",
  examples: [exampleToken("opi")]
})

/** 201: a new invitation. */
export const CreatedInvitation = Schema.Struct({
  invitation: Invitation,
  inviteToken,
  refreshed: Schema.Literal(false)
}).annotate({ identifier: "CreatedInvitation" })

/** 200: the email already had a pending invitation; it now has a new token, role and expiry. */
export const RefreshedInvitation = Schema.Struct({
  invitation: Invitation,
  inviteToken,
  refreshed: Schema.Literal(true).annotate({ description: "The earlier token no longer works." })
}).annotate({ identifier: "RefreshedInvitation" })

/** What creating an invitation answers: 201 with a new one, or 200 with a refreshed one. */
export const InvitationCreated = Schema.Union([CreatedInvitation, RefreshedInvitation])

export const InvitationResponse = Schema.Struct({ invitation: Invitation }).annotate({
  identifier: "InvitationResponse"
})

export const AcceptInvitationRequest = Schema.Struct({
  token: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
  // A nested request body: the API's `HttpApi.PayloadParseOptions` (`requestBody`) apply to it as well.
  signUp: Schema.optionalKey(
    Schema.Struct({ name: PersonName, password: Password }).annotate({
      description: "Creates an account for the invitation's email and signs it in, in the same call. Omit to accept as the signed-in caller."
    })
  )
}).annotate({ examples: [{ token: exampleToken("opi"), signUp: { name: edsger.name, password: examplePassword } }] })

export const PreviewInvitationRequest = Schema.Struct({
  token: AcceptInvitationRequest.fields.token.annotate({ description: "The invite token, as sent to the invitee." })
}).annotate({ examples: [{ token: exampleToken("opi") }] })

/** What an invite token shows before it is accepted: enough to decide, nothing more (no ids, no emails). */
export const InvitationPreview = Schema.Struct({
  organization: Schema.Struct({ name: Schema.String }),
  role: InvitableRole,
  invitedBy: Schema.NullOr(Schema.Struct({ name: Schema.String })).annotate({
    description: "Who sent it, by name; null when their account no longer exists."
  }),
  expiresAt: Timestamp
}).annotate({
  identifier: "InvitationPreview",
  examples: [{ organization: { name: acme.name }, role: "member", invitedBy: { name: ada.name }, expiresAt: exampleTime(30 + 7 * 24 * 60) }]
})

export const AcceptedInvitation = Schema.Struct({
  organization: Organization,
  membership: Membership,
  user: User,
  session: Schema.NullOr(Session).annotate({
    description: "The new account's session when `signUp` was given (always then); null when accepted while signed in."
  })
}).annotate({
  identifier: "AcceptedInvitation",
  // Instances: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
  examples: [{
    organization: new Organization({ id: acme.id, name: acme.name, plan: "team", provisional: false, createdAt: exampleTime() }),
    membership: new Membership({ id: edsger.membershipId, organizationId: acme.id, userId: edsger.userId, role: "member", createdAt: exampleTime(40) }),
    user: new User({ id: edsger.userId, email: edsger.email, name: edsger.name, createdAt: exampleTime(40) }),
    session: new Session({ id: exampleId("ses", 4), token: exampleToken("ops", 4), expiresAt: exampleTime(40 + 30 * 24 * 60) })
  }]
})
