/** People: accounts, sessions, sign-up and sign-in, and the caller's own view of themselves. */
import * as Schema from "effect/Schema"
import { BooleanFromString, Email, Timestamp, TrimmedText } from "./Common.js"
import { ApiKeyId, exampleId, OrganizationId, SessionId, SsoConnectionId, UserId } from "./Ids.js"
import { ApiKeyScope } from "./ApiKeys.js"
import { Actions } from "./Policy.js"
import { Membership, MyOrganization, Organization } from "./Organizations.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { acme, ada, exampleOf, examplePassword, exampleTime, exampleToken } from "./Examples.js"

export const PersonName = TrimmedText(1, 120, "A person's name")

// Never echo a password back, not even a rejected one: every check carries its own message.
const passwordMessage = { message: "must be 10 to 256 characters" }
export const Password = Schema.String.check(
  // Effect 4 documents `isMinLength(10)` as `minLength: 5`: JSON Schema counts code points, Effect UTF-16 units, and
  // 10 units may be 5 astral code points. The document keeps saying 10, as it did.
  Schema.isMinLength(10, { ...passwordMessage, toJsonSchema: () => ({ minLength: 10 }) }),
  Schema.isMaxLength(256, passwordMessage)
).annotate({ description: "10 to 256 characters." })

export class User extends Schema.Class<User>("User")(Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.String,
  createdAt: Timestamp
}).annotate({ examples: [{ id: ada.userId, email: ada.email, name: ada.name, createdAt: exampleTime() }] })) {}

export class Session extends Schema.Class<Session>("Session")(Schema.Struct({
  id: SessionId.annotateKey({ description: "What `GET /v1/me/sessions` lists it by and `DELETE /v1/me/sessions/{sessionId}` ends it by." }),
  token: Schema.String.annotate({ description: "Send as `Authorization: Bearer <token>`. Shown only here." }),
  expiresAt: Timestamp
}).annotate({ examples: [{ id: exampleId("ses"), token: exampleToken("ops"), expiresAt: exampleTime(30 * 24 * 60) }] })) {}

export const SignUpRequest = Schema.Struct({
  email: Email,
  password: Password,
  name: PersonName
}).annotate({ examples: [{ email: ada.email, password: examplePassword, name: ada.name }] })

export const SignInRequest = Schema.Struct({
  email: Email,
  password: Schema.String.check(
    Schema.isMinLength(1, { message: "must not be empty" }),
    Schema.isMaxLength(256, passwordMessage)
  ),
  newPassword: Schema.optionalKey(Password).annotateKey({
    description:
      "The person's own password, in place of a temporary one: a password set through a reset link an organization's owner or admin issued must be changed at its first sign-in (403 `password_change_required` without this member). Refused for any other password: change it with `POST /v1/me/password`."
  })
}).annotate({ examples: [{ email: ada.email, password: examplePassword }] })

export const AuthResult = Schema.Struct({ user: User, session: Session }).annotate({ identifier: "AuthResult" })

/**
 * An action of the policy table, as `GET /v1/me` lists what a credential may take: a string, not a union of the
 * table's literals, which the answer's encoder would test each of the ~70 listed actions against on every request.
 */
const PolicyAction = Schema.String.annotate({ description: `An action of the policy table (\`GET /v1/roles\`): ${Actions.length} of them.` })

export const MeCredential = Schema.Struct({
  type: Schema.Literals(["session", "api_key"]).annotate({ description: "A session token (`Authorization: Bearer`) or an organization API key (`X-API-Key`)." }),
  id: Schema.Union([SessionId, ApiKeyId]).annotate({ description: "The session's id (`ses_`) or the API key's (`apk_`)." }),
  scopes: Schema.NullOr(Schema.Array(ApiKeyScope)).annotate({
    description:
      "The actions an API key was made for (within its maker's role). Null for a session, or for a key made before scopes: it may take every action its maker's role allows."
  }),
  readOnly: Schema.Boolean.annotate({
    description: "True when the request narrowed the credential to reads (`Orgplane-Read-Only: true`): every operation but a GET or HEAD answers 403 `read_only_credential`."
  }),
  actions: Schema.Array(PolicyAction).annotate({
    description:
      "Every action of the policy table (`GET /v1/roles`) this credential may take in the active organization now: its member's role and, for an API key, its scopes, as the server checks them (an action reserved to the operator organization also needs that organization, 403 `operator_only` otherwise; `readOnly` narrows to reads on top). Empty without an organization."
  })
}).annotate({
  identifier: "MeCredential",
  description: "What authenticated the request, and what it may do: what an agent acting for the caller reads before choosing operations.",
  examples: [{ type: "session", id: exampleId("ses"), scopes: null, readOnly: false, actions: ["members.read", "teams.read"] }]
})

export const Me = Schema.Struct({
  user: User,
  organization: Schema.NullOr(Organization),
  membership: Schema.NullOr(Membership),
  credential: MeCredential
}).annotate({
  identifier: "Me",
  description: "The caller and their active organization (null until they create or join one)."
})

export const SwitchOrganizationRequest = Schema.Struct({ organizationId: OrganizationId }).annotate({
  examples: [{ organizationId: acme.id }]
})

export const UpdateMeRequest = Schema.Struct({ name: PersonName }).annotate({ examples: [{ name: "Ada King" }] })

/** The account's current password, entered again to confirm a change (never checked against the rules of a new one). */
export const CurrentPassword = Schema.String.check(
  Schema.isMinLength(1, { message: "must not be empty" }),
  Schema.isMaxLength(256, { message: "must be at most 256 characters" })
).annotate({ description: "The account's current password, 1 to 256 characters." })

export const ChangePasswordRequest = Schema.Struct({
  currentPassword: CurrentPassword,
  newPassword: Password,
  revokeApiKeys: Schema.optionalKey(Schema.Boolean).annotateKey({
    description:
      "Also revoke every API key the person's memberships made, in every organization (and the keys made with them). Default false: the answer lists them, so a person who changes a password because it leaked can see what still works and send this again with `true` (the current password is then the new one)."
  })
}).annotate({ examples: [{ currentPassword: examplePassword, newPassword: "a longer passphrase, 2026", revokeApiKeys: true }] })

/** One API key a person holds, as a password change reports it. */
export const HeldApiKey = Schema.Struct({
  id: ApiKeyId,
  organizationId: OrganizationId,
  name: Schema.String,
  prefix: Schema.String,
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp)
}).annotate({
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
  apiKeys: Schema.Array(HeldApiKey).annotate({
    description: "The API keys the person's memberships made, in every organization: still working unless `apiKeysRevoked`."
  }),
  apiKeysRevoked: Schema.Boolean.annotate({ description: "Whether `apiKeys` were revoked (`revokeApiKeys: true`)." })
}

export const ChangePasswordResult = Schema.Struct({
  otherSessionsEnded: Schema.Int.annotate({ description: "The person's other sessions, ended by the change." }),
  ...HeldApiKeysFields
}).annotate({
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
  method: Schema.Literals(["password", "sso"]).annotate({ description: "How the person signed in." }),
  ssoConnectionId: Schema.NullOr(SsoConnectionId).annotate({ description: "The SSO connection that signed it in (null: password)." }),
  current: Schema.Boolean.annotate({ description: "The session this request carries." }),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.annotateKey({
    description: "The last request it authenticated, to the minute (its creation before any): past `ORGPLANE_SESSION_IDLE_TIMEOUT` without one, it ends."
  }),
  expiresAt: Timestamp,
  ipAddress: Schema.NullOr(Schema.String).annotate({ description: "The client address it signed in from." }),
  userAgent: Schema.NullOr(Schema.String).annotate({ description: "The `User-Agent` it signed in with (at most 512 characters)." })
}).annotate({
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

export const MySessionPage = Page(MySession).annotate({ identifier: "MySessionPage" })

export const EndedSessions = Schema.Struct({
  ended: Schema.Int.annotate({ description: "How many sessions ended." })
}).annotate({ identifier: "EndedSessions", examples: [{ ended: 3 }] })

export const SessionPath = Schema.Struct({ sessionId: SessionId })

export const MyOrganizationPage = Page(MyOrganization).annotate({ identifier: "MyOrganizationPage" })

export const MyOrganizationsQuery = Schema.Struct({
  ...PageQueryFields,
  deleted: Schema.optionalKey(BooleanFromString).annotateKey({
    description:
      "`true`: instead, the deleted organizations the caller owns that may still be restored, with `deletedAt` and `purgeAfter` (default false)."
  })
}).annotate({ examples: [{ deleted: true }] })
export type MyOrganizationsQuery = typeof MyOrganizationsQuery.Type

export const ChangeEmailRequest = Schema.Struct({
  email: Email.annotateKey({ description: "The new address: unverified until proven (see `emailVerified` in the answer)." }),
  password: CurrentPassword
}).annotate({ examples: [{ email: "ada.lovelace@acme.example", password: examplePassword }] })

export const ChangeEmailResult = Schema.Struct({
  user: User,
  emailVerified: Schema.Boolean.annotate({
    description:
      "Whether the account's address is proven. False after a change to another address: an SSO sign-in does not link to an unproven address (it takes the account back first: docs/security.md, \"Pre-account hijacking through SSO\") until an SSO sign-in through a domain an organization verified proves it again. True when only the letters' case changed."
  })
}).annotate({
  identifier: "ChangeEmailResult",
  // An instance: Effect 4 encodes no plain object as a class, and an example it cannot encode is left out.
  examples: [{ user: new User({ id: ada.userId, email: "ada.lovelace@acme.example", name: ada.name, createdAt: exampleTime() }), emailVerified: false }]
})
