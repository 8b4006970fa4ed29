/** Users, sessions, organizations, memberships and API keys: who is calling and on whose behalf. */
import { Schema } from "effect"
import { allErrors, Email, Timestamp } from "./Common.js"
import { ApiKeyId, MembershipId, OrganizationId, UserId } from "./Ids.js"
import { Page } from "./Pagination.js"

export const Role = Schema.Literal("owner", "admin", "member").annotations({
  identifier: "Role",
  description: "Organization role. `owner` > `admin` > `member`: a role may do everything the roles below it may."
})
export type Role = typeof Role.Type

export const Plan = Schema.Literal("free", "team", "enterprise").annotations({
  identifier: "Plan",
  description: "Organization plan. Enterprise-only features answer 402 `enterprise_plan_required` on other plans."
})
export type Plan = typeof Plan.Type

export const PersonName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(120))
export const OrganizationName = Schema.Trim.pipe(Schema.minLength(2), Schema.maxLength(120))
// Never echo a password back, not even a rejected one: every check carries its own message.
const passwordMessage = { message: () => "must be 10 to 256 characters" }
export const Password = Schema.String.pipe(
  Schema.minLength(10, passwordMessage),
  Schema.maxLength(256, passwordMessage)
).annotations({ description: "10 to 256 characters." })

export class User extends Schema.Class<User>("User")({
  id: UserId,
  email: Schema.String,
  name: Schema.String,
  createdAt: Timestamp
}) {}

export class Organization extends Schema.Class<Organization>("Organization")({
  id: OrganizationId,
  name: Schema.String,
  plan: Plan,
  provisional: Schema.Boolean.annotations({
    description: "True for a workspace created by bootstrap whose owner claim has not been redeemed yet."
  }),
  createdAt: Timestamp
}) {}

export class Membership extends Schema.Class<Membership>("Membership")({
  id: MembershipId,
  organizationId: OrganizationId,
  userId: Schema.NullOr(UserId),
  role: Role,
  createdAt: Timestamp
}) {}

export class Session extends Schema.Class<Session>("Session")({
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`. Shown only here." }),
  expiresAt: Timestamp
}) {}

export const SignUpRequest = Schema.Struct({
  email: Email,
  password: Password,
  name: PersonName
}).annotations(allErrors)

export const SignInRequest = Schema.Struct({
  email: Email,
  password: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(256, passwordMessage)
  )
}).annotations(allErrors)

export const AuthResult = Schema.Struct({ user: User, session: Session }).annotations({ identifier: "AuthResult" })

export const Me = Schema.Struct({
  user: User,
  organization: Schema.NullOr(Organization),
  membership: Schema.NullOr(Membership)
}).annotations({
  identifier: "Me",
  description: "The caller and their active organization (null until they create or join one)."
})

export const SwitchOrganizationRequest = Schema.Struct({ organizationId: OrganizationId }).annotations(allErrors)

export const CreateOrganizationRequest = Schema.Struct({ name: OrganizationName }).annotations(allErrors)

export const OrganizationWithMembership = Schema.Struct({
  organization: Organization,
  membership: Membership
}).annotations({ identifier: "OrganizationWithMembership" })

export const ChangePlanRequest = Schema.Struct({ plan: Plan }).annotations(allErrors)

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: ApiKeyId,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "The first characters of the key, to recognise it." }),
  createdByOrgMembershipId: MembershipId,
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp)
}) {}

export const CreateApiKeyRequest = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(64)),
  expiresAt: Schema.optionalWith(Timestamp, { exact: true }).annotations({
    description: "When the key stops working. Omit for a key that does not expire."
  })
}).annotations(allErrors)

export const CreatedApiKey = Schema.Struct({
  apiKey: ApiKey,
  key: Schema.String.annotations({ description: "The key itself, sent as `x-api-key`. Shown only once." })
}).annotations({ identifier: "CreatedApiKey" })

export const ApiKeyPage = Page(ApiKey).annotations({ identifier: "ApiKeyPage" })
