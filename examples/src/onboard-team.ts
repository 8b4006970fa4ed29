/**
 * An automation script with the Promise client: bring a roster into a team. Members already in the organization
 * join the team; everyone else gets an invitation (once: a pending one is left alone). Safe to run again.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_API_KEY=opk_... \
 *     pnpm tsx examples/src/onboard-team.ts "Platform" ada@example.com:admin alan@example.com
 */
import { createClient, OrgplaneError, paginate } from "@orgplane/client"
import type { MembershipId } from "@orgplane/schema"

export interface RosterEntry {
  readonly email: string
  readonly role: "admin" | "member"
}

export interface Report {
  readonly teamId: string
  readonly addedToTeam: ReadonlyArray<MembershipId>
  readonly invited: ReadonlyArray<{ readonly email: string; readonly inviteToken: string }>
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
      if (member.email !== null) members.set(member.email.toLowerCase(), member.id)
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

    const invited: Array<{ email: string; inviteToken: string }> = []
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
  const report = await onboard({
    baseUrl: process.env.ORGPLANE_URL ?? "http://127.0.0.1:8787",
    apiKey: process.env.ORGPLANE_API_KEY ?? "",
    team,
    roster
  })
  console.log(JSON.stringify(report, null, 2))
}
