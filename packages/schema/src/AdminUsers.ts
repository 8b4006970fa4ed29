/** The instance's people as its operator sees them (`GET /v1/admin/users`): every account, disabled ones marked. */
import * as Schema from "effect/Schema"
import { BooleanFromString, searchText, Timestamp } from "./Common.js"
import { ada, exampleTime } from "./Examples.js"
import { UserId } from "./Ids.js"
import { Page, PageQueryFields } from "./Pagination.js"
import { NonNegativeInt } from "./internal/counts.js"

export class AdminUser extends Schema.Class<AdminUser>("AdminUser")(Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.String,
  createdAt: Timestamp,
  emailVerified: Schema.Boolean.annotate({ description: "Whether the address is proven to the instance (an SSO sign-in through a verified domain)." }),
  disabledAt: Schema.NullOr(Timestamp).annotate({
    description: "When the operator disabled the account (its sessions ended, its API keys and sign-ins refused); null while it is enabled."
  }),
  organizationCount: NonNegativeInt.annotate({ description: "The organizations the person is an active member of." })
}).annotate({
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
  email: Schema.optionalKey(searchText("Only accounts whose email contains this text (case-insensitive).")),
  disabled: Schema.optionalKey(BooleanFromString).annotateKey({
    description: "`true`: only disabled accounts; `false`: only enabled ones; absent: both."
  })
}).annotate({ examples: [{ email: "acme.example", disabled: false }] })
export type AdminUserListQuery = typeof AdminUserListQuery.Type

export const AdminUserPage = Page(AdminUser).annotate({ identifier: "AdminUserPage" })

export const AdminUserPath = Schema.Struct({ userId: UserId })

export const AdminUserResponse = Schema.Struct({ user: AdminUser }).annotate({ identifier: "AdminUserResponse" })
