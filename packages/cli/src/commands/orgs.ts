/**
 * `orgplane orgs list | create | switch | get | update | delete | restore`: the signed-in person's organizations, and
 * the active one's profile and life (docs/lifecycle.md).
 */
import {
  Me,
  MyOrganizationPage,
  type OrganizationDetails,
  OrganizationDetailsResponse,
  OrganizationDeletionResponse,
  OrganizationId,
  OrganizationLogoUrl,
  OrganizationMetadata,
  OrganizationName,
  OrganizationResponse,
  OrganizationsApi,
  OrganizationWithMembership,
  UsersApi
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { ifOn, requireSome } from "./catalog.js"

export const list = Commands.list("list", {
  summary: "List the organizations you belong to, with your role in each (needs a session); --deleted, those you may restore.",
  noun: "organizations",
  inputs: {
    deleted: Inputs.boolean("deleted", {
      description: "Instead, the deleted organizations you own that may still be restored ('orgs restore'), with when their purge comes."
    })
  },
  call: (client, { deleted }, page) => client.users.listOrganizations({ query: { ...page, ...ifOn("deleted", deleted) } }),
  output: MyOrganizationPage,
  columns: [
    ["id", ({ organization }) => organization.id],
    ["name", ({ organization }) => organization.name],
    ["role", ({ membership }) => membership.role],
    ["plan", ({ organization }) => organization.plan],
    ["joined", ({ membership }) => Output.date(membership.createdAt)],
    ["purged after", ({ purgeAfter }) => purgeAfter === undefined ? "-" : Output.date(purgeAfter)]
  ]
})

export const create = Commands.endpoint("create", {
  examples: [
    ["Create an organization and make it the active one.", ["orgs", "create", "My Org"]],
  ],
  summary: "Create an organization (you become its owner) and make it the active one.",
  inputs: { name: Inputs.argument("name", { schema: OrganizationName }) },
  call: (client, { name }) => client.organizations.create({ payload: { name } }),
  output: OrganizationWithMembership,
  human: ({ membership, organization }) =>
    `Created organization ${organization.name} (${organization.id}), plan ${organization.plan}; you are its ${membership.role} and it is now your active organization.`
})

export const switchTo = Commands.endpoint("switch", {
  summary: "Make another organization you belong to the session's active one.",
  inputs: {
    organizationId: Inputs.argument("organizationId", { schema: OrganizationId, description: "The organization (org_…), from 'orgs list'." })
  },
  call: (client, { organizationId }) => client.users.switchOrganization({ payload: { organizationId } }),
  output: Me,
  human: ({ membership, organization }, { organizationId }) =>
    `Switched to ${organization?.name ?? organizationId} (${organizationId}) as ${membership?.role ?? "member"}.`
})

/** The organization's profile, as `orgs get` and `orgs update` print it. */
const describeOrganization = (organization: OrganizationDetails) =>
  [
    `${organization.name} (${organization.id})`,
    Output.fields([
      ["plan", organization.plan],
      ["members", String(organization.memberCount)],
      ["logo", organization.logoUrl ?? "-"],
      ["metadata", Object.keys(organization.metadata).length === 0 ? "-" : Object.entries(organization.metadata).sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => `${key}=${value}`).join(", ")],
      ["provisional", organization.provisional ? "yes (a bootstrapped workspace not claimed by its owner yet)" : "no"],
      ["created", Output.date(organization.createdAt)],
      ["updated", Output.date(organization.updatedAt)]
    ]).split("\n").map((line) => `  ${line}`).join("\n")
  ].join("\n")

export const get = Commands.endpoint("get", {
  summary: "Show the active organization: name, plan, member count, logo and metadata (any member).",
  inputs: {},
  call: (client) => client.organizations.get(),
  output: OrganizationDetailsResponse,
  human: ({ organization }) => describeOrganization(organization)
})

/** `key=value`, as `--metadata` takes one pair. */
const MetadataPair = Schema.String.check(Schema.makeFilter((text: string) => /^[^=]+=/.test(text) || "must be key=value")).pipe(
  Schema.decodeTo(Schema.Tuple([Schema.String, Schema.String]), {
    decode: SchemaGetter.transform((text: string) => {
      const at = text.indexOf("=")
      return [text.slice(0, at), text.slice(at + 1)] as const
    }),
    encode: SchemaGetter.transform(([key, value]: readonly [string, string]) => `${key}=${value}`)
  })
)

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The pairs given as the API's metadata object (a key given twice: its last value), checked with its rules. */
const metadataOf = (pairs: ReadonlyArray<readonly [string, string]>) =>
  Schema.decodeUnknownEffect(OrganizationMetadata)(Object.fromEntries(pairs)).pipe(
    Effect.mapError((error) =>
      new UsageError({
        message: `--metadata: ${
          formatIssue(error.issue).issues.map((issue) => `${(issue.path ?? []).map((segment) => typeof segment === "object" ? String(segment.key) : String(segment)).join(".")} ${issue.message}`.trim()).join("; ")
        }`
      })
    )
  )

export const update = Commands.endpoint("update", {
  examples: [
    ["Rename the active organization.", ["orgs", "update", "--name", "Acme Labs"]],
  ],
  summary: "Change the active organization's name, logo or metadata (owners and admins).",
  details: ["--metadata replaces the whole metadata: give every pair to keep (--no-metadata removes them all)."],
  inputs: {
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", description: "The new name.", schema: OrganizationName })),
    logoUrl: Inputs.optional(Inputs.text("logo-url", {
      placeholder: "<url>",
      description: "The new logo: an https URL, or a path starting with / on the same host.",
      schema: OrganizationLogoUrl
    })),
    noLogo: Inputs.boolean("no-logo", { description: "Remove the logo." }),
    metadata: Inputs.repeatedText("metadata", {
      placeholder: "<key=value>",
      description: "A metadata pair; the pairs given replace the organization's metadata.",
      schema: Schema.Array(MetadataPair)
    }),
    noMetadata: Inputs.boolean("no-metadata", { description: "Remove every metadata pair." })
  },
  call: (client, { logoUrl, metadata, name, noLogo, noMetadata }) =>
    Effect.gen(function*() {
      const hasMetadata = metadata.length > 0
      yield* requireSome([["name", name], ["logo-url", logoUrl], ["no-logo", noLogo], ["metadata", hasMetadata], ["no-metadata", noMetadata]])
      if (noLogo && Option.isSome(logoUrl)) return yield* Effect.fail(new UsageError({ message: "give --logo-url or --no-logo, not both" }))
      if (noMetadata && hasMetadata) return yield* Effect.fail(new UsageError({ message: "give --metadata or --no-metadata, not both" }))
      return yield* client.organizations.update({
        payload: {
          ...Inputs.ifSome("name", name),
          ...(noLogo ? { logoUrl: null } : Inputs.ifSome("logoUrl", logoUrl)),
          ...(noMetadata ? { metadata: {} } : hasMetadata ? { metadata: yield* metadataOf(metadata) } : {})
        }
      })
    }),
  output: OrganizationDetailsResponse,
  human: ({ organization }) => `Updated the organization.\n${describeOrganization(organization)}`
})

export const del = Commands.endpoint("delete", {
  summary: "Delete the active organization (owners, with a recent sign-in): it stops at once, and is purged after the grace period.",
  details: [
    "Type the organization's name to confirm, as 'orgs get' shows it. Its members' sessions move to their other organizations, and its API keys, SCIM and worker tokens, SSO, audit streams and connector syncs stop at once. An owner may bring it back with 'orgs restore <id>' until the grace period ends (ORGPLANE_ORGANIZATION_DELETION_GRACE, 7 days by default); then every row of it is removed."
  ],
  inputs: {
    name: Inputs.argument("name", { description: "The active organization's name, typed again to confirm." })
  },
  call: (client, { name }) => client.organizations.delete({ payload: { confirmName: name } }),
  output: OrganizationDeletionResponse,
  human: ({ deletion }) =>
    `Deleted ${deletion.organization.name} (${deletion.organization.id}). It may be restored until ${Output.date(deletion.purgeAfter)} ('orgplane orgs restore ${deletion.organization.id}'); then the purge removes ${deletion.totalRows} rows.`
})

export const restore = Commands.endpoint("restore", {
  summary: "Restore a deleted organization you own, before its purge (needs a recent sign-in); it becomes your active one.",
  inputs: {
    organizationId: Inputs.argument("organizationId", { schema: OrganizationId, description: "The organization (org_…), from 'orgs list --deleted'." })
  },
  call: (client, { organizationId }) => client.organizations.restore({ params: { organizationId } }),
  output: OrganizationResponse,
  human: ({ organization }) => `Restored ${organization.name} (${organization.id}); it is your active organization again.`
})

export const orgs = Commands.group("orgs", "List, create and switch your organizations; read, change, delete and restore them.", [
  list,
  create,
  switchTo,
  get,
  update,
  del,
  restore
], [OrganizationsApi, UsersApi])
