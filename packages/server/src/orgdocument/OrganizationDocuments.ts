/**
 * Organization as code: the organization's document (@orgplane/schema's OrganizationDocument), read through the
 * services that own each part (organizations, members, invitations, teams), so each part answers as its own
 * operations do and checks its own action beside `organizations.export`.
 */
import {
  type Cursor,
  InvalidRequest,
  OrganizationPlan,
  type DocumentMember,
  type DocumentTeam,
  type MemberContext,
  type MembershipId,
  ORGANIZATION_DOCUMENT_VERSION,
  type ExportedDocument,
  OrganizationDocument
} from "@orgplane/schema"
import { createHash } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Organizations } from "../identity/Organizations.js"
import { Invitations } from "../invitations/Invitations.js"
import { Members } from "../members/Members.js"
import { authorize } from "../platform/Principal.js"
import { Teams } from "../teams/Teams.js"
import * as Plan from "./Plan.js"

/** The largest page the lists serve. */
const PAGE = 100

/** Every item of a paged list, page after page. */
const everyPage = <A, E, R>(
  page: (cursor: typeof Cursor.Type | undefined) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly nextCursor: typeof Cursor.Type | null }, E, R>
): Effect.Effect<Array<A>, E, R> => {
  const from = (cursor: typeof Cursor.Type | undefined, seen: Array<A>): Effect.Effect<Array<A>, E, R> =>
    Effect.flatMap(page(cursor), ({ items, nextCursor }) => {
      seen.push(...items)
      return nextCursor === null ? Effect.succeed(seen) : from(nextCursor, seen)
    })
  return from(undefined, [])
}

/** The document's JSON text, as the export answers it: what a plan's `liveHash` is the hash of. */
const encodeDocument = Schema.encodeSync(OrganizationDocument)
const documentText = (document: ExportedDocument) => JSON.stringify(encodeDocument(document))

const sortedRecord = (record: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.keys(record).sort(Plan.byText).map((key) => [key, record[key]!]))

const make = Effect.gen(function*() {
  const organizations = yield* Organizations
  const members = yield* Members
  const invitations = yield* Invitations
  const teams = yield* Teams

  /** `GET /v1/organization/document`: the organization the caller acts in, as its document. */
  const exportDocument = Effect.fn("OrganizationDocuments.export")(function*(caller: MemberContext) {
    yield* authorize(caller, "organizations.export")
    const { organization } = yield* organizations.details(caller)
    const { settings } = yield* members.getDirectorySettings(caller)
    const memberList = yield* everyPage((cursor) => members.list(caller, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor }))
    const pending = yield* everyPage((cursor) =>
      invitations.list(caller, cursor === undefined ? { limit: PAGE, status: "pending" } : { limit: PAGE, status: "pending", cursor })
    )
    const teamList = yield* everyPage((cursor) => teams.list(caller, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor }))

    const names = new Map<MembershipId, string>(memberList.map((member) => [member.id, member.email ?? member.id]))
    const documentMembers = memberList.map((member): DocumentMember => {
      const name = member.email ?? member.id
      return member.suspendedAt === null || member.suspendedAt === undefined
        ? { email: name, role: member.role }
        : { email: name, role: member.role, suspended: true }
    }).sort((left, right) => Plan.byText(left.email, right.email))
    const documentTeams = teamList.map((team): DocumentTeam => {
      const teamMembers = team.memberIds.map((id) => names.get(id) ?? id).sort(Plan.byText)
      return team.scimConnectionId === null
        ? { name: team.name, externalKey: team.externalKey, members: teamMembers }
        : { name: team.name, externalKey: team.externalKey, members: teamMembers, directoryManaged: true }
    }).sort((left, right) => Plan.byText(left.name, right.name) || Plan.byText(left.externalKey ?? "", right.externalKey ?? ""))

    return {
      version: ORGANIZATION_DOCUMENT_VERSION,
      organization: { name: organization.name, logoUrl: organization.logoUrl, metadata: sortedRecord(organization.metadata) },
      directory: { emailsVisibleToMembers: settings.emailsVisibleToMembers },
      members: documentMembers,
      invitations: pending
        .map((invitation) => ({ email: invitation.email, role: invitation.role, delivery: invitation.delivery }))
        .sort((left, right) => Plan.byText(left.email, right.email)),
      teams: documentTeams
    } satisfies ExportedDocument
  })

  /**
   * `POST /v1/organization/document/plan`: what applying `document` would change, against the live state as the
   * export writes it (its bytes hashed), or 400 with every problem that keeps it from being planned.
   */
  const plan = Effect.fn("OrganizationDocuments.plan")(function*(caller: MemberContext, document: OrganizationDocument) {
    const live = yield* exportDocument(caller)
    const liveHash = `sha256:${createHash("sha256").update(documentText(live)).digest("hex")}`
    const { changes, problems } = Plan.plan(live, document)
    if (problems.length > 0) return yield* new InvalidRequest({ details: problems.map(({ message, path }) => ({ message, path })) })
    return new OrganizationPlan({ liveHash, changes, markdown: Plan.markdown(liveHash, changes) })
  })

  return { export: exportDocument, plan } as const
})

export class OrganizationDocuments extends Context.Service<OrganizationDocuments>()("@orgplane/server/orgdocument/OrganizationDocuments", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([Organizations.layer, Members.layer, Invitations.layer, Teams.layer])
  )
}
