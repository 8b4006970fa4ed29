/**
 * Organization as code with the Promise client: export the organization's document, edit it, plan the edit (the
 * server computes it, as Markdown for a pull request), apply exactly that plan, and see that the document now plans
 * nothing. docs/config-as-code.md has the rules.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_TOKEN=ops_... pnpm --filter @orgplane/examples org-as-code
 *
 * Without ORGPLANE_URL it starts a throwaway server first (in memory), with an organization whose members are its
 * owner@example.com and ada@example.com, and runs against that as the owner. The edit makes ada@example.com an
 * admin, invites alan@example.com and creates the team Platform with both members.
 */
import { createClient } from "@orgplane/client"
import type { AppliedPlan, OrganizationDocument, OrganizationPlan } from "@orgplane/schema"
import { startLocalServer } from "./local-server.js"
import { demoOrganization } from "./onboard-team.js"

export interface Outcome {
  readonly plan: OrganizationPlan
  readonly applied: AppliedPlan
  /** The same document planned again once applied: no changes. */
  readonly after: OrganizationPlan
}

/** The edit a change request would make to the exported document. */
export const edit = (document: OrganizationDocument): OrganizationDocument => ({
  ...document,
  members: (document.members ?? []).map((member) => member.email === "ada@example.com" ? { ...member, role: "admin" } : member),
  invitations: [...(document.invitations ?? []), { email: "alan@example.com", role: "member", delivery: "shown" }],
  teams: [...(document.teams ?? []), { name: "Platform", externalKey: "grp-platform", members: ["ada@example.com", "owner@example.com"] }]
})

export const asCode = async (options: { readonly baseUrl: string; readonly token: string }): Promise<Outcome> => {
  const client = createClient(options)
  try {
    const exported = await client.organizationDocument.export()
    const document = edit(exported)
    const plan = await client.organizationDocument.plan({ payload: { document } })
    // Review `plan.markdown`; then apply exactly that plan: refused if the organization changed in between.
    const applied = await client.organizationDocument.apply({ payload: { document, planHash: plan.planHash } })
    const after = await client.organizationDocument.plan({ payload: { document } })
    return { plan, applied, after }
  } finally {
    await client.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "" && (process.env.ORGPLANE_TOKEN ?? "") === "") {
    console.error("ORGPLANE_TOKEN: an owner's or admin's session token is needed with ORGPLANE_URL (orgplane login, then orgplane whoami --json)")
    process.exit(2)
  }
  const local = given === "" ? await startLocalServer() : undefined
  try {
    const baseUrl = local?.url ?? given
    const token = local === undefined ? process.env.ORGPLANE_TOKEN! : (await demoOrganization(local.url)).ownerToken
    if (local !== undefined) {
      console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} (organization Acme: owner@example.com, ada@example.com).`)
    }
    const { after, applied, plan } = await asCode({ baseUrl, token })
    console.log(plan.markdown)
    const tokens = applied.inviteTokens.map(({ email, inviteToken }) => `${email}'s invitation token: ${inviteToken}`)
    console.log(`Applied ${applied.changes.length} changes (plan ${applied.planHash}); ${tokens.join("; ")}`)
    console.log(`The document's plan now: ${after.changes.length} changes.`)
  } finally {
    await local?.close()
  }
}
