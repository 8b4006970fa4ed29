/**
 * The organization-as-code section of `pnpm bench` (`--document` or ORGPLANE_BENCH_DOCUMENT=1): an organization of
 * ORGPLANE_BENCH_DOCUMENT_MEMBERS members (default 10,000), ORGPLANE_BENCH_DOCUMENT_TEAMS teams of 10 members each
 * (default 1,000), ORGPLANE_BENCH_DOCUMENT_CATALOG plugins and marketplaces (default 2,000: half plugins, each granted
 * to a team, half marketplaces, each listing two plugins and granted to the organization) and
 * ORGPLANE_BENCH_DOCUMENT_OBJECTS config objects (default 2,000, each with a version, held by a plugin and granted to a
 * team), seeded with SQL on the server's own connection; then, one request each, timed from the client:
 *
 * - the export (`GET /v1/organization/document`);
 * - the plan of the export (empty) and of an edit of it with 1,000 changes: 500 members made admins, 250 teams given
 *   other members, 150 teams created, 100 config objects given new content (a new version each);
 * - the apply of that plan (one transaction: 1,000 changes and their 1,000 audit events), and the plan once applied
 *   (empty).
 *
 * Issue 74's targets on a quiet 2-core machine: a plan within 5 s, the apply of 1,000 changes within 30 s. Of the
 * catalog objects, the document holds config objects, plugins and marketplaces: seeded here, 4,000 by default. Prints figures;
 * asserts nothing but that each answer is a success and the plans are empty where they must be.
 */
import { randomBytes } from "node:crypto"
import type { Agent } from "node:http"
import { ok, request } from "./http.js"

interface Orgplane {
  readonly url: string
  readonly cpu: () => Promise<number | undefined>
  readonly rss: () => Promise<number | undefined>
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<number>
}

const count = (text: string | undefined, fallback: number) => {
  const value = Number(text)
  return text !== undefined && text.trim() !== "" && Number.isInteger(value) && value >= 0 ? value : fallback
}

const MEMBERS = count(process.env.ORGPLANE_BENCH_DOCUMENT_MEMBERS, 10_000)
const TEAMS = count(process.env.ORGPLANE_BENCH_DOCUMENT_TEAMS, 1_000)
const TEAM_SIZE = 10
const PLUGINS = Math.ceil(count(process.env.ORGPLANE_BENCH_DOCUMENT_CATALOG, 2_000) / 2)
const MARKETPLACES = Math.floor(count(process.env.ORGPLANE_BENCH_DOCUMENT_CATALOG, 2_000) / 2)
const OBJECTS = count(process.env.ORGPLANE_BENCH_DOCUMENT_OBJECTS, 2_000)

/** An id of the prefix made from a row number: `<prefix>_01jdecaf` and 18 digits (26 base32 characters). */
const id = (prefix: string, n: string) => `'${prefix}_01jdecaf' || lpad((${n})::text, 18, '0')`

interface Document {
  readonly members: ReadonlyArray<{ readonly email: string; readonly role: string }>
  readonly teams: ReadonlyArray<{ readonly name: string; readonly externalKey: string | null; readonly members: ReadonlyArray<string> }>
  readonly configObjects: ReadonlyArray<{ readonly rawSourceText: string }>
  readonly plugins: ReadonlyArray<unknown>
  readonly marketplaces: ReadonlyArray<unknown>
  readonly [part: string]: unknown
}

interface Plan {
  readonly planHash: string
  readonly changes: ReadonlyArray<unknown>
}

export const measure = async (options: { readonly agent: Agent; readonly orgplane: Orgplane }) => {
  const { agent, orgplane } = options
  const email = `document.owner.${randomBytes(4).toString("hex")}@example.com`
  const signedUp = await ok("sign-up", request(agent, orgplane.url, "POST", "/v1/auth/sign-up", {}, { email, password: "correct horse battery", name: "Document owner" }))
  const auth = { authorization: `Bearer ${signedUp.session.token}` }
  const organizationId = (await ok("organization", request(agent, orgplane.url, "POST", "/v1/organizations", auth, { name: "Document bench" }))).organization.id as string

  const seeding = performance.now()
  await orgplane.sql(
    `INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
     SELECT ${id("usr", "n")}, 'person.' || lpad(n::text, 6, '0') || '@document.example.com', 'Person ' || n, 'x', now(), now()
     FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [MEMBERS]
  )
  await orgplane.sql(
    `INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
     SELECT ${id("om", "n")}, $2, ${id("usr", "n")}, 'member', now(), now() FROM generate_series(1, $1::int) AS n RETURNING 1`,
    [MEMBERS, organizationId]
  )
  await orgplane.sql(
    `INSERT INTO teams (id, organization_id, name, created_at, updated_at)
     SELECT ${id("tem", "t")}, $2, 'Team ' || lpad(t::text, 5, '0'), now(), now() FROM generate_series(1, $1::int) AS t RETURNING 1`,
    [TEAMS, organizationId]
  )
  await orgplane.sql(
    `INSERT INTO team_members (organization_id, team_id, membership_id, created_at)
     SELECT $3, ${id("tem", "t")}, ${id("om", "((t - 1) * $2::int + k - 1) % $4::int + 1")}, now()
     FROM generate_series(1, $1::int) AS t, generate_series(1, $2::int) AS k RETURNING 1`,
    [TEAMS, TEAM_SIZE, organizationId, MEMBERS]
  )
  await orgplane.sql(
    `INSERT INTO plugins (id, organization_id, name, description, status, created_at, updated_at)
     SELECT ${id("plg", "p")}, $2, 'Plugin ' || lpad(p::text, 5, '0'), '', 'active', now(), now()
     FROM generate_series(1, $1::int) AS p RETURNING 1`,
    [PLUGINS, organizationId]
  )
  if (TEAMS > 0) {
    await orgplane.sql(
      `INSERT INTO plugin_grants (id, organization_id, plugin_id, team_id, role, created_at)
       SELECT ${id("pag", "p")}, $2, ${id("plg", "p")}, ${id("tem", "(p - 1) % $3::int + 1")}, 'viewer', now()
       FROM generate_series(1, $1::int) AS p RETURNING 1`,
      [PLUGINS, organizationId, TEAMS]
    )
  }
  await orgplane.sql(
    `INSERT INTO marketplaces (id, organization_id, name, description, status, created_at, updated_at)
     SELECT ${id("mkt", "m")}, $2, 'Marketplace ' || lpad(m::text, 5, '0'), '', 'active', now(), now()
     FROM generate_series(1, $1::int) AS m RETURNING 1`,
    [MARKETPLACES, organizationId]
  )
  await orgplane.sql(
    `INSERT INTO marketplace_grants (id, organization_id, marketplace_id, org_wide, role, created_at)
     SELECT ${id("mag", "m")}, $2, ${id("mkt", "m")}, true, 'viewer', now() FROM generate_series(1, $1::int) AS m RETURNING 1`,
    [MARKETPLACES, organizationId]
  )
  if (PLUGINS > 0) {
    await orgplane.sql(
      `INSERT INTO marketplace_plugins (id, organization_id, marketplace_id, plugin_id, membership_source, created_at)
       SELECT ${id("mkp", "m * 2 + k")}, $2, ${id("mkt", "m")}, ${id("plg", "(m * 2 + k) % $3::int + 1")}, 'manual', now()
       FROM generate_series(1, $1::int) AS m, generate_series(0, 1) AS k RETURNING 1`,
      [MARKETPLACES, organizationId, PLUGINS]
    )
  }
  await orgplane.sql(
    `INSERT INTO config_objects (id, organization_id, object_type, source_mode, status, title, description, search_text,
                                 current_file_name, current_file_extension, current_relative_path, created_at, updated_at)
     SELECT ${id("cob", "o")}, $2, 'context', 'cloud', 'active', 'notes-' || o || '.md', '', 'Notes ' || o,
            'notes-' || o || '.md', 'md', 'context/notes-' || lpad(o::text, 5, '0') || '.md', now(), now()
     FROM generate_series(1, $1::int) AS o RETURNING 1`,
    [OBJECTS, organizationId]
  )
  await orgplane.sql(
    `INSERT INTO config_object_versions (id, organization_id, config_object_id, number, schema_version, parser_mode,
                                         normalized_payload_json, raw_source_text, created_via, is_deleted_version, created_at)
     SELECT ${id("cov", "o")}, $2, ${id("cob", "o")}, 1, '1', 'text', json_build_object('text', 'Notes ' || o), 'Notes ' || o, 'cloud', false, now()
     FROM generate_series(1, $1::int) AS o RETURNING 1`,
    [OBJECTS, organizationId]
  )
  if (TEAMS > 0) {
    await orgplane.sql(
      `INSERT INTO config_object_grants (id, organization_id, config_object_id, team_id, role, created_at)
       SELECT ${id("coa", "o")}, $2, ${id("cob", "o")}, ${id("tem", "(o - 1) % $3::int + 1")}, 'viewer', now()
       FROM generate_series(1, $1::int) AS o RETURNING 1`,
      [OBJECTS, organizationId, TEAMS]
    )
  }
  if (PLUGINS > 0) {
    await orgplane.sql(
      `INSERT INTO plugin_config_objects (id, organization_id, plugin_id, config_object_id, membership_source, created_at)
       SELECT ${id("pco", "o")}, $2, ${id("plg", "(o - 1) % $3::int + 1")}, ${id("cob", "o")}, 'manual', now()
       FROM generate_series(1, $1::int) AS o RETURNING 1`,
      [OBJECTS, organizationId, PLUGINS]
    )
  }
  console.log(`\norganization as code: ${MEMBERS} members, ${TEAMS} teams of ${TEAM_SIZE}, ${PLUGINS} plugins, ${MARKETPLACES} marketplaces, ${OBJECTS} config objects, seeded with SQL in ${((performance.now() - seeding) / 1000).toFixed(1)} s`)

  const timed = async <A>(label: string, run: () => Promise<A>, detail: (value: A) => string) => {
    const cpuBefore = await orgplane.cpu()
    const started = performance.now()
    const value = await run()
    const seconds = (performance.now() - started) / 1000
    const cpuAfter = await orgplane.cpu()
    const cpu = cpuBefore === undefined || cpuAfter === undefined ? "" : `, server CPU ${((cpuAfter - cpuBefore) / 1e6).toFixed(2)} s`
    console.log(`  ${label.padEnd(44)} ${seconds.toFixed(2).padStart(7)} s${cpu}; ${detail(value)}`)
    return value
  }
  const call = <A>(what: string, method: string, path: string, body?: unknown) =>
    ok(what, request(agent, orgplane.url, method, path, auth, body)) as Promise<A>

  const exported = await timed("export", () => call<Document>("export", "GET", "/v1/organization/document"), (document) =>
    `${document.members.length} members, ${document.teams.length} teams, ${document.plugins.length} plugins, ${document.marketplaces.length} marketplaces, ${document.configObjects.length} config objects`)
  const empty = await timed("plan of the export", () => call<Plan>("plan", "POST", "/v1/organization/document/plan", { document: exported }), (plan) =>
    `${plan.changes.length} changes`)
  if (empty.changes.length !== 0) throw new Error(`the plan of the export is not empty: ${empty.changes.length} changes`)

  // 500 members made admins, 250 teams given the next ten members, 150 teams created, 100 config objects given new
  // content: 1,000 changes (fewer new versions where fewer objects are seeded).
  const names = exported.members.filter((member) => member.role === "member").map((member) => member.email)
  const promoted = new Set(names.slice(0, 500))
  const edited: Document = {
    ...exported,
    members: exported.members.map((member) => promoted.has(member.email) ? { ...member, role: "admin" } : member),
    teams: [
      ...exported.teams.map((team, index) =>
        index < 250 ? { ...team, members: names.slice((index * TEAM_SIZE + 5000) % names.length, (index * TEAM_SIZE + 5000) % names.length + TEAM_SIZE) } : team
      ),
      ...Array.from({ length: 150 }, (_, index) => ({ name: `New team ${index}`, externalKey: null, members: names.slice(index, index + 3) }))
    ],
    configObjects: exported.configObjects.map((object, index) => index < 100 ? { ...object, rawSourceText: `${object.rawSourceText}, edited` } : object)
  }
  const planned = await timed("plan of an edit (1,000 changes)", () => call<Plan>("plan", "POST", "/v1/organization/document/plan", { document: edited }), (plan) =>
    `${plan.changes.length} changes`)
  await timed("apply of that plan", () => call<Plan>("apply", "POST", "/v1/organization/document/apply", { document: edited, planHash: planned.planHash }), (applied) =>
    `${applied.changes.length} changes applied in one transaction`)
  const after = await timed("plan once applied", () => call<Plan>("plan", "POST", "/v1/organization/document/plan", { document: edited }), (plan) =>
    `${plan.changes.length} changes`)
  if (after.changes.length !== 0) throw new Error(`the plan once applied is not empty: ${after.changes.length} changes`)
  const rss = await orgplane.rss()
  console.log(`  targets (issue 74, quiet 2-core machine): a plan within 5 s, the apply of 1,000 changes within 30 s${rss === undefined ? "" : `; server RSS ${(rss / 2 ** 20).toFixed(0)} MiB`}`)
}
