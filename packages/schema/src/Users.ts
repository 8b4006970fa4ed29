/** People: accounts, sessions, sign-up and sign-in, and the caller's own view of themselves. */
import { Schema } from "effect"
import { Email, requestBody, Timestamp, TrimmedText } from "./Common.js"
import { OrganizationId, UserId } from "./Ids.js"
import { Membership, Organization, OrganizationWithMembership } from "./Organizations.js"
import { Page } from "./Pagination.js"

export const PersonName = TrimmedText(1, 120, "A person's name")

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

export class Session extends Schema.Class<Session>("Session")({
  token: Schema.String.annotations({ description: "Send as `Authorization: Bearer <token>`. Shown only here." }),
  expiresAt: Timestamp
}) {}

export const SignUpRequest = Schema.Struct({
  email: Email,
  password: Password,
  name: PersonName
}).annotations(requestBody)

export const SignInRequest = Schema.Struct({
  email: Email,
  password: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(256, passwordMessage)
  )
}).annotations(requestBody)

export const AuthResult = Schema.Struct({ user: User, session: Session }).annotations({ identifier: "AuthResult" })

export const Me = Schema.Struct({
  user: User,
  organization: Schema.NullOr(Organization),
  membership: Schema.NullOr(Membership)
}).annotations({
  identifier: "Me",
  description: "The caller and their active organization (null until they create or join one)."
})

export const SwitchOrganizationRequest = Schema.Struct({ organizationId: OrganizationId }).annotations(requestBody)

export const UpdateMeRequest = Schema.Struct({ name: PersonName }).annotations(requestBody)

export const ChangePasswordRequest = Schema.Struct({
  currentPassword: Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(256, { message: () => "must be at most 256 characters" })
  ),
  newPassword: Password
}).annotations(requestBody)

export const MyOrganizationPage = Page(OrganizationWithMembership).annotations({ identifier: "MyOrganizationPage" })
