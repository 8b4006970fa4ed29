/** A person's account as a whole: what it holds, exported (`GET /v1/me/export`), and its deletion (`DELETE /v1/me`). */
import * as Schema from "effect/Schema"
import { Timestamp } from "./Common.js"
import { exampleOf, acme, ada, examplePassword, exampleTime } from "./Examples.js"
import { MembershipId, OrganizationId, UserId } from "./Ids.js"
import { MemoryWithContexts, MemoryWithContextsResponse } from "./Memory.js"
import { Role } from "./Organizations.js"
import { CurrentPassword, HeldApiKey, MySession, User } from "./Users.js"
import { NonNegativeInt } from "./internal/counts.js"

export const DeleteAccountRequest = Schema.Struct({
  // The description goes on the schema, replacing CurrentPassword's (a key's description beside the schema's own would
  // sit in allOf).
  password: Schema.optionalKey(CurrentPassword.annotate({
    description:
      "The account's password. Needed unless the session signed in within `ORGPLANE_RECENT_AUTHENTICATION` (2 hours by default); an account made by SSO, which has no password, signs in again through SSO instead. Send `{}` to rely on the recent sign-in."
  }))
}).annotate({ examples: [{ password: examplePassword }] })

/**
 * The pseudonym that replaces a deleted person's name and email in what stays (the audit log, the account's tombstone):
 * `deleted-user-` and 12 hexadecimal characters of the SHA-256 of their user id, the same everywhere.
 */
export const Pseudonym = Schema.String.check(Schema.isPattern(/^deleted-user-[0-9a-f]{12}$/u)).annotate({
  identifier: "Pseudonym",
  description: "`deleted-user-` and 12 hexadecimal characters derived from the user id: the same in every organization's audit log."
})

const Count = (description: string) => NonNegativeInt.annotate({ description })

export const AccountDeletion = Schema.Struct({
  userId: UserId.annotateKey({ description: "The deleted account's id: kept by its tombstone and the audit log, naming nobody." }),
  pseudonym: Pseudonym,
  organizationsLeft: Schema.Array(OrganizationId).annotate({
    description: "The organizations whose membership ended (a removal, as `DELETE /v1/members/{memberId}` makes it); each records `user.delete`."
  }),
  organizationsWithoutMembers: Schema.Array(OrganizationId).annotate({
    description:
      "Of those, the organizations the person was the only active member of: each is deleted with the account (restorable by the instance's operator for `ORGPLANE_ORGANIZATION_DELETION_GRACE`, then purged), but for the operator organization, which stays with no member."
  }),
  removed: Schema.Struct({
    sessions: Count("Sessions ended."),
    apiKeys: Count("API keys deleted, in every organization (the keys made with them included)."),
    memories: Count("Memories deleted, with their snippets, in every organization."),
    mcpCredentials: Count("The person's own credentials of per-member MCP connections, and authorizations they started."),
    suiteConnections: Count("Mail and calendar suite connections (credentials and pending authorizations)."),
    ssoLinks: Count("External identities (SSO links) that signed the person in."),
    scimUsers: Count("SCIM Users of the person, marked deleted as a directory's DELETE would (the directory's attributes forgotten).")
  })
}).annotate({
  identifier: "AccountDeletion",
  examples: [{
    userId: ada.userId,
    pseudonym: "deleted-user-3f2a9c41d07b",
    organizationsLeft: [acme.id],
    organizationsWithoutMembers: [],
    removed: { sessions: 2, apiKeys: 1, memories: 4, mcpCredentials: 1, suiteConnections: 1, ssoLinks: 1, scimUsers: 0 }
  }]
})

/** One of the person's memberships, current or ended, as the export shows it. */
export const ExportedMembership = Schema.Struct({
  organization: Schema.Struct({ id: OrganizationId, name: Schema.String }),
  membership: Schema.Struct({
    id: MembershipId,
    role: Role,
    createdAt: Timestamp,
    removedAt: Schema.NullOr(Timestamp).annotate({ description: "When the membership ended (removed, or left); null while it lasts." }),
    suspendedAt: Schema.NullOr(Timestamp).annotate({ description: "When the organization's directory (SCIM) suspended it; null otherwise." })
  })
}).annotate({ identifier: "ExportedMembership" })

export const ExportedMemory = Schema.Struct({
  organizationId: OrganizationId.annotateKey({ description: "The organization the memory was saved in." }),
  memory: MemoryWithContexts
}).annotate({ identifier: "ExportedMemory" })

export const AccountExport = Schema.Struct({
  format: Schema.Literal("orgplane.account-export.v1").annotate({ description: "What this document is, and the version of its shape." }),
  exportedAt: Timestamp,
  user: Schema.Struct({
    ...User.fields,
    emailVerified: Schema.Boolean.annotate({ description: "Whether the address is proven to the instance (an SSO sign-in through a verified domain)." })
  }).annotate({ description: "The account's profile." }),
  memberships: Schema.Array(ExportedMembership).annotate({
    description: "Every membership, current and ended, oldest first, with its organization's name and the role held."
  }),
  memories: Schema.Array(ExportedMemory).annotate({ description: "Every memory the person saved, in every organization, newest first, with its snippets." }),
  sessions: Schema.Array(MySession).annotate({ description: "The live sessions, as `GET /v1/me/sessions` lists them (`current`: the one that asked)." }),
  apiKeys: Schema.Array(HeldApiKey).annotate({
    description: "The API keys the person's memberships made, in every organization they belong to: their metadata, never a secret."
  })
}).annotate({
  identifier: "AccountExport",
  description: "Everything the instance keeps of a person that is theirs, as one JSON document (`GET /v1/me/export`).",
  examples: [{
    format: "orgplane.account-export.v1",
    exportedAt: exampleTime(60),
    user: { ...exampleOf(User), emailVerified: false },
    memberships: [{
      organization: { id: acme.id, name: acme.name },
      membership: { id: ada.membershipId, role: "owner", createdAt: exampleTime(), removedAt: null, suspendedAt: null }
    }],
    memories: [{ organizationId: acme.id, memory: exampleOf(MemoryWithContextsResponse).memory }],
    sessions: [exampleOf(MySession)],
    apiKeys: [exampleOf(HeldApiKey)]
  }]
})
