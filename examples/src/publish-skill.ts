/**
 * An automation script with the Promise client: publish a skill to a team. The skill's file becomes a config object
 * (a new version when it was published before and has changed), bundled in a plugin, listed in a marketplace, and
 * the team gets viewer access to the marketplace, which lets its members view the plugin and the skill. Each step
 * is said as it is done; any failure stops the script with a non-zero exit. Safe to run again.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 ORGPLANE_API_KEY=opk_... \
 *     pnpm --filter @orgplane/examples publish-skill examples/skills/deploy-to-staging/SKILL.md Platform
 *
 * Without ORGPLANE_URL it starts a throwaway server first (in memory), with an organization that has a team
 * Platform, and runs against that.
 */
import { createClient, OrgplaneError, paginate } from "@orgplane/client"
import type { ObjectType } from "@orgplane/schema"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { startLocalServer } from "./local-server.js"

export interface PublishOptions {
  readonly baseUrl: string
  readonly apiKey: string
  /** The skill: Markdown with `name` and `description` in its YAML front matter. */
  readonly skillFile: string
  /** The team (by name) that gets viewer access. */
  readonly team: string
  readonly plugin?: string
  readonly marketplace?: string
  /** Where each step is told. */
  readonly log?: (line: string) => void
}

export interface PublishReport {
  readonly configObject: { readonly id: string; readonly title: string; readonly version: number; readonly changed: boolean }
  readonly plugin: { readonly id: string; readonly name: string }
  readonly marketplace: { readonly id: string; readonly name: string }
  readonly grant: { readonly id: string; readonly teamId: string; readonly role: string }
  readonly listed: Partial<Record<ObjectType, number>>
}

/** Whether the server refused with `code` (a name taken, say). */
const refusedWith = (error: unknown, code: string) => error instanceof OrgplaneError && error.code === code

export const publish = async (options: PublishOptions): Promise<PublishReport> => {
  const log = options.log ?? ((line: string) => console.log(line))
  const pluginName = options.plugin ?? "Deploy tools"
  const marketplaceName = options.marketplace ?? "Engineering"
  const client = createClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  try {
    // The team first: without it there is nothing to publish to.
    let teamId: string | undefined
    for await (const team of paginate(client.teams.list, { urlParams: { q: options.team } })) {
      if (team.name.toLowerCase() === options.team.toLowerCase()) teamId = team.id
    }
    if (teamId === undefined) throw new Error(`no team named '${options.team}' in the organization`)

    // 1. The skill, as a config object: its path is `<folder>/SKILL.md`, which finds it again on the next run.
    const source = await Fs.readFile(options.skillFile, "utf8")
    const relativePath = Path.join(Path.basename(Path.dirname(options.skillFile)), Path.basename(options.skillFile))
    let existing: { readonly id: string; readonly rawSourceText: string | null } | undefined
    for await (const object of paginate(client.configObjects.list, { urlParams: { objectType: "skill" } })) {
      if (object.currentRelativePath === relativePath) existing = { id: object.id, rawSourceText: object.latestVersion.rawSourceText }
    }
    const { item: skill } = existing === undefined
      ? await client.configObjects.create({ payload: { input: { objectType: "skill", rawSourceText: source, relativePath } } })
      : existing.rawSourceText === source
      ? await client.configObjects.get({ path: { configObjectId: existing.id } })
      : await client.configObjects.createVersion({
        path: { configObjectId: existing.id },
        payload: { input: { rawSourceText: source }, reason: `published from ${relativePath}` }
      })
    const changed = existing === undefined || existing.rawSourceText !== source
    log(
      `${existing === undefined ? "Published" : changed ? "Updated" : "Unchanged:"} skill ${skill.title} (${skill.id}), version ${skill.latestVersion.number}`
    )

    // 2. The plugin that bundles it (names are unique in the organization: an existing one is reused).
    const plugin = await client.plugins.create({ payload: { name: pluginName, description: "Skills for shipping." } }).then(
      ({ item }) => item,
      async (error) => {
        if (!refusedWith(error, "plugin_exists")) throw error
        for await (const found of paginate(client.plugins.list, { urlParams: { q: pluginName } })) {
          if (found.name.toLowerCase() === pluginName.toLowerCase()) return found
        }
        throw error
      }
    )
    await client.plugins.addConfigObject({ path: { pluginId: plugin.id }, payload: { configObjectId: skill.id } })
    log(`Bundled it in plugin ${plugin.name} (${plugin.id})`)

    // 3. The marketplace that lists the plugin.
    const marketplace = await client.marketplaces.create({ payload: { name: marketplaceName } }).then(
      ({ item }) => item,
      async (error) => {
        if (!refusedWith(error, "marketplace_exists")) throw error
        for await (const found of paginate(client.marketplaces.list, { urlParams: { q: marketplaceName } })) {
          if (found.name.toLowerCase() === marketplaceName.toLowerCase()) return found
        }
        throw error
      }
    )
    await client.marketplaces.addPlugin({ path: { marketplaceId: marketplace.id }, payload: { pluginId: plugin.id } })
    log(`Listed the plugin in marketplace ${marketplace.name} (${marketplace.id})`)

    // 4. The team may view the marketplace, and so the plugin and the skill (granting again replaces the role).
    const { item: grant } = await client.marketplaces.marketplaceGrant({
      path: { marketplaceId: marketplace.id },
      payload: { teamId, role: "viewer" }
    })
    log(`Granted team ${options.team} (${teamId}) ${grant.role} access to the marketplace (grant ${grant.id})`)

    // What members of the team now find there.
    const { item: resolved } = await client.marketplaces.resolved({ path: { marketplaceId: marketplace.id } })
    const listed = resolved.plugins.find((entry) => entry.id === plugin.id)
    if (listed === undefined) throw new Error(`marketplace ${marketplace.id} does not list plugin ${plugin.id}`)
    return {
      configObject: { id: skill.id, title: skill.title, version: skill.latestVersion.number, changed },
      plugin: { id: plugin.id, name: plugin.name },
      marketplace: { id: marketplace.id, name: marketplace.name },
      grant: { id: grant.id, teamId, role: grant.role },
      listed: listed.componentCounts
    }
  } finally {
    await client.close()
  }
}

/** The demo's organization on a fresh server: an owner, ada@example.com in team Platform, and an API key for the script. */
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
      const { membership } = await anonymous.invitations.accept({ payload: { token: inviteToken, signUp: { name: "Ada Lovelace", password } } })
      await owner.teams.create({ payload: { name: "Platform", memberIds: [membership.id] } })
      const { key } = await owner.apiKeys.create({ payload: { name: "publishing" } })
      return { apiKey: key, ada: { email: "ada@example.com", password } }
    } finally {
      await owner.close()
    }
  } finally {
    await anonymous.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, team] = process.argv.slice(2)
  if (!file || !team) {
    console.error("usage: publish-skill.ts <SKILL.md> <team name>")
    process.exit(2)
  }
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "" && (process.env.ORGPLANE_API_KEY ?? "") === "") {
    console.error("ORGPLANE_API_KEY: an API key of the organization is needed with ORGPLANE_URL (orgplane api-keys create publishing)")
    process.exit(2)
  }
  // pnpm runs the script in examples/; a relative path means one from where the command was typed.
  const skillFile = Path.resolve(process.env.INIT_CWD ?? process.cwd(), file)
  const local = given === "" ? await startLocalServer() : undefined
  try {
    const baseUrl = local?.url ?? given
    const apiKey = local === undefined ? process.env.ORGPLANE_API_KEY! : (await demoOrganization(local.url)).apiKey
    if (local !== undefined) {
      console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} (organization Acme, team Platform: ada@example.com).`)
    }
    const report = await publish({ baseUrl, apiKey, skillFile, team })
    console.log(JSON.stringify(report, null, 2))
  } finally {
    await local?.close()
  }
}
