/**
 * `orgplane config-objects | plugins | marketplaces | access`: the CLI in-process (see Harness.ts) against a real
 * server, checked against what the API's descriptions promise; `--json` output decoded with the response schemas.
 */
import {
  ConfigObjectPage,
  ConfigObjectResponse,
  ConfigObjectVersionDetail,
  ConfigObjectVersionPage,
  MarketplaceAccessGrantPage,
  MarketplaceAccessGrantResponse,
  MarketplacePluginResponse,
  MarketplaceResponse,
  PluginAccessGrantResponse,
  PluginConfigObjectPage,
  PluginConfigObjectResponse,
  PluginDetail,
  PluginPage,
  PluginResponse,
  ResolvedMarketplaceResponse,
  TeamResponse
} from "@orgplane/schema"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const as = (token: string) => ({ ORGPLANE_URL: server.url, ORGPLANE_TOKEN: token })

/** The result's stdout decoded with the response schema: fails the test when `--json` printed anything else. */
const decoded = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, result: Result): S["Type"] => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

const skill = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`

/** Source files in a fresh folder: `{ "deploy/SKILL.md": "..." }` → their paths. */
const files = async (home: string, contents: Record<string, string>) => {
  const paths: Record<string, string> = {}
  for (const [name, text] of Object.entries(contents)) {
    const path = Path.join(home, "sources", name)
    await Fs.mkdir(Path.dirname(path), { recursive: true })
    await Fs.writeFile(path, text)
    paths[name] = path
  }
  return paths
}

describe.concurrent("orgplane config-objects, plugins, marketplaces and access", { timeout: 120_000 }, () => {
  it("publishes a skill from a file in a plugin listed in a marketplace, shares it with a team, and revokes that", async () => {
    const owner = await Http.owner(server.url, "Catalog Org")
    const member = await Http.join(server.url, owner.token, "member", "Mallory")
    const team = await Http.request(server.url, "POST", "/v1/teams", {
      token: owner.token,
      body: { name: "Platform", memberIds: [member.membership.id] }
    })
    expect(team.status).toBe(201)
    const teamId: string = Http.expectStatus<typeof TeamResponse.Encoded>("team", team, 201).team.id
    const { cli, home } = await fresh()
    const env = as(owner.token)
    const sources = await files(home, {
      "deploy/SKILL.md": skill("deploy-to-staging", "Deploys the current branch to staging.", "Run `make deploy ENV=staging`."),
      "review/SKILL.md": skill("review-pr", "Reviews a pull request.", "Read the diff first.")
    })

    // A skill from a file: the server parses its front matter; the file's base name is its path.
    const created = decoded(ConfigObjectResponse, await cli(["config-objects", "create", "--type", "skill", "--file", sources["deploy/SKILL.md"]!, "--json"], env))
    const deploy = created.item
    expect(deploy).toMatchObject({
      objectType: "skill",
      title: "deploy-to-staging",
      description: "Deploys the current branch to staging.",
      status: "active",
      sourceMode: "cloud",
      currentFileName: "SKILL.md",
      currentRelativePath: "SKILL.md",
      organizationId: owner.organization.id
    })
    expect(deploy.latestVersion).toMatchObject({ number: 1, parserMode: "markdown", isDeletedVersion: false })
    expect(deploy.latestVersion.rawSourceText).toBe(await Fs.readFile(sources["deploy/SKILL.md"]!, "utf8"))

    const review = await cli(["config-objects", "create", "--type", "skill", "--file", sources["review/SKILL.md"]!, "--path", "skills/review/SKILL.md", "--source-mode", "import"], env)
    expect(review.code, review.stderr).toBe(0)
    expect(review.stdout.trim()).toMatch(/^Created skill 'review-pr' \(cob_\w{26}\), version 1\.$/)
    const reviewId = review.stdout.match(/\((cob_\w+)\)/)![1]!

    // A plugin holding the deploy skill, listed in a marketplace.
    const plugin = decoded(PluginResponse, await cli(["plugins", "create", "--name", "Deploy tools", "--description", "Shipping helpers.", "--json"], env)).item
    expect(plugin).toMatchObject({ name: "Deploy tools", description: "Shipping helpers.", status: "active", memberCount: 0 })
    const added = decoded(PluginConfigObjectResponse, await cli(["plugins", "add-object", plugin.id, deploy.id, "--json"], env)).item
    expect(added).toMatchObject({ pluginId: plugin.id, configObjectId: deploy.id, membershipSource: "manual", removedAt: null })
    const marketplace = decoded(MarketplaceResponse, await cli(["marketplaces", "create", "--name", "Engineering", "--json"], env)).item
    expect(marketplace).toMatchObject({ name: "Engineering", pluginCount: 0, canDelete: true, logoUrl: null })
    const listed = decoded(MarketplacePluginResponse, await cli(["marketplaces", "add-plugin", marketplace.id, plugin.id, "--json"], env)).item
    expect(listed).toMatchObject({ marketplaceId: marketplace.id, pluginId: plugin.id, plugin: { id: plugin.id, memberCount: 1 } })

    // Before any grant the member sees none of it.
    const [noMarketplaces, noPlugin, noSkill] = await Promise.all([
      cli(["marketplaces", "list", "--json"], as(member.token)),
      cli(["plugins", "get", plugin.id], as(member.token)),
      cli(["config-objects", "get", deploy.id, "--json"], as(member.token))
    ])
    expect(json(noMarketplaces).items).toEqual([])
    expect(noPlugin.code).toBe(1)
    expect(noPlugin.stderr).toMatch(/^error: insufficient_access \(403\)/)
    expect(noSkill.code).toBe(1)
    expect(JSON.parse(noSkill.stderr)).toMatchObject({ reason: "insufficient_access" })

    // The team gets viewer access to the marketplace, and through it to the plugin and its skill.
    const granted = decoded(MarketplaceAccessGrantResponse, await cli(["access", "grant", marketplace.id, "--role", "viewer", "--team", teamId, "--json"], env)).item
    expect(granted).toMatchObject({ teamId, role: "viewer", orgWide: false, orgMembershipId: null, removedAt: null })
    const [seenMarketplaces, seenPlugin, seenSkill, seenObjects, hiddenReview] = await Promise.all([
      cli(["marketplaces", "list", "--json"], as(member.token)),
      cli(["plugins", "get", plugin.id, "--json"], as(member.token)),
      cli(["config-objects", "get", deploy.id], as(member.token)),
      cli(["plugins", "objects", plugin.id, "--json"], as(member.token)),
      cli(["config-objects", "list", "--json"], as(member.token))
    ])
    expect(json(seenMarketplaces).items.map((item: { id: string }) => item.id)).toEqual([marketplace.id])
    const detail = decoded(PluginDetail, seenPlugin).item
    expect(detail.marketplaces).toEqual([{ id: marketplace.id, name: "Engineering" }])
    expect(detail.extension.manifest.resources.map((resource) => resource.configObjectId)).toEqual([deploy.id])
    expect(seenSkill.code, seenSkill.stderr).toBe(0)
    expect(seenSkill.stdout).toMatch(/^title +deploy-to-staging$/m)
    expect(seenSkill.stdout).toMatch(/^path +SKILL\.md$/m)
    expect(decoded(PluginConfigObjectPage, seenObjects).items.map((entry) => entry.configObjectId)).toEqual([deploy.id])
    // The review skill is in no plugin the member can view.
    expect(decoded(ConfigObjectPage, hiddenReview).items.map((item) => item.id)).toEqual([deploy.id])

    // The grants: the creator's manager grant and the team's, newest first; as a table too.
    const [grants, grantTable, resolved] = await Promise.all([
      cli(["access", "list", marketplace.id, "--json"], env),
      cli(["access", "list", marketplace.id], env),
      cli(["marketplaces", "resolved", marketplace.id], env)
    ])
    const page = decoded(MarketplaceAccessGrantPage, grants)
    expect(page.items.map((grant) => [grant.role, grant.teamId ?? grant.orgMembershipId])).toEqual([
      ["viewer", teamId],
      ["manager", owner.membership.id]
    ])
    expect(grantTable.stdout.split("\n")[0]).toMatch(/^ID\s+ROLE\s+TO\s+CREATED\s+REVOKED$/)
    expect(grantTable.stdout).toMatch(new RegExp(`^${granted.id}\\s+viewer\\s+team ${teamId}\\s+\\d{4}-\\S+\\s+-$`, "m"))
    expect(resolved.code, resolved.stderr).toBe(0)
    expect(resolved.stdout).toMatch(new RegExp(`^${plugin.id}\\s+Deploy tools\\s+active\\s+1 skill\\s+-\\s+yes$`, "m"))

    // Revoking: the member loses the marketplace, the plugin and the skill at once; the record stays.
    const revoked = await cli(["access", "revoke", marketplace.id, granted.id], env)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(revoked.stdout.trim()).toBe(`Revoked grant ${granted.id} of marketplace ${marketplace.id}; it stops applying at once.`)
    const [goneMarketplaces, gonePlugin, active, everything, again] = await Promise.all([
      cli(["marketplaces", "list", "--json"], as(member.token)),
      cli(["plugins", "get", plugin.id], as(member.token)),
      cli(["access", "list", marketplace.id, "--json"], env),
      cli(["access", "list", marketplace.id, "--include-revoked", "--json"], env),
      cli(["access", "revoke", marketplace.id, granted.id, "--json"], env)
    ])
    expect(json(goneMarketplaces).items).toEqual([])
    expect(gonePlugin.stderr).toMatch(/^error: insufficient_access \(403\)/)
    expect(decoded(MarketplaceAccessGrantPage, active).items.map((grant) => grant.id)).not.toContain(granted.id)
    expect(decoded(MarketplaceAccessGrantPage, everything).items.find((grant) => grant.id === granted.id)?.removedAt).toBeInstanceOf(Date)
    expect(json(again)).toEqual({ ok: true, resource: marketplace.id, revoked: granted.id })

    // The owner's table of config objects, newest first.
    const table = await cli(["config-objects", "list", "--type", "skill"], env)
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+TYPE\s+TITLE\s+STATUS\s+VERSION\s+UPDATED$/)
    expect(table.stdout.trim().split("\n").slice(1).map((line) => line.split(/\s+/)[0])).toEqual([reviewId, deploy.id])
  })

  it("adds versions from files, archives, deletes and restores a config object; grants a member a plugin directly", async () => {
    const owner = await Http.owner(server.url, "Versions Org")
    const member = await Http.join(server.url, owner.token, "member", "Eddie")
    const { cli, home } = await fresh()
    const env = as(owner.token)
    const sources = await files(home, {
      "v1/SKILL.md": skill("lint-code", "Lints the code.", "Run the linter."),
      "v2/SKILL.md": skill("lint-code", "Lints and formats the code.", "Run the linter, then the formatter."),
      "bad/SKILL.md": "no front matter here\n"
    })
    const object = decoded(ConfigObjectResponse, await cli(["config-objects", "create", "--type", "skill", "--file", sources["v1/SKILL.md"]!, "--json"], env)).item

    const second = await cli(["config-objects", "add-version", object.id, "--file", sources["v2/SKILL.md"]!, "--reason", "formatter too"], env)
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout.trim()).toMatch(new RegExp(`^Added version 2 \\(cov_\\w+\\) to skill 'lint-code' \\(${object.id}\\)\\.$`))
    const refused = await cli(["config-objects", "add-version", object.id, "--file", sources["bad/SKILL.md"]!, "--json"], env)
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: "invalid_request" })

    const versions = decoded(ConfigObjectVersionPage, await cli(["config-objects", "versions", object.id, "--json"], env))
    expect(versions.items.map((version) => [version.number, version.sourceRevisionRef])).toEqual([[2, "formatter too"], [1, null]])
    const [one, shown] = await Promise.all([
      cli(["config-objects", "version", object.id, versions.items[1]!.id, "--json"], env),
      cli(["config-objects", "version", object.id, versions.items[0]!.id], env)
    ])
    expect(decoded(ConfigObjectVersionDetail, one).item.rawSourceText).toBe(await Fs.readFile(sources["v1/SKILL.md"]!, "utf8"))
    expect(shown.stdout).toMatch(/^reason +formatter too$/m)
    expect(shown.stdout.trimEnd().endsWith("Run the linter, then the formatter.")).toBe(true)

    // Lifecycle: archive, delete (twice changes nothing), listed only with --include-deleted, restore.
    const archived = decoded(ConfigObjectResponse, await cli(["config-objects", "archive", object.id, "--json"], env)).item
    expect(archived.status).toBe("archived")
    const deleted = await cli(["config-objects", "delete", object.id], env)
    expect(deleted.stdout.trim()).toBe(`Deleted skill 'lint-code' (${object.id}); its status is now deleted.`)
    const [deletedAgain, hidden, shownDeleted, deletionVersions] = await Promise.all([
      cli(["config-objects", "delete", object.id, "--json"], env),
      cli(["config-objects", "list", "--json"], env),
      cli(["config-objects", "list", "--include-deleted", "--json"], env),
      cli(["config-objects", "versions", object.id, "--include-deleted", "--json"], env)
    ])
    expect(decoded(ConfigObjectResponse, deletedAgain).item).toMatchObject({ status: "deleted", deletedAt: expect.any(Date) })
    expect(json(hidden).items).toEqual([])
    expect(json(shownDeleted).items.map((item: { id: string }) => item.id)).toEqual([object.id])
    expect(decoded(ConfigObjectVersionPage, deletionVersions).items[0]).toMatchObject({ number: 3, isDeletedVersion: true, rawSourceText: null })
    const restored = decoded(ConfigObjectResponse, await cli(["config-objects", "restore", object.id, "--json"], env)).item
    expect(restored).toMatchObject({ status: "active", deletedAt: null, description: "Lints and formats the code." })

    // A plugin shared with one member as an editor: they may rename it, not delete it.
    const plugin = decoded(PluginResponse, await cli(["plugins", "create", "--name", "Lint", "--json"], env)).item
    const grant = decoded(PluginAccessGrantResponse, await cli(["access", "grant", plugin.id, "--role", "editor", "--member", member.membership.id, "--json"], env)).item
    expect(grant).toMatchObject({ orgMembershipId: member.membership.id, role: "editor" })
    const [renamed, notDeleted] = await Promise.all([
      cli(["plugins", "update", plugin.id, "--name", "Lint and format", "--json"], as(member.token)),
      cli(["plugins", "delete", plugin.id], as(member.token))
    ])
    // After the rename: the old name is free again (run beside it, the create could come first and answer 409).
    const duplicate = await cli(["plugins", "create", "--name", "LINT"], env)
    expect(decoded(PluginResponse, renamed).item.name).toBe("Lint and format")
    expect(notDeleted.stderr).toMatch(/^error: insufficient_access \(403\)/)
    expect(duplicate.code, duplicate.stderr).toBe(0)
    const [byName, removedObject] = await Promise.all([
      cli(["plugins", "list", "--query", "format", "--json"], env),
      cli(["plugins", "add-object", plugin.id, object.id], env).then(() => cli(["plugins", "remove-object", plugin.id, object.id, "--json"], env))
    ])
    expect(decoded(PluginPage, byName).items.map((item) => item.id)).toEqual([plugin.id])
    expect(json(removedObject)).toEqual({ ok: true, plugin: plugin.id, removed: object.id })
    const archivedPlugin = await cli(["plugins", "archive", plugin.id], env)
    expect(archivedPlugin.stdout.trim()).toBe(`Archived plugin Lint and format (${plugin.id}); its status is now archived.`)
  })

  it("updates and deletes marketplaces; a member may not create one", async () => {
    const owner = await Http.owner(server.url, "Marketplace Org")
    const member = await Http.join(server.url, owner.token, "member", "Mona")
    const { cli } = await fresh()
    const env = as(owner.token)
    const marketplace = decoded(MarketplaceResponse, await cli(["marketplaces", "create", "--name", "Tools", "--logo-url", "https://example.com/logo.png", "--json"], env)).item
    expect(marketplace.logoUrl).toBe("https://example.com/logo.png")
    const [updated, byMember] = await Promise.all([
      cli(["marketplaces", "update", marketplace.id, "--description", "Everything we use.", "--no-logo", "--json"], env),
      cli(["marketplaces", "create", "--name", "Mine"], as(member.token))
    ])
    expect(decoded(MarketplaceResponse, updated).item).toMatchObject({ description: "Everything we use.", logoUrl: null })
    expect(byMember.code).toBe(1)
    expect(byMember.stderr).toMatch(/^error: insufficient_role \(403\)/)
    const resolved = decoded(ResolvedMarketplaceResponse, await cli(["marketplaces", "resolved", marketplace.id, "--json"], env))
    expect(resolved.item).toMatchObject({ plugins: [], source: null, marketplace: { id: marketplace.id } })
    const deleted = decoded(MarketplaceResponse, await cli(["marketplaces", "delete", marketplace.id, "--json"], env)).item
    expect(deleted).toMatchObject({ status: "deleted", deletedAt: expect.any(Date) })
    const listed = await cli(["marketplaces", "list", "--include-deleted"], env)
    expect(listed.stdout).toMatch(new RegExp(`^${marketplace.id}\\s+Tools\\s+deleted\\s+0\\s+`, "m"))
  })
})

describe("catalog usage errors, before anything is sent", () => {
  // No server at this address: a request would exit 5.
  const env = { ORGPLANE_URL: "http://127.0.0.1:9", ORGPLANE_TOKEN: "unused" }
  const PLUGIN = "plg_01h455vb4pex5vsknk084sn02q"
  const TEAM = "tem_01h455vb4pex5vsknk084sn02q"

  it("names the kinds a resource id may be, and the kind of a grant id that does not fit", async () => {
    const { cli } = await fresh()
    const [team, garbage, json, mismatch, short] = await Promise.all([
      cli(["access", "grant", TEAM, "--role", "viewer", "--org-wide"], env),
      cli(["access", "list", "nothing"], env),
      cli(["access", "list", TEAM, "--json"], env),
      cli(["access", "revoke", PLUGIN, "coa_01h455vb4pex5vsknk084sn02q"], env),
      cli(["access", "list", "plg_123"], env)
    ])
    expect(team.code).toBe(2)
    expect(team.stderr).toContain(
      "error: resourceId: must be the id of a config object (cob_…), plugin (plg_…) or marketplace (mkt_…); 'tem_…' is a team id"
    )
    expect(garbage.code).toBe(2)
    expect(garbage.stderr).toContain("resourceId: must be the id of a config object (cob_…), plugin (plg_…) or marketplace (mkt_…)")
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stderr)).toEqual({ error: "usage", message: expect.stringContaining("'tem_…' is a team id") })
    expect(mismatch.code).toBe(2)
    expect(mismatch.stderr.trim()).toBe("error: grantId: grants of a plugin start with 'pag_'; 'coa_…' is a config object's grant")
    expect(short.code).toBe(2)
    expect(short.stderr).toContain("resourceId: TypeID must be 30 characters")
  })

  it("wants exactly one grantee, something to update, and a readable, non-empty --file", async () => {
    const { cli, home } = await fresh()
    const blank = Path.join(home, "blank.md")
    await Fs.writeFile(blank, " \n\n")
    const [none, two, nothing, noFile, missing, empty, directory] = await Promise.all([
      cli(["access", "grant", PLUGIN, "--role", "viewer"], env),
      cli(["access", "grant", PLUGIN, "--role", "viewer", "--team", TEAM, "--org-wide", "--json"], env),
      cli(["plugins", "update", PLUGIN], env),
      cli(["config-objects", "create", "--type", "skill", "--json"], env),
      cli(["config-objects", "create", "--type", "skill", "--file", Path.join(home, "nope.md")], env),
      cli(["config-objects", "add-version", "cob_01h455vb4pex5vsknk084sn02q", "--file", blank], env),
      cli(["config-objects", "create", "--type", "skill", "--file", home], env)
    ])
    expect(none.code).toBe(2)
    expect(none.stderr.trim()).toBe("error: give exactly one of --member, --team or --org-wide: who the grant is for")
    expect(two.code).toBe(2)
    expect(JSON.parse(two.stderr)).toMatchObject({ error: "usage" })
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toContain("give at least one of --name, --description")
    expect(noFile.code).toBe(2)
    expect(JSON.parse(noFile.stderr)).toEqual({ error: "usage", message: expect.stringContaining("--file") })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(`--file: cannot read '${Path.join(home, "nope.md")}': no such file`)
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain("--file: must not be empty or only white space")
    expect(directory.code).toBe(2)
    expect(directory.stderr).toContain("is not a file")
  })

  it("checks the object type and the plugin ids with the API's schemas", async () => {
    const { cli, home } = await fresh()
    const source = Path.join(home, "SKILL.md")
    await Fs.writeFile(source, skill("x", "y", "z"))
    const [type, plugin] = await Promise.all([
      cli(["config-objects", "create", "--type", "recipe", "--file", source], env),
      cli(["config-objects", "create", "--type", "skill", "--file", source, "--plugin", TEAM], env)
    ])
    expect(type.code).toBe(2)
    expect(plugin.code).toBe(2)
    expect(plugin.stderr).toContain("--plugin: TypeID must start with 'plg_' (plugin id); 'tem_…' is a team id")
  })
})
