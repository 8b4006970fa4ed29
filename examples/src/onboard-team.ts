/**
 * An automation script with the Promise client: bring a roster into a team. Members already in the organization
 * join the team; everyone else gets an invitation (once: a pending one is left alone). Safe to run again. On a server
 * with mail settings the invitations are mailed to their addresses; without, the report carries each token to send on.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_API_KEY=opk_... \
 *     pnpm --filter @orgplane/examples onboard Platform ada@example.com alan@example.com:admin
 *
 * Without ORGPLANE_URL it starts a throwaway server first (in memory), with an organization whose members are
 * its owner and ada@example.com, and runs against that.
 */
import { createClient, OrgplaneError, paginate } from "@orgplane/client"
import type { MembershipId } from "@orgplane/schema"
import { startLocalServer } from "./local-server.js"

export interface RosterEntry {
  readonly email: string
  readonly role: "admin" | "member"
}

export interface Report {
  readonly teamId: string
  readonly addedToTeam: ReadonlyArray<MembershipId>
  /** `inviteToken`: to send on to the address; null when the server mailed it there. */
  readonly invited: ReadonlyArray<{ readonly email: string; readonly inviteToken: string | null }>
  readonly alreadyInvited: ReadonlyArray<string>
}

export const onboard = async (options: {
  readonly baseUrl: string
  readonly apiKey: string
  readonly team: string
  readonly roster: ReadonlyArray<RosterEntry>
}): Promise<Report> => {
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  try {
    const members = new Map<string, MembershipId>()
    for await (const member of paginate(client.members.list, { urlParams: {} })) {
      // An admin's key sees every email (a plain member's would not: docs/security.md, "The member directory").
      if (member.email !== null && member.email !== undefined) members.set(member.email.toLowerCase(), member.id)
    }
    const pending = new Set<string>()
    for await (const invitation of paginate(client.invitations.list, { urlParams: { status: "pending" } })) {
      pending.add(invitation.email.toLowerCase())
    }

    const team = await client.teams.create({ payload: { name: options.team } }).then(
      (created) => created.team,
      async (error) => {
        if (!(error instanceof OrgplaneError && error.code === "team_exists")) throw error
        const found = await client.teams.list({ urlParams: { q: options.team } })
        return found.items.find((item) => item.name.toLowerCase() === options.team.toLowerCase())!
      }
    )

    const joining = options.roster.flatMap((entry) => {
      const id = members.get(entry.email.toLowerCase())
      return id !== undefined && !team.memberIds.includes(id) ? [id] : []
    })
    if (joining.length > 0) await client.teams.addMembers({ path: { teamId: team.id }, payload: { memberIds: joining } })

    const invited: Array<{ email: string; inviteToken: string | null }> = []
    const alreadyInvited: Array<string> = []
    for (const entry of options.roster) {
      const email = entry.email.toLowerCase()
      if (members.has(email)) continue
      if (pending.has(email)) {
        alreadyInvited.push(entry.email)
        continue
      }
      const created = await client.invitations.create({ payload: { email: entry.email, role: entry.role } })
      invited.push({ email: entry.email, inviteToken: created.inviteToken })
    }
    return { teamId: team.id, addedToTeam: joining, invited, alreadyInvited }
  } finally {
    await client.close()
  }
}

/**
 * The scopes the script's key needs: reading members and their emails, making teams, inviting members and admins
 * (a key made without scopes invites members only).
 */
export const onboardingScopes = ["members.read", "members.readDirectory", "teams.*", "invitations.*"] as const

/**
 * The demo's organization on a fresh server: an owner, ada@example.com as a member, an API key for the script, and
 * the owner's session token (for organization-as-code.ts).
 */
export const demoOrganization = async (baseUrl: string) => {
  const anonymous = createClient({ baseUrl })
  try {
    const password = "a long password"
    const { session } = await anonymous.users.signUp({ payload: { email: "owner@example.com", password, name: "Owner" } })
    const owner = createClient({ baseUrl, token: session.token })
    try {
      await owner.organizations.create({ payload: { name: "Acme" } })
      const { inviteToken } = await owner.invitations.create({ payload: { email: "ada@example.com", role: "member", delivery: "shown" } })
      if (inviteToken === null) throw new Error("a shown invitation answers its token")
      await anonymous.invitations.accept({ payload: { token: inviteToken, signUp: { name: "Ada Lovelace", password } } })
      const { key } = await owner.apiKeys.create({ payload: { name: "onboarding", scopes: onboardingScopes } })
      return { apiKey: key, ownerToken: session.token }
    } finally {
      await owner.close()
    }
  } finally {
    await anonymous.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [team, ...people] = process.argv.slice(2)
  if (!team || people.length === 0) {
    console.error("usage: onboard-team.ts <team name> <email[:admin|member]>...")
    process.exit(2)
  }
  const roster = people.map((person) => {
    const [email, role = "member"] = person.split(":")
    return { email, role: role === "admin" ? "admin" as const : "member" as const }
  })
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "" && (process.env.ORGPLANE_API_KEY ?? "") === "") {
    console.error("ORGPLANE_API_KEY: an API key of the organization is needed with ORGPLANE_URL (orgplane api-keys create onboarding --scope members.read --scope members.readDirectory --scope 'teams.*' --scope 'invitations.*')")
    process.exit(2)
  }
  const local = given === "" ? await startLocalServer() : undefined
  try {
    const baseUrl = local?.url ?? given
    const apiKey = local === undefined ? process.env.ORGPLANE_API_KEY! : (await demoOrganization(local.url)).apiKey
    if (local !== undefined) {
      console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} (organization Acme: owner@example.com, ada@example.com).`)
    }
    console.log(JSON.stringify(await onboard({ baseUrl, apiKey, team, roster }), null, 2))
  } finally {
    await local?.close()
  }
}
