/**
 * The move off the embedded database, whole: a server on a data folder holds an account with a password, an
 * organization with members, an API key, an MCP connection whose API key is stored encrypted and a connector that
 * synced a repository with a stored GitHub token; `orgplane db dump` dumps it while the server runs, signed with the
 * key file's key; `orgplane db restore`, checking the signature with that key, loads the dump into a new data folder
 * (a backup's restore), where a server with the key file signs the account in, and into a fresh database of the
 * Postgres on 127.0.0.1:5432 (DATABASE_URL's, when set), where a server with the embedded server's key signs the
 * account in with its password, takes the API key and the session, decrypts the connection's key to list its tools,
 * pages on with a cursor handed out before the move, and syncs the connector on (the GitHub token decrypts, the
 * plugin it made follows a rename). Skipped, saying so, where no Postgres listens.
 */
import { keyFileOf } from "@orgplane/server"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FakeGitHub from "../../../packages/testkit/src/FakeGitHub.js"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as GitRepo from "../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import { cleanup, fresh, json } from "./Harness.js"
import * as Postgres from "./Postgres.js"
import * as RealServer from "./RealServer.js"

if (!Postgres.reachable) console.warn(`DatabaseMove.test.ts skipped: no Postgres listens at ${new URL(Postgres.url).host} (set DATABASE_URL to one)`)

const API_KEY = "sk-moved-secret-456"
const GITHUB_TOKEN = "ghp_moved_secret_0123456789"

let mcp: FakeMcp.FakeMcp
let github: FakeGitHub.FakeGitHub
let repo: GitRepo.GitRepo | undefined

beforeAll(async () => {
  mcp = await FakeMcp.start({ auth: { apiKey: API_KEY } })
  github = await FakeGitHub.start()
})
afterAll(async () => {
  await mcp?.close()
  await github?.close()
  await repo?.remove()
  await Postgres.dropDatabases()
  await cleanup()
})

describe.skipIf(!Postgres.reachable)("moving the embedded database to Postgres (orgplane db dump, orgplane db restore)", { timeout: 600_000 }, () => {
  it("carries accounts, API keys, sessions, encrypted secrets, cursors and connector syncs over, dumped while the server runs", async () => {
    const { cli, home } = await fresh()
    const dataDir = Path.join(home, "data")
    const settings = { ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true", ORGPLANE_CODEHOST_API_URL: github.url }
    const embedded = await RealServer.start(settings, { data: dataDir })
    const dump = Path.join(home, "backup.sql")
    let org: Awaited<ReturnType<typeof Http.staffed>>
    let apiKey: string
    let connectionId: string
    let firstPage: { items: ReadonlyArray<{ id: string }>; nextCursor: string | null }
    let rest: ReadonlyArray<{ id: string }>
    let instanceId: string
    let pluginId: string
    try {
      org = await Http.staffed(embedded.url)
      for (const name of ["Fourth", "Fifth", "Sixth"]) await Http.join(embedded.url, org.owner.token, "member", name)
      apiKey = Http.expectStatus<{ key: string }>(
        "creating an API key",
        await Http.request(embedded.url, "POST", "/v1/api-keys", { token: org.owner.token, body: { name: "deploy" } }),
        201
      ).key
      connectionId = Http.expectStatus<{ item: { id: string } }>(
        "creating an MCP connection",
        await Http.request(embedded.url, "POST", "/v1/mcp-connections", {
          token: org.owner.token,
          body: { name: "Tools", url: mcp.url, authType: "apikey", apiKey: API_KEY }
        }),
        201
      ).item.id
      Http.expectStatus(
        "granting the connection",
        await Http.request(embedded.url, "POST", `/v1/mcp-connections/${connectionId}/access`, { token: org.owner.token, body: { role: "viewer", orgWide: true } }),
        201
      )
      firstPage = Http.expectStatus("the first page of members", await Http.request(embedded.url, "GET", "/v1/members?limit=2", { token: org.owner.token }), 200)
      expect(firstPage.items).toHaveLength(2)
      expect(firstPage.nextCursor).not.toBeNull()
      rest = Http.expectStatus<{ items: ReadonlyArray<{ id: string }> }>(
        "the rest of the members",
        await Http.request(embedded.url, "GET", `/v1/members?limit=10&cursor=${encodeURIComponent(firstPage.nextCursor ?? "")}`, { token: org.owner.token }),
        200
      ).items
      expect(rest).toHaveLength(4)

      // A repository followed by a connector (its GitHub token stored encrypted), synced once.
      repo = await GitRepo.withFiles({
        ".claude-plugin/plugin.json": JSON.stringify({ name: "deploy-tools", description: "Deploys things." }),
        "skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys the service.\n---\n\nRun the deploy script.\n"
      })
      github.addRepository("acme/deploy-tools", repo)
      github.addToken(GITHUB_TOKEN, ["acme/deploy-tools"])
      const env = { ORGPLANE_URL: embedded.url, ORGPLANE_TOKEN: org.owner.token }
      const account = json(await cli(["connectors", "accounts", "connect", "--json"], { ...env, ORGPLANE_CODEHOST_TOKEN: GITHUB_TOKEN })).item
      instanceId = json(await cli(["connectors", "instances", "create", "--account", account.id, "--repository", "acme/deploy-tools", "--name", "deploy-tools", "--json"], env)).item.id
      expect((await cli(["connectors", "targets", "add", instanceId, "--branch", "main"], env)).code).toBe(0)
      pluginId = json(await cli(["connectors", "apply", instanceId, "--all-supported", "--json"], env)).item.plugins[0].pluginId
      const synced = await cli(["connectors", "sync", instanceId, "--wait"], env)
      expect(synced.code, synced.stderr).toBe(0)

      // Dumped while the server runs, through the server: nothing else may open the folder meanwhile.
      const dumped = await cli(["db", "dump", "--data", dataDir, "--out", dump])
      expect(dumped.stderr).toContain(`Its secrets are encrypted with key "local", from the key file ${keyFileOf(dataDir)}`)
      expect(dumped.stdout).toContain(`Wrote ${dump} (`)
      expect(dumped.stdout).toContain("as the running server had it at one instant")
      expect(dumped.code).toBe(0)
      // The server went on serving.
      expect((await Http.request(embedded.url, "GET", "/v1/me", { token: org.owner.token })).status).toBe(200)
    } finally {
      await embedded.close()
    }

    const text = await Fs.readFile(dump, "utf8")
    expect(text).toMatch(/^-- orgplane database dump/u)
    expect(text).toMatch(/\n-- orgplane signature: hmac-sha256 key "local" [A-Za-z0-9_-]{43}\n$/u)
    expect(text).toContain("CREATE TABLE public.orgplane_cluster_messages")
    expect(text).not.toContain(API_KEY)
    expect(text).not.toContain(GITHUB_TOKEN)

    // Three moves of the one dump, each reading the dump or the stopped folder and none the others' targets: side by
    // side, so one's wait on its server or on Postgres is another's time (the embedded database's work is this
    // process's, the servers' and Postgres's their own processes'). Every branch runs to its end before the first
    // failure is reported, so no server outlives the test.
    const keys = (await Fs.readFile(keyFileOf(dataDir), "utf8")).trim()
    const settled = await Promise.allSettled([
      // A stopped folder is read directly.
      (async () => {
        const again = await cli(["db", "dump", "--data", dataDir, "--out", Path.join(home, "stopped.sql"), "--json"])
        expect(again.code).toBe(0)
        expect(json(again)).toMatchObject({ from: "stopped folder", keyIds: ["local"] })
      })(),

      // The backup restores into a new data folder, its key file copied beside it first (the restore checks the
      // dump's signature with it), where a server opens it.
      (async () => {
        const restoredDir = Path.join(home, "restored", "data")
        await Fs.mkdir(Path.dirname(restoredDir), { recursive: true })
        await Fs.copyFile(keyFileOf(dataDir), keyFileOf(restoredDir))
        const intoFolder = await cli(["db", "restore", "--data", restoredDir, dump])
        expect(intoFolder.stderr).toContain(`as this restore had them (the key file ${keyFileOf(restoredDir)}`)
        expect(intoFolder.code).toBe(0)
        const reopened = await RealServer.start(settings, { data: restoredDir })
        try {
          expect((await Http.request(reopened.url, "POST", "/v1/auth/sign-in", { body: { email: org.owner.email, password: org.owner.password } })).status).toBe(200)
        } finally {
          await reopened.close()
        }
      })(),

      // Into Postgres with the embedded server's key, which the restore checks the dump's signature with.
      (async () => {
        const target = await Postgres.newDatabase("orgplane_move")
        const restored = await cli(["db", "restore", "--database-url", target, dump], { ORGPLANE_ENCRYPTION_KEYS: keys })
        expect(restored.stderr).toContain(`with the keys the dumped server used ("local")`)
        expect(restored.code).toBe(0)
        expect(restored.stdout).toContain(`Restored ${dump} (`)

        // Twice is refused: the target is no longer empty, and nothing was changed.
        const twice = await cli(["db", "restore", "--database-url", target, dump], { ORGPLANE_ENCRYPTION_KEYS: keys })
        expect(twice.code).not.toBe(0)
        expect(twice.stderr).toContain("already holds")

        const moved = await RealServer.start({ ...settings, DATABASE_URL: target, ORGPLANE_ENCRYPTION_KEYS: keys })
        try {
          const signedIn = await Http.request(moved.url, "POST", "/v1/auth/sign-in", { body: { email: org.owner.email, password: org.owner.password } })
          expect(signedIn.status).toBe(200)
          expect((await Http.request(moved.url, "GET", "/v1/me", { token: org.owner.token })).status).toBe(200)
          expect((await Http.request(moved.url, "GET", "/v1/members?limit=1", { apiKey })).status).toBe(200)

          // The connection's API key decrypts: the server lists its tools with it.
          const before = mcp.requests.length
          const tools = await Http.request(moved.url, "GET", `/v1/mcp-connections/${connectionId}/tools`, { token: org.owner.token })
          expect(tools.status).toBe(200)
          const sent = mcp.requests.slice(before)
          expect(sent.length).toBeGreaterThan(0)
          expect(sent.every((request) => JSON.stringify(request.headers).includes(API_KEY))).toBe(true)

          // A cursor handed out before the move pages on after it.
          const paged = Http.expectStatus<{ items: ReadonlyArray<{ id: string }> }>(
            "the rest of the members after the move",
            await Http.request(moved.url, "GET", `/v1/members?limit=10&cursor=${encodeURIComponent(firstPage.nextCursor ?? "")}`, { token: org.owner.token }),
            200
          )
          expect(paged.items.map((member) => member.id)).toEqual(rest.map((member) => member.id))

          // The connector syncs on from where it was: its token decrypts, and the plugin it made follows the repository.
          await repo!.commitFiles({ ".claude-plugin/plugin.json": JSON.stringify({ name: "deploy-kit", description: "Deploys things." }) }, "rename")
          const followed = await cli(["connectors", "sync", instanceId, "--wait"], { ORGPLANE_URL: moved.url, ORGPLANE_TOKEN: org.owner.token })
          expect(followed.code, followed.stderr).toBe(0)
          expect(followed.stdout).toContain(`plugin: deploy-tools renamed deploy-kit (${pluginId})`)
        } finally {
          await moved.close()
        }
      })()
    ])
    for (const outcome of settled) if (outcome.status === "rejected") throw outcome.reason
  })
})
