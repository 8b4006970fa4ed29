/**
 * `orgplane members | teams | invitations`: the CLI in-process (see Harness.ts) against a real server, checked
 * against the behaviour the API's descriptions promise. The server is RealServer.ts's.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, PASSWORD } from "./Harness.js"
import * as Http from "./Http.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

/** A well-formed id that no organization has. */
const UNKNOWN_MEMBER = "om_00000000000000000000000000"
const UNKNOWN_TEAM = "tem_00000000000000000000000000"

let people = 0
const emailFor = (name: string) => `${name.toLowerCase()}.${++people}.${Math.random().toString(36).slice(2, 10)}@example.com`

/** A new person in the owner's organization with `role`: invited and signed up over plain HTTP. */
const join = (ownerToken: string, role: "admin" | "member", name: string) => Http.join(server.url, ownerToken, role, name)

const as = (token: string) => ({ ORGPLANE_URL: server.url, ORGPLANE_TOKEN: token })

describe.concurrent("orgplane members, teams and invitations", () => {
  it("lists members, changes roles, transfers ownership and removes members", async () => {
    const owner = await Http.owner(server.url, "Members Org")
    const [admin, member] = await Promise.all([join(owner.token, "admin", "Adele"), join(owner.token, "member", "Mallory")])
    const { cli } = await fresh()
    const env = as(owner.token)

    const [all, table, admins, byText, onePage, everyPage, notAdmin, memberInvites] = await Promise.all([
      cli(["members", "list", "--json"], env),
      cli(["members", "list"], env),
      cli(["members", "list", "--role", "admin", "--json"], env),
      cli(["members", "list", "--query", member.email.slice(0, 12).toUpperCase(), "--json"], env),
      cli(["members", "list", "--limit", "1"], env),
      cli(["members", "list", "--limit", "1", "--all", "--json"], env),
      // Refused, so they change nothing: ownership only goes to an admin, and members do not invite.
      cli(["members", "transfer-ownership", member.membership.id], env),
      cli(["invitations", "create", emailFor("Frank")], as(member.token))
    ])
    expect(all.code, all.stderr).toBe(0)
    const listed = json(all)
    expect(listed.nextCursor).toBeNull()
    // Oldest first: the owner created the organization before inviting anyone.
    expect(listed.items[0]).toMatchObject({ id: owner.membership.id, role: "owner" })
    expect(listed.items.map((item: { id: string; role: string }) => `${item.id} ${item.role}`).sort()).toEqual(
      [`${owner.membership.id} owner`, `${admin.membership.id} admin`, `${member.membership.id} member`].sort()
    )
    const mallory = listed.items.find((item: { id: string }) => item.id === member.membership.id)
    expect(mallory).toMatchObject({ name: "Mallory", email: member.email, removedAt: null, organizationId: owner.organization.id })
    expect(mallory.createdAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/)
    expect(table.code).toBe(0)
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+EMAIL\s+ROLE\s+REMOVED\s+SUSPENDED$/)
    expect(table.stdout).toMatch(new RegExp(`^${member.membership.id}\\s+Mallory\\s+${member.email.replace(/\./g, "\\.")}\\s+member\\s+-\\s+-$`, "m"))
    expect(json(admins).items.map((item: { id: string }) => item.id)).toEqual([admin.membership.id])
    expect(json(byText).items.map((item: { id: string }) => item.id)).toEqual([member.membership.id])
    expect(onePage.stdout.trim().split("\n")).toHaveLength(2)
    expect(onePage.stderr).toMatch(/^More members: orgplane members list --cursor \S+ \(or --all\)$/m)
    expect(json(everyPage).items).toHaveLength(3)
    expect(json(everyPage).nextCursor).toBeNull()
    // --all from a --cursor: every page after that one.
    const cursor = /--cursor (\S+)/.exec(onePage.stderr)![1]!
    const rest = await cli(["members", "list", "--limit", "1", "--cursor", cursor, "--all", "--json"], env)
    expect(json(rest)).toEqual({ items: json(everyPage).items.slice(1), nextCursor: null })
    expect(notAdmin.code).toBe(1)
    expect(notAdmin.stderr).toMatch(/^error: member_not_admin \(409\)/)
    expect(memberInvites.code).toBe(1)
    expect(memberInvites.stderr).toMatch(/^error: insufficient_role \(403\)/)

    // Roles: the member becomes an admin and back; an admin may not make owners.
    const promoted = await cli(["members", "role", member.membership.id, "admin", "--json"], env)
    expect(promoted.code, promoted.stderr).toBe(0)
    expect(json(promoted).member).toMatchObject({ id: member.membership.id, role: "admin" })
    const [demoted, byAdmin, unknown] = await Promise.all([
      cli(["members", "role", member.membership.id, "member"], env),
      cli(["members", "role", member.membership.id, "owner"], as(admin.token)),
      cli(["members", "role", UNKNOWN_MEMBER, "admin", "--json"], env)
    ])
    expect(demoted.code, demoted.stderr).toBe(0)
    expect(demoted.stdout.trim()).toBe(`Mallory (${member.membership.id}) is now member.`)
    expect(byAdmin.code).toBe(1)
    expect(byAdmin.stderr).toMatch(/^error: insufficient_role \(403\)/)
    expect(unknown.code).toBe(4)
    expect(JSON.parse(unknown.stderr)).toMatchObject({ error: "member_not_found" })

    // Removal: gone from the list, still there with --include-removed; unknown ids are 404.
    const [removed, removeUnknown] = await Promise.all([
      cli(["members", "remove", member.membership.id, "--json"], env),
      cli(["members", "remove", UNKNOWN_MEMBER], env)
    ])
    expect(removed.code, removed.stderr).toBe(0)
    expect(json(removed)).toEqual({ ok: true, removed: member.membership.id })
    expect(removeUnknown.code).toBe(4)
    expect(removeUnknown.stderr).toMatch(/^error: member_not_found \(404\)/)
    const [active, everyone, transferred] = await Promise.all([
      cli(["members", "list", "--json"], env),
      cli(["members", "list", "--include-removed", "--json"], env),
      // Ownership goes to the admin; afterwards they are the last owner and cannot leave.
      cli(["members", "transfer-ownership", admin.membership.id, "--json"], env)
    ])
    expect(json(active).items.map((item: { id: string }) => item.id)).not.toContain(member.membership.id)
    const gone = json(everyone).items.find((item: { id: string }) => item.id === member.membership.id)
    expect(gone.removedAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/)
    expect(transferred.code, transferred.stderr).toBe(0)
    expect(json(transferred)).toMatchObject({
      owner: { id: admin.membership.id, role: "owner" },
      previousOwner: { id: owner.membership.id, role: "admin" }
    })
    const lastOwner = await cli(["members", "remove", admin.membership.id], as(admin.token))
    expect(lastOwner.code).toBe(1)
    expect(lastOwner.stderr).toMatch(/^error: last_owner \(409\)/)
  })

  it("creates, lists, fills, renames and deletes teams; members may only read them", async () => {
    const owner = await Http.owner(server.url, "Teams Org")
    const member = await join(owner.token, "member", "Mallory")
    const { cli } = await fresh()
    const env = as(owner.token)

    const [platform, design] = await Promise.all([
      cli(["teams", "create", "Platform", "--member", owner.membership.id, "--json"], env),
      cli(["teams", "create", "Design"], env)
    ])
    expect(platform.code, platform.stderr).toBe(0)
    const team = json(platform).team
    expect(team).toMatchObject({ name: "Platform", organizationId: owner.organization.id, memberIds: [owner.membership.id] })
    expect(design.code, design.stderr).toBe(0)
    expect(design.stdout.trim()).toMatch(/^Created team Design \(tem_\w+\) with 0 members\.$/)
    const designId = design.stdout.match(/\((tem_\w+)\)/)![1]!

    const [duplicate, unknownMember, byMember, added] = await Promise.all([
      cli(["teams", "create", "platform"], env),
      cli(["teams", "create", "Ghosts", "--member", UNKNOWN_MEMBER], env),
      cli(["teams", "create", "Rogue", "--json"], as(member.token)),
      // The owner is in the team already and stays once.
      cli(["teams", "add", team.id, member.membership.id, owner.membership.id, "--json"], env)
    ])
    expect(duplicate.code).toBe(1)
    expect(duplicate.stderr).toMatch(/^error: team_exists \(409\)/)
    expect(unknownMember.code).toBe(4)
    expect(unknownMember.stderr).toMatch(/^error: member_not_found \(404\)/)
    expect(byMember.code).toBe(1)
    expect(JSON.parse(byMember.stderr)).toMatchObject({ reason: "insufficient_role" })
    expect(added.code, added.stderr).toBe(0)
    expect([...json(added).team.memberIds].sort()).toEqual([owner.membership.id, member.membership.id].sort())

    const [listed, table, byName, byTeamMember, memberReads] = await Promise.all([
      cli(["teams", "list", "--json"], env),
      cli(["teams", "list"], env),
      cli(["teams", "list", "--query", "PLAT", "--json"], env),
      cli(["teams", "list", "--member", member.membership.id, "--json"], env),
      cli(["teams", "list", "--json"], as(member.token))
    ])
    expect(listed.code, listed.stderr).toBe(0)
    expect(json(listed).items.map((item: { name: string }) => item.name)).toEqual(["Design", "Platform"])
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+MEMBERS\s+CREATED$/)
    expect(table.stdout).toMatch(new RegExp(`^${team.id}\\s+Platform\\s+2\\s+\\d{4}-`, "m"))
    expect(json(byName).items.map((item: { id: string }) => item.id)).toEqual([team.id])
    expect(json(byTeamMember).items.map((item: { id: string }) => item.id)).toEqual([team.id])
    expect(memberReads.code).toBe(0)
    expect(json(memberReads).items).toHaveLength(2)

    const [taken, renamed] = await Promise.all([
      cli(["teams", "remove", team.id, member.membership.id, "--json"], env),
      cli(["teams", "rename", designId, "Design Systems", "--json"], env)
    ])
    expect(taken.code, taken.stderr).toBe(0)
    expect(json(taken)).toEqual({ ok: true, team: team.id, removed: member.membership.id })
    expect(renamed.code, renamed.stderr).toBe(0)
    expect(json(renamed).team).toMatchObject({ id: designId, name: "Design Systems" })
    const after = await Http.request(server.url, "GET", `/v1/teams/${team.id}`, { token: owner.token })
    expect(Http.at(after.body, "team", "memberIds")).toEqual([owner.membership.id])

    const deleted = await cli(["teams", "delete", designId], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toContain(`Deleted team ${designId}`)
    const again = await cli(["teams", "delete", designId], env)
    expect(again.code).toBe(4)
    expect(again.stderr).toMatch(/^error: team_not_found \(404\)/)
  })

  it("invites people, who accept as a signed-in profile or by signing up; lists, refreshes and cancels invitations", async () => {
    const owner = await Http.owner(server.url, "Invitations Org")
    const { cli, configDir } = await fresh()
    const env = as(owner.token)
    const bob = emailFor("Bob")
    const carol = emailFor("Carol")
    const dave = emailFor("Dave")

    // Bob has an account, signed in under the profile 'bob'.
    const [signup, invitedBob, invitedCarol, invitedDave] = await Promise.all([
      cli(["auth", "signup", "--url", server.url, "--email", bob, "--name", "Bob", "--profile", "bob"], { ORGPLANE_PASSWORD: PASSWORD }),
      cli(["invitations", "create", bob, "--role", "admin", "--json"], env),
      cli(["invitations", "create", carol], env),
      cli(["invitations", "create", dave, "--json"], env)
    ])
    expect(signup.code, signup.stderr).toBe(0)
    expect(invitedBob.code, invitedBob.stderr).toBe(0)
    const bobInvitation = json(invitedBob)
    expect(bobInvitation).toMatchObject({
      invitation: { email: bob, role: "admin", status: "pending", organizationId: owner.organization.id },
      inviteToken: expect.any(String),
      refreshed: false
    })
    expect(invitedCarol.code, invitedCarol.stderr).toBe(0)
    expect(invitedCarol.stdout).toContain(`Invited ${carol} as member (inv_`)
    expect(invitedCarol.stdout).toContain("shown only this once")
    const carolFirstToken = invitedCarol.stdout.trim().split("\n").at(-1)!.trim()
    expect(carolFirstToken.length).toBeGreaterThan(10)
    expect(json(invitedDave).invitation.role).toBe("member")

    // Inviting Carol again refreshes her pending invitation: a new token and role, the old token stops working.
    const [refreshed, canceled] = await Promise.all([
      cli(["invitations", "create", carol, "--role", "admin", "--json"], env),
      cli(["invitations", "cancel", json(invitedDave).invitation.id, "--json"], env)
    ])
    expect(refreshed.code, refreshed.stderr).toBe(0)
    const carolInvitation = json(refreshed)
    expect(carolInvitation).toMatchObject({ invitation: { email: carol, role: "admin", status: "pending" }, refreshed: true })
    expect(carolInvitation.invitation.id).toBe(invitedCarol.stdout.match(/\((inv_\w+)\)/)![1])
    expect(carolInvitation.inviteToken).not.toBe(carolFirstToken)
    expect(canceled.code, canceled.stderr).toBe(0)
    expect(json(canceled).invitation).toMatchObject({ id: json(invitedDave).invitation.id, status: "canceled" })

    // One invitation by id (owners and admins); what its token is for, without credentials.
    const [got, previewed, previewedJson] = await Promise.all([
      cli(["invitations", "get", carolInvitation.invitation.id, "--json"], env),
      cli(["invitations", "preview", carolInvitation.inviteToken, "--url", server.url]),
      cli(["invitations", "preview", carolInvitation.inviteToken, "--url", server.url, "--json"])
    ])
    expect(got.code, got.stderr).toBe(0)
    expect(json(got)).toEqual({ invitation: carolInvitation.invitation })
    expect(previewed.code, previewed.stderr).toBe(0)
    expect(previewed.stdout).toMatch(/^Owner invites you to join Invitations Org as admin; it expires \d{4}-/)
    expect(json(previewedJson)).toEqual({
      organization: { name: "Invitations Org" },
      role: "admin",
      invitedBy: { name: "Owner" },
      expiresAt: carolInvitation.invitation.expiresAt
    })

    const [all, onlyCanceled, table, cancelAgain, wrongPerson] = await Promise.all([
      cli(["invitations", "list", "--json"], env),
      cli(["invitations", "list", "--status", "canceled", "--json"], env),
      cli(["invitations", "list", "--status", "pending"], env),
      cli(["invitations", "cancel", json(invitedDave).invitation.id], env),
      // Bob's session cannot take Carol's invitation (and the refusal leaves it pending).
      cli(["invitations", "accept", carolInvitation.inviteToken, "--profile", "bob"])
    ])
    expect(all.code, all.stderr).toBe(0)
    expect(json(all).items.map((item: { email: string }) => item.email).sort()).toEqual([bob, carol, dave].sort())
    expect(json(onlyCanceled).items.map((item: { email: string }) => item.email)).toEqual([dave])
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+EMAIL\s+ROLE\s+STATUS\s+CREATED\s+EXPIRES$/)
    expect(table.stdout).toMatch(new RegExp(`^inv_\\w+\\s+${bob.replace(/\./g, "\\.")}\\s+admin\\s+pending\\s`, "m"))
    expect(table.stdout).not.toContain(dave)
    expect(cancelAgain.code).toBe(1)
    expect(cancelAgain.stderr).toMatch(/^error: invitation_not_pending \(409\)/)
    expect(wrongPerson.code).toBe(1)
    expect(wrongPerson.stderr).toMatch(/^error: invitation_email_mismatch \(403\)/)

    // Bob accepts with his saved session; Carol signs up while accepting (her session is saved in her profile).
    const [accepted, signedUp, oldToken] = await Promise.all([
      cli(["invitations", "accept", bobInvitation.inviteToken, "--profile", "bob"]),
      cli(["invitations", "accept", carolInvitation.inviteToken, "--sign-up", "--name", "Carol", "--profile", "carol", "--url", server.url, "--json"], {
        ORGPLANE_PASSWORD: PASSWORD
      }),
      cli(["invitations", "accept", carolFirstToken, "--sign-up", "--name", "Carol", "--url", server.url], { ORGPLANE_PASSWORD: PASSWORD })
    ])
    expect(accepted.code, accepted.stderr).toBe(0)
    expect(accepted.stdout.trim()).toBe(
      `Joined Invitations Org (${owner.organization.id}) as admin; it is now your active organization.`
    )
    expect(signedUp.code, signedUp.stderr).toBe(0)
    const joined = json(signedUp)
    expect(joined).toMatchObject({
      organization: { id: owner.organization.id },
      membership: { role: "admin" },
      user: { email: carol, name: "Carol" },
      session: { token: expect.any(String) }
    })
    expect(oldToken.code).toBe(4)
    expect(oldToken.stderr).toMatch(/^error: invitation_not_found \(404\)/)

    const profiles = JSON.parse(await Fs.readFile(Path.join(configDir, "config.json"), "utf8")).profiles
    expect(profiles.carol).toEqual({ url: server.url, token: joined.session.token, email: carol })
    // The saved session works, in the organization it joined.
    const carolMe = await cli(["whoami", "--profile", "carol", "--json"])
    expect(json(carolMe)).toMatchObject({ user: { email: carol }, organization: { id: owner.organization.id }, membership: { role: "admin" } })
  })

  it("exits 2 on invalid arguments and 3 without a credential, before sending anything", async () => {
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: "unused" }
    const results = await Promise.all([
      cli(["members", "role", "not-an-id", "admin"], env),
      cli(["members", "list", "--limit", "101"], env),
      cli(["teams", "add", UNKNOWN_TEAM], env),
      cli(["teams", "create", "X", "--member", "tem_00000000000000000000000000"], env),
      cli(["invitations", "create", "not-an-email"], env),
      cli(["invitations", "create", "erin@example.com", "--role", "owner"], env),
      cli(["invitations", "accept", "some-token", "--sign-up"], env),
      cli(["invitations", "accept", "some-token", "--sign-up", "--name", "Erin"], env), // no password, no terminal
      cli(["invitations", "accept", "some-token", "--name", "Erin"], env),
      // Accepting needs a session, or --sign-up.
      cli(["invitations", "accept", "some-token", "--url", server.url])
    ])
    expect(results.map((result) => result.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 3])
    expect(results[0]!.stderr).toContain("memberId: TypeID must start with 'om_' (organization membership id)")
    expect(results[1]!.stderr).toContain("--limit: must be an integer from 1 to 100")
    expect(results[3]!.stderr).toContain("--member: TypeID must start with 'om_' (organization membership id); 'tem_…' is a team id")
    expect(results[4]!.stderr).toContain("email: must be an email address")
    expect(results[6]!.stderr).toContain("--sign-up needs --name")
    expect(results[7]!.stderr).toContain("ORGPLANE_PASSWORD")
    expect(results[8]!.stderr).toContain("only for --sign-up")
    expect(results[9]!.stderr).toContain("not logged in")
  })

  it("exports the organization's document, the same JSON with --json, and refuses a plain member", async () => {
    const owner = await Http.owner(server.url, "Document Org")
    const member = await join(owner.token, "member", "Dora")
    const { cli } = await fresh()
    const [human, asJson, refused] = await Promise.all([
      cli(["config", "export"], as(owner.token)),
      cli(["config", "export", "--json"], as(owner.token)),
      cli(["config", "export"], as(member.token))
    ])
    expect(human.code, human.stderr).toBe(0)
    const document = JSON.parse(human.stdout)
    expect(document).toMatchObject({
      version: 1,
      organization: { name: "Document Org", logoUrl: null, metadata: {} },
      members: [owner.email, member.email].sort().map((email) => ({ email, role: email === owner.email ? "owner" : "member" })),
      invitations: [],
      teams: []
    })
    expect(json(asJson)).toEqual(document)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("insufficient_role")

    // Its own export plans nothing; an edited one plans the edit; a bad file is a usage error naming where.
    const { home } = await fresh()
    const exported = Path.join(home, "acme.json")
    const edited = Path.join(home, "edited.json")
    const broken = Path.join(home, "broken.json")
    await Fs.writeFile(exported, human.stdout)
    await Fs.writeFile(edited, JSON.stringify({ ...document, members: [{ email: member.email, role: "admin" }] }))
    await Fs.writeFile(broken, JSON.stringify({ version: 1, members: [{ email: member.email, role: "king" }] }))
    const [same, changed, changedJson, bad] = await Promise.all([
      cli(["config", "plan", "--file", exported], as(owner.token)),
      cli(["config", "plan", "--file", edited], as(owner.token)),
      cli(["config", "plan", "--file", edited, "--json"], as(owner.token)),
      cli(["config", "plan", "--file", broken], as(owner.token))
    ])
    expect(same.code, same.stderr).toBe(0)
    expect(same.stdout).toContain("0 to create, 0 to update, 0 to delete")
    expect(changed.code, changed.stderr).toBe(0)
    expect(changed.stdout).toContain(`| update | member | ${member.email} | role | "member" | "admin" |`)
    expect(json(changedJson).changes).toEqual([
      { action: "update", kind: "member", name: member.email, fields: [{ field: "role", before: "member", after: "admin" }] }
    ])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--file: members.0.role:")

    // The same document as YAML, with the line that points editors at its JSON Schema, plans nothing either.
    const yaml = await cli(["config", "export", "--yaml"], as(owner.token))
    expect(yaml.code, yaml.stderr).toBe(0)
    expect(yaml.stdout).toMatch(/^# yaml-language-server: \$schema=\.\/node_modules\/@orgplane\/schema\/organization-document\.schema\.json\nversion: 1\n/)
    const asYaml = Path.join(home, "acme.yaml")
    const brokenYaml = Path.join(home, "broken.yml")
    await Fs.writeFile(asYaml, yaml.stdout)
    await Fs.writeFile(brokenYaml, "version: 1\nmembers:\n  - email: [unclosed\n")
    const [sameYaml, badYaml] = await Promise.all([
      cli(["config", "plan", "--file", asYaml], as(owner.token)),
      cli(["config", "plan", "--file", brokenYaml], as(owner.token))
    ])
    expect(sameYaml.code, sameYaml.stderr).toBe(0)
    expect(sameYaml.stdout).toContain("0 to create, 0 to update, 0 to delete")
    expect(badYaml.code).toBe(2)
    expect(badYaml.stderr).toContain("--file: is not YAML")

    // Applied with the hash the plan printed: the member is an admin, and the same apply again changes nothing.
    const planHash = json(changedJson).planHash
    expect(changed.stdout).toContain(`orgplane config apply --file <path> --plan ${planHash}`)
    const applied = await cli(["config", "apply", "--file", edited, "--plan", planHash], as(owner.token))
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain(`Applied 1 change (plan ${planHash}):\n  update member ${member.email}`)
    const [again, stale, badHash] = await Promise.all([
      cli(["config", "apply", "--file", edited, "--plan", planHash, "--json"], as(owner.token)),
      cli(["config", "apply", "--file", exported, "--plan", planHash], as(owner.token)),
      cli(["config", "apply", "--file", exported, "--plan", "abc"], as(owner.token))
    ])
    expect(json(again)).toMatchObject({ planHash, changes: [] })
    expect(stale.code).not.toBe(0)
    expect(stale.stderr).toContain("plan_stale")
    expect(badHash.code).toBe(2)
    expect(badHash.stderr).toContain("--plan")

    // Drift: none right after the apply; a change outside it is named with who made it.
    const clean = await cli(["config", "drift"], as(owner.token))
    expect(clean.stdout).toContain(`Applied plan ${planHash} at `)
    expect(clean.stdout).toContain("No drift: the organization is the document.")
    const demoted = await cli(["members", "role", member.membership.id, "member"], as(owner.token))
    expect(demoted.code, demoted.stderr).toBe(0)
    const drifted = await cli(["config", "drift"], as(owner.token))
    expect(drifted.code, drifted.stderr).toBe(0)
    expect(drifted.stdout).toContain(`member ${member.email}: role is "member", the document says "admin"`)
    expect(drifted.stdout).toMatch(new RegExp(`changed by: .*${owner.email.replace(".", "\\.")}.* via ses_\\w+, member\\.role\\.update at `))
  })

  it("applies a document's secrets from the environment and files where it runs, only those the plan writes", async () => {
    const owner = await Http.owner(server.url, "Secrets Org")
    const { cli, home } = await fresh()
    const headerFile = Path.join(home, "team.header")
    await Fs.writeFile(headerFile, "team-a\n")
    const document = Path.join(home, "providers.json")
    await Fs.writeFile(document, JSON.stringify({
      version: 1,
      llmProviders: [{
        name: "OpenAI",
        catalogProviderId: "openai",
        models: [{ id: "gpt-4o" }],
        headers: [{ name: "X-Team", value: { from: `file:${headerFile}`, version: 1 } }],
        apiKey: { from: "env:CLI_OPENAI_KEY", version: 1 }
      }]
    }))
    const planned = await cli(["config", "plan", "--file", document], as(owner.token))
    expect(planned.code, planned.stderr).toBe(0)
    expect(planned.stdout).toContain(`The apply reads these secrets where it runs: env:CLI_OPENAI_KEY, file:${headerFile}.`)
    expect(planned.stdout).toContain("(secret set)")
    const planHash = /Plan `(sha256:[0-9a-f]{64})`/.exec(planned.stdout)![1]!
    const unset = await cli(["config", "apply", "--file", document, "--plan", planHash], as(owner.token))
    expect(unset.code).toBe(2)
    expect(unset.stderr).toContain("env:CLI_OPENAI_KEY: the environment variable is not set")
    const applied = await cli(["config", "apply", "--file", document, "--plan", planHash], { ...as(owner.token), CLI_OPENAI_KEY: "sk-from-cli" })
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain("create llmProvider OpenAI")
    expect(applied.stdout).not.toContain("sk-from-cli")
    // The provider holds the values read: the key from the environment, the header from the file without its newline.
    const listed = await Http.request(server.url, "GET", "/v1/llm-providers", { token: owner.token })
    const id = (listed.body as { items: Array<{ id: string }> }).items[0]!.id
    const connected = await Http.request(server.url, "GET", `/v1/llm-providers/${id}/connect`, { token: owner.token })
    expect(connected.body).toMatchObject({ apiKey: "sk-from-cli", headers: { "X-Team": "team-a" } })
    // Applied, the document writes nothing: no secret is read, none is needed.
    const again = await cli(["config", "apply", "--file", document, "--plan", planHash, "--json"], as(owner.token))
    expect(again.code, again.stderr).toBe(0)
    expect(json(again).changes).toEqual([])
  })

  it("lists the new commands: their groups in the overview, each command on its group's page", async () => {
    const { cli } = await fresh()
    const overview = await cli(["--help"])
    expect(overview.code).toBe(0)
    const commands = {
      members: ["list", "role", "remove", "transfer-ownership"],
      teams: ["create", "list", "add", "remove", "rename", "delete"],
      invitations: ["create", "list", "cancel", "accept"],
      config: ["export", "plan", "apply", "drift"]
    }
    for (const [group, names] of Object.entries(commands)) {
      expect(overview.stdout).toMatch(new RegExp(`^  ${group} `, "m"))
      const page = await cli(["help", group])
      expect(page.code).toBe(0)
      for (const name of names) expect(page.stdout).toMatch(new RegExp(`^  ${name} `, "m"))
    }
  })
})
