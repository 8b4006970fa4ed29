/** People: accounts, sessions, sign-up and sign-in, and the caller's own view of themselves. */
import * as Schema from "effect/Schema"
import { Email, requestBody, Timestamp, TrimmedText } from "./Common.js"
import { OrganizationId, UserId } from "./Ids.js"
import { Membership, Organization, OrganizationWithMembership } from "./Organizations.js"
import { Page } from "./Pagination.js"
import { acme, ada, examplePassword, exampleTime, exampleToken } from "./Examples.js"

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
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`. Shown only here." }),
  expiresAt: Timestamp
}).annotations({ examples: [{ token: exampleToken("ops"), expiresAt: exampleTime(30 * 24 * 60) }] })) {}

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

export const ChangePasswordRequest = Schema.Struct({
  currentPassword: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(256, { message: () => "must be at most 256 characters" })
  ),
  newPassword: Password
}).annotations({ ...requestBody, examples: [{ currentPassword: examplePassword, newPassword: "a longer passphrase, 2026" }] })

export const MyOrganizationPage = Page(OrganizationWithMembership).annotations({ identifier: "MyOrganizationPage" })
