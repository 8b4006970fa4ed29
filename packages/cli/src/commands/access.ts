/**
 * `orgplane access grant | list | revoke`: who may view, edit or manage one config object, plugin or marketplace.
 * The resource's id tells its kind (cob_…, plg_…, mkt_…); a grant is for one member, one team or the whole
 * organization. Managing grants needs manager access on the resource.
 */
import { AccessRole, checkTypeId, ConfigObjectAccessGrant, ConfigObjectAccessGrantId, ConfigObjectAccessGrantResponse, ConfigObjectId, ConfigObjectsApi, exampleId, MarketplaceAccessGrant, MarketplaceAccessGrantId, MarketplaceAccessGrantResponse, MarketplaceId, MarketplacesApi, MembershipId, Page, PluginAccessGrant, PluginAccessGrantId, PluginAccessGrantResponse, PluginId, PluginsApi, TeamId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/** The kinds of resource that have grants: their id prefix, their grants' id prefix, and their name. */
const kinds = {
  cob: { noun: "config object", grant: "coa" },
  plg: { noun: "plugin", grant: "pag" },
  mkt: { noun: "marketplace", grant: "mag" }
} as const
type Kind = keyof typeof kinds

const ACCEPTED = Object.entries(kinds).map(([prefix, { noun }]) => `${noun} (${prefix}_…)`).join(", ").replace(/, ([^,]*)$/, " or $1")
const ACCEPTED_GRANTS = Object.values(kinds).map(({ grant, noun }) => `${noun} grant (${grant}_…)`).join(", ")
  .replace(/, ([^,]*)$/, " or $1")

const prefixOf = (value: string) => /^([a-z]{1,8})_/.exec(value)?.[1]

/** What `checkTypeId` says about an id of another kind ("'tem_…' is a team id"), to add to our own message. */
const otherKind = (value: string) => / *; *('.*)$/.exec(checkTypeId("cob", value) ?? "")?.[1]

/**
 * An id of one of `prefixes`, each checked as the API checks it; any other prefix is refused with `accepted`, the
 * kinds that are.
 */
const oneOf = <S extends Schema.Codec<string, string>>(
  prefixes: ReadonlyArray<string>,
  accepted: string,
  to: S
) =>
  Schema.String.pipe(Schema.decodeTo(to, {
    decode: SchemaGetter.transformEffect((value: string) => {
      const prefix = prefixOf(value)
      if (prefix === undefined || !prefixes.includes(prefix)) {
        const other = otherKind(value)
        return Effect.fail(new SchemaIssue.InvalidValue({ message: `must be the id of a ${accepted}${other ? `; ${other}` : ""}` }, value))
      }
      const problem = checkTypeId(prefix, value)
      return problem === undefined ? Effect.succeed(value) : Effect.fail(new SchemaIssue.InvalidValue({ message: problem }, value))
    }),
    encode: SchemaGetter.passthrough()
  }))

/** A config object, plugin or marketplace id. */
export const ResourceId = oneOf(Object.keys(kinds), ACCEPTED, Schema.Union([ConfigObjectId, PluginId, MarketplaceId]))
export type ResourceId = typeof ResourceId.Type

const GrantId = oneOf(
  Object.values(kinds).map(({ grant }) => grant),
  ACCEPTED_GRANTS,
  Schema.Union([ConfigObjectAccessGrantId, PluginAccessGrantId, MarketplaceAccessGrantId])
)

const isConfigObject = Schema.is(ConfigObjectId)
const isPlugin = Schema.is(PluginId)

/** Calls the case of the resource's kind with its id, typed as that kind's. */
const byKind = <A>(id: ResourceId, cases: {
  readonly configObject: (id: ConfigObjectId) => A
  readonly plugin: (id: PluginId) => A
  readonly marketplace: (id: MarketplaceId) => A
}): A => isConfigObject(id) ? cases.configObject(id) : isPlugin(id) ? cases.plugin(id) : cases.marketplace(id)

const nounOf = (id: string) => kinds[prefixOf(id) as Kind].noun

const resourceId = Inputs.argument("resourceId", {
  schema: ResourceId,
  description: `The ${ACCEPTED} whose access to manage.`
})

/** Who a grant is for, as every grant kind says it. */
interface Grant {
  readonly orgWide: boolean
  readonly teamId: string | null
  readonly orgMembershipId: string | null
}

/** What every grant kind says of itself beyond its grantee. */
interface GrantTimes {
  readonly id: string
  readonly role: string
  readonly createdAt: Date
  readonly removedAt: Date | null
}

/** `team tem_…`, `member om_…`, `the organization`. */
export const grantee = (grant: Grant) =>
  grant.orgWide ? "the organization" : grant.teamId !== null ? `team ${grant.teamId}` : `member ${grant.orgMembershipId ?? "?"}`

/** The table of a grant list, whatever the resource. */
export const grantColumns: ReadonlyArray<readonly [string, (grant: Grant & GrantTimes) => string]> = [
  ["id", (grant) => grant.id],
  ["role", (grant) => grant.role],
  ["to", grantee],
  ["created", (grant) => Output.date(grant.createdAt)],
  ["revoked", (grant) => Output.date(grant.removedAt)]
]

/** The inputs naming who a grant is for: exactly one of them (checked by `granteePayload`). */
export const granteeInputs = {
  member: Inputs.optional(Inputs.text("member", { placeholder: "<memberId>", description: "A member (om_…) to grant to.", schema: MembershipId })),
  team: Inputs.optional(Inputs.text("team", { placeholder: "<teamId>", description: "A team (tem_…) whose members to grant to.", schema: TeamId })),
  orgWide: Inputs.boolean("org-wide", { description: "Grant to every member of the organization (owners and admins only)." })
}

/** A grant's payload from `granteeInputs` and a role; a usage error unless exactly one grantee is given. */
export const granteePayload = <R extends AccessRole>(role: R, { member, orgWide, team }: {
  readonly member: Option.Option<MembershipId>
  readonly team: Option.Option<TeamId>
  readonly orgWide: boolean
}) =>
  [Option.isSome(member), Option.isSome(team), orgWide].filter(Boolean).length !== 1
    ? Effect.fail(new UsageError({ message: "give exactly one of --member, --team or --org-wide: who the grant is for" }))
    : Effect.succeed({
      role,
      ...Inputs.ifSome("orgMembershipId", member),
      ...Inputs.ifSome("teamId", team),
      ...(orgWide ? { orgWide: true as const } : {})
    })

const GrantResponse = Schema.Union([ConfigObjectAccessGrantResponse, PluginAccessGrantResponse, MarketplaceAccessGrantResponse])

export const grant = Commands.endpoint("grant", {
  examples: [
    ["Let a team use a config object.", ["access", "grant", exampleId("cob"), "--role", "viewer", "--team", "tem_01m6dsg7e0f6xbks25eta8m5bm"]],
  ],
  summary: "Give a member, a team or the whole organization a role on a config object, plugin or marketplace.",
  details: [
    "Granting again to the same member, team or organization replaces that grant's role (and brings a revoked one back). Needs manager access on the resource; --org-wide also needs an owner or admin."
  ],
  inputs: {
    resourceId,
    role: Inputs.choice("role", AccessRole.literals, {
      description: "viewer reads it; editor also changes it; manager also archives, deletes and restores it and manages its grants."
    }),
    ...granteeInputs
  },
  call: (client, { resourceId, role, ...who }) =>
    Effect.gen(function*() {
      const payload = yield* granteePayload(role, who)
      return yield* byKind<Effect.Effect<typeof GrantResponse.Type, unknown>>(resourceId, {
        configObject: (configObjectId) => client.configObjects.configObjectGrant({ params: { configObjectId }, payload }),
        plugin: (pluginId) => client.plugins.pluginGrant({ params: { pluginId }, payload }),
        marketplace: (marketplaceId) => client.marketplaces.marketplaceGrant({ params: { marketplaceId }, payload })
      })
    }),
  output: GrantResponse,
  human: ({ item }, { resourceId }) =>
    `Granted ${item.role} on ${nounOf(resourceId)} ${resourceId} to ${grantee(item)} (grant ${item.id}).`
})

const GrantPage = Page(Schema.Union([ConfigObjectAccessGrant, PluginAccessGrant, MarketplaceAccessGrant]))

export const list = Commands.list("list", {
  summary: "List the grants of a config object, plugin or marketplace, newest first (needs manager access).",
  noun: "grants",
  inputs: {
    resourceId,
    includeRevoked: Inputs.boolean("include-revoked", { description: "Also list revoked grants." })
  },
  call: (client, { includeRevoked, resourceId }, page) => {
    const query = { ...(includeRevoked ? { includeRevoked: true } : {}), ...page }
    return byKind<Effect.Effect<typeof GrantPage.Type, unknown>>(resourceId, {
      configObject: (configObjectId) => client.configObjects.configObjectListAccess({ params: { configObjectId }, query }),
      plugin: (pluginId) => client.plugins.pluginListAccess({ params: { pluginId }, query }),
      marketplace: (marketplaceId) => client.marketplaces.marketplaceListAccess({ params: { marketplaceId }, query })
    })
  },
  output: GrantPage,
  columns: grantColumns
})

const Revoked = Schema.Struct({ ok: Schema.Literal(true), resource: ResourceId, revoked: GrantId })

export const revoke = Commands.endpoint("revoke", {
  summary: "Revoke a grant of a config object, plugin or marketplace; it stops applying at once (needs manager access).",
  inputs: {
    resourceId,
    grantId: Inputs.argument("grantId", { schema: GrantId, description: "The grant, from 'access list'." })
  },
  call: (client, { grantId, resourceId }) => {
    const mismatch = () => {
      const expected = kinds[prefixOf(resourceId) as Kind]
      // GrantId took only the grant prefixes of `kinds`, so one of them is this grant's.
      const given = Object.values(kinds).find((kind) => kind.grant === prefixOf(grantId))
      return Effect.fail(
        new UsageError({
          message: `grantId: grants of a ${expected.noun} start with '${expected.grant}_'; '${prefixOf(grantId)}_…' is a ${given?.noun}'s grant`
        })
      )
    }
    const revoked = { ok: true as const, resource: resourceId, revoked: grantId }
    return byKind<Effect.Effect<typeof revoked, unknown>>(resourceId, {
      configObject: (configObjectId) =>
        Schema.is(ConfigObjectAccessGrantId)(grantId)
          ? Effect.as(client.configObjects.configObjectRevoke({ params: { configObjectId, grantId } }), revoked)
          : mismatch(),
      plugin: (pluginId) =>
        Schema.is(PluginAccessGrantId)(grantId)
          ? Effect.as(client.plugins.pluginRevoke({ params: { pluginId, grantId } }), revoked)
          : mismatch(),
      marketplace: (marketplaceId) =>
        Schema.is(MarketplaceAccessGrantId)(grantId)
          ? Effect.as(client.marketplaces.marketplaceRevoke({ params: { marketplaceId, grantId } }), revoked)
          : mismatch()
    })
  },
  output: Revoked,
  human: ({ resource, revoked }) => `Revoked grant ${revoked} of ${nounOf(resource)} ${resource}; it stops applying at once.`
})

export const access = Commands.group(
  "access",
  "Share config objects, plugins and marketplaces: grant members, teams or the organization a role, list and revoke grants.",
  [grant, list, revoke],
  [ConfigObjectsApi, MarketplacesApi, PluginsApi]
)
