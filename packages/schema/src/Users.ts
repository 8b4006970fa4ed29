/** People: accounts, sessions, sign-up and sign-in, and the caller's own view of themselves. */
import * as Schema from "effect/Schema"
import { allErrors, Email, requestBody, Timestamp, TrimmedText } from "./Common.js"
import { ApiKeyId, exampleId, OrganizationId, SessionId, SsoConnectionId, UserId } from "./Ids.js"
import { Membership, MyOrganization, Organization } from "./Organizations.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, exampleOf, examplePassword, exampleTime, exampleToken } from "./Examples.js"

export const PersonName = TrimmedText(1, 120, "A person's name")

// Never echo a password back, not even a rejected one: every check carries its own message.
const passwordMessage = { message: () => "must be 10 to 256 characters" }
export const Password = Schema.String.pipe(
  Schema.minLength(10, passwordMessage),
  Schema.maxLength(256, passwordMessage)
).annotations({ description: "10 to 256 characters." })

export class User extends Schema.Class<User>("User")(Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.String,
  createdAt: Timestamp
}).annotations({ examples: [{ id: ada.userId, email: ada.email, name: ada.name, createdAt: exampleTime() }] })) {}

export class Session extends Schema.Class<Session>("Session")(Schema.Struct({
  id: SessionId.annotations({ description: "What `GET /v1/me/sessions` lists it by and `DELETE /v1/me/sessions/{sessionId}` ends it by." }),
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`. Shown only here." }),
  expiresAt: Timestamp
}).annotations({ examples: [{ id: exampleId("ses"), token: exampleToken("ops"), expiresAt: exampleTime(30 * 24 * 60) }] })) {}

export const SignUpRequest = Schema.Struct({
  email: Email,
  password: Password,
  name: PersonName
}).annotations({ ...requestBody, examples: [{ email: ada.email, password: examplePassword, name: ada.name }] })

export const SignInRequest = Schema.Struct({
  email: Email,
  password: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(256, passwordMessage)
  )
}).annotations({ ...requestBody, examples: [{ email: ada.email, password: examplePassword }] })

export const AuthResult = Schema.Struct({ user: User, session: Session }).annotations({ identifier: "AuthResult" })

export const Me = Schema.Struct({
  user: User,
  organization: Schema.NullOr(Organization),
  membership: Schema.NullOr(Membership)
}).annotations({
  identifier: "Me",
  description: "The caller and their active organization (null until they create or join one)."
})

export const SwitchOrganizationRequest = Schema.Struct({ organizationId: OrganizationId }).annotations({
  ...requestBody,
  examples: [{ organizationId: acme.id }]
})

export const UpdateMeRequest = Schema.Struct({ name: PersonName }).annotations({ ...requestBody, examples: [{ name: "Ada King" }] })

/** The account's current password, entered again to confirm a change (never checked against the rules of a new one). */
export const CurrentPassword = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(256, { message: () => "must be at most 256 characters" })
).annotations({ description: "The account's current password, 1 to 256 characters." })

export const ChangePasswordRequest = Schema.Struct({
  currentPassword: CurrentPassword,
  newPassword: Password,
  revokeApiKeys: Schema.optionalWith(Schema.Boolean, { exact: true }).annotations({
    description:
      "Also revoke every API key the person's memberships made, in every organization (and the keys made with them). Default false: the answer lists them, so a person who changes a password because it leaked can see what still works and send this again with `true` (the current password is then the new one)."
  })
}).annotations({ ...requestBody, examples: [{ currentPassword: examplePassword, newPassword: "a longer passphrase, 2026", revokeApiKeys: true }] })

/** One API key a person holds, as a password change reports it. */
export const HeldApiKey = Schema.Struct({
  id: ApiKeyId,
  organizationId: OrganizationId,
  name: Schema.String,
  prefix: Schema.String,
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp)
}).annotations({
  identifier: "HeldApiKey",
  examples: [{
    id: exampleId("apk"),
    organizationId: acme.id,
    name: "CI deploys",
    prefix: "opk_4f9c2a1b",
    createdAt: exampleTime(),
    expiresAt: exampleTime(90 * 24 * 60),
    lastUsedAt: exampleTime(60)
  }]
})
export type HeldApiKey = typeof HeldApiKey.Type

/** What a new password leaves of the API keys (a password change's answer, a reset's). */
export const HeldApiKeysFields = {
  apiKeys: Schema.Array(HeldApiKey).annotations({
    description: "The API keys the person's memberships made, in every organization: still working unless `apiKeysRevoked`."
  }),
  apiKeysRevoked: Schema.Boolean.annotations({ description: "Whether `apiKeys` were revoked (`revokeApiKeys: true`)." })
}

export const ChangePasswordResult = Schema.Struct({
  otherSessionsEnded: Schema.Int.annotations({ description: "The person's other sessions, ended by the change." }),
  ...HeldApiKeysFields
}).annotations({
  identifier: "ChangePasswordResult",
  examples: [{
    otherSessionsEnded: 2,
    apiKeys: [exampleOf(HeldApiKey)],
    apiKeysRevoked: true
  }]
})

/** One of the caller's sessions (`GET /v1/me/sessions`). */
export class MySession extends Schema.Class<MySession>("MySession")(Schema.Struct({
  id: SessionId,
  method: Schema.Literal("password", "sso").annotations({ description: "How the person signed in." }),
  ssoConnectionId: Schema.NullOr(SsoConnectionId).annotations({ description: "The SSO connection that signed it in (null: password)." }),
  current: Schema.Boolean.annotations({ description: "The session this request carries." }),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.annotations({
    description: "The last request it authenticated, to the minute (its creation before any): past `ORGPLANE_SESSION_IDLE_TIMEOUT` without one, it ends."
  }),
  expiresAt: Timestamp,
  ipAddress: Schema.NullOr(Schema.String).annotations({ description: "The client address it signed in from." }),
  userAgent: Schema.NullOr(Schema.String).annotations({ description: "The `User-Agent` it signed in with (at most 512 characters)." })
}).annotations({
  examples: [{
    id: exampleId("ses"),
    method: "password",
    ssoConnectionId: null,
    current: true,
    createdAt: exampleTime(),
    lastUsedAt: exampleTime(5),
    expiresAt: exampleTime(30 * 24 * 60),
    ipAddress: "203.0.113.7",
    userAgent: "orgplane-cli/0.1.0 node/20.19.0 linux"
  }]
})) {}

export const MySessionPage = Page(MySession).annotations({ identifier: "MySessionPage" })

export const EndedSessions = Schema.Struct({
  ended: Schema.Int.annotations({ description: "How many sessions ended." })
}).annotations({ identifier: "EndedSessions", examples: [{ ended: 3 }] })

export const SessionPath = Schema.Struct({ sessionId: SessionId })

export const MyOrganizationPage = Page(MyOrganization).annotations({ identifier: "MyOrganizationPage" })

export const MyOrganizationsQuery = Schema.Struct({
  ...PageQueryFields,
  deleted: Schema.optionalWith(Schema.BooleanFromString, { exact: true }).annotations({
    description:
      "`true`: instead, the deleted organizations the caller owns that may still be restored, with `deletedAt` and `purgeAfter` (default false)."
  })
}).annotations({ ...allErrors, examples: [{ deleted: true }] })
export type MyOrganizationsQuery = typeof MyOrganizationsQuery.Type

export const ChangeEmailRequest = Schema.Struct({
  email: Email.annotations({ description: "The new address: unverified until proven (see `emailVerified` in the answer)." }),
  password: CurrentPassword
}).annotations({ ...requestBody, examples: [{ email: "ada.lovelace@acme.example", password: examplePassword }] })

export const ChangeEmailResult = Schema.Struct({
  user: User,
  emailVerified: Schema.Boolean.annotations({
    description:
      "Whether the account's address is proven. False after a change to another address: an SSO sign-in does not link to an unproven address (it takes the account back first: docs/security.md, \"Pre-account hijacking through SSO\") until an SSO sign-in through a domain an organization verified proves it again. True when only the letters' case changed."
  })
}).annotations({
  identifier: "ChangeEmailResult",
  examples: [{ user: { id: ada.userId, email: "ada.lovelace@acme.example", name: ada.name, createdAt: exampleTime() }, emailVerified: false }]
})
