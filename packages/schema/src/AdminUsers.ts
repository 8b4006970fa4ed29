/** The instance's people as its operator sees them (`GET /v1/admin/users`): every account, disabled ones marked. */
import * as Schema from "effect/Schema"
import { allErrors, searchText, Timestamp } from "./Common.js"
import { ada, exampleTime } from "./Examples.js"
import { UserId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"

export class AdminUser extends Schema.Class<AdminUser>("AdminUser")(Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.String,
  createdAt: Timestamp,
  emailVerified: Schema.Boolean.annotations({ description: "Whether the address is proven to the instance (an SSO sign-in through a verified domain)." }),
  disabledAt: Schema.NullOr(Timestamp).annotations({
    description: "When the operator disabled the account (its sessions ended, its API keys and sign-ins refused); null while it is enabled."
  }),
  organizationCount: Schema.NonNegativeInt.annotations({ description: "The organizations the person is an active member of." })
}).annotations({
  examples: [{
    id: ada.userId,
    email: ada.email,
    name: ada.name,
    createdAt: exampleTime(),
    emailVerified: false,
    disabledAt: null,
    organizationCount: 1
  }]
})) {}

export const AdminUserListQuery = Schema.Struct({
  ...PageQueryFields,
  email: Schema.optionalWith(searchText("Only accounts whose email contains this text (case-insensitive)."), { exact: true }),
  disabled: Schema.optionalWith(Schema.BooleanFromString, { exact: true }).annotations({
    description: "`true`: only disabled accounts; `false`: only enabled ones; absent: both."
  })
}).annotations({ ...allErrors, examples: [{ email: "acme.example", disabled: false }] })
export type AdminUserListQuery = typeof AdminUserListQuery.Type

export const AdminUserPage = Page(AdminUser).annotations({ identifier: "AdminUserPage" })

export const AdminUserPath = Schema.Struct({ userId: UserId })

export const AdminUserResponse = Schema.Struct({ user: AdminUser }).annotations({ identifier: "AdminUserResponse" })
