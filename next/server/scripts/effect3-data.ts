/**
 * Writes `test/fixtures/data-0.1.0/`: an instance's data as the 0.1.0 packages (the Effect 3 tree, `orgplane serve`
 * from packages/cli's sources) leave it, for `test/http/Data010.test.ts`, which opens it with this server (issue 46:
 * "data written by 0.1.0 stays readable"). Run once, from the repository root, while the Effect 3 tree exists:
 *
 *   node --conditions=@orgplane/source --import tsx next/server/scripts/effect3-data.ts
 *
 * It starts the 0.1.0 server twice, on an embedded data folder and on a new database of the Postgres at
 * 127.0.0.1:5432, writes the same kinds of data through its HTTP API on each (accounts with passwords, sessions, an
 * API key, members and teams, the catalog with versions, an LLM provider's encrypted key, an audit stream whose
 * signing secret is encrypted at rest, and the audit events of all of it), lets the stream deliver, stops the server,
 * and keeps: `embedded.tar.xz` (the data folder and the key file the server generated beside it), `postgres.sql` (`pg_dump --inserts`, read back
 * statement by statement) with `postgres-keys.txt` (the encryption keys that server had), and `manifest.json` (what
 * was written and the credentials to read it with, per instance). The fixture's credentials are test-only.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import { createServer } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as FakeAuditReceiver from "../../../packages/testkit/src/FakeAuditReceiver.js"
import * as Http from "../../../packages/testkit/src/Http.js"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const out = fileURLToPath(new URL("../test/fixtures/data-0.1.0/", import.meta.url))
const postgres = "postgres://root@127.0.0.1:5432"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })

const serve = async (args: ReadonlyArray<string>, environment: Record<string, string>) => {
  const port = await freePort()
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("ORGPLANE_") && name !== "DATABASE_URL" && name !== "NODE_OPTIONS")
  )
  const child = spawn(
    process.execPath,
    ["--conditions=@orgplane/source", "--import", "tsx", "packages/cli/src/bin.ts", "serve", "--port", String(port), ...args],
    {
      cwd: root,
      env: {
        ...inherited,
        ORGPLANE_SIGN_UPS_PER_HOUR: "100000",
        ORGPLANE_SETUP_TOKEN: Http.SETUP_TOKEN,
        ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true",
        ...environment
      },
      stdio: ["ignore", "inherit", "inherit"]
    }
  )
  const url = `http://127.0.0.1:${port}`
  for (let tries = 0; tries < 240; tries++) {
    if (child.exitCode !== null) throw new Error(`the 0.1.0 server exited (${child.exitCode})`)
    if (await fetch(`${url}/ready`).then((response) => response.ok, () => false)) return { url, child }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error("the 0.1.0 server did not get ready in 2 minutes")
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const SKILL = "---\nname: deploy-to-staging\ndescription: Deploys the app to staging.\n---\n# Deploy\n\nRun `make deploy`.\n"

/** Writes the data through the API and answers what a reader checks afterwards. */
const populate = async (url: string, receiver: FakeAuditReceiver.FakeAuditReceiver) => {
  const { get, patch, post } = Http.verbs(() => url)
  const org = await Http.staffed(url, "Before the move")
  const owner = org.owner
  const key = Http.expectStatus<any>("API key", await post("/v1/api-keys", { token: owner.token, body: { name: "automation" } }), 201)
  const team = Http.expectStatus<any>("team", await post("/v1/teams", { token: owner.token, body: { name: "Platform" } }), 201).team
  Http.expectStatus("team member", await post(`/v1/teams/${team.id}/members`, { token: owner.token, body: { memberIds: [org.member.membership.id] } }), 200)
  const plugin = Http.expectStatus<any>("plugin", await post("/v1/plugins", { token: owner.token, body: { name: "Review kit", description: "Code review helpers" } }), 201).item
  const marketplace = Http.expectStatus<any>("marketplace", await post("/v1/marketplaces", { token: owner.token, body: { name: "Internal" } }), 201).item
  const skill = Http.expectStatus<any>("config object", await post("/v1/config-objects", {
    token: owner.token,
    body: { input: { objectType: "skill", rawSourceText: SKILL }, pluginIds: [plugin.id] }
  }), 201).item
  const context = Http.expectStatus<any>("config object", await post("/v1/config-objects", {
    token: owner.token,
    body: { input: { objectType: "context", rawSourceText: "# First\nabout one" } }
  }), 201).item
  Http.expectStatus("version", await post(`/v1/config-objects/${context.id}/versions`, {
    token: owner.token,
    body: { input: { rawSourceText: "# Second\nabout two", metadata: { note: 1 } }, reason: "rewrote it" }
  }), 201)
  const llm = { apiKey: `sk-fixture-${randomBytes(12).toString("hex")}`, header: `org-${randomBytes(6).toString("hex")}` }
  const provider = Http.expectStatus<any>("LLM provider", await post("/v1/llm-providers", {
    token: owner.token,
    body: {
      name: "OpenAI",
      catalogProviderId: "openai",
      headers: { "OpenAI-Organization": llm.header },
      models: [{ id: "gpt-4o" }, { id: "gpt-4o-mini", name: "Mini", contextWindow: 64000 }],
      apiKey: llm.apiKey
    }
  }), 201).item
  const stream = Http.expectStatus<any>("audit stream", await post("/v1/audit/streams", {
    token: owner.token,
    body: { url: `${receiver.url}/ingest`, description: "SIEM" }
  }), 201)
  receiver.setSecrets(stream.secret)
  Http.expectStatus("team", await post("/v1/teams", { token: owner.token, body: { name: "Streamed" } }), 201)
  Http.expectStatus("stream", await patch(`/v1/audit/streams/${stream.stream.id}`, { token: owner.token, body: { description: "SIEM (main)" } }), 200)
  // Delivered at least once before the server stops: the stream's position is part of the data.
  for (let tries = 0; receiver.deliveries.filter((delivery) => delivery.status === 200).length === 0; tries++) {
    if (tries > 120) throw new Error("the audit stream delivered nothing in a minute")
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  const events = Http.expectStatus<any>("audit events", await get("/v1/audit/events?limit=100", { token: owner.token }), 200).items
  const read = async (path: string) => Http.expectStatus<any>(path, await get(path, { token: owner.token }), 200)
  return {
    organizationId: org.organizationId,
    people: [owner, org.admin, org.member].map((person) => ({ email: person.email, password: person.password, token: person.token, userId: person.user.id })),
    apiKey: { id: key.apiKey.id, secret: key.key },
    teams: (await read("/v1/teams")).items.map((item: any) => item.id),
    members: (await read("/v1/members")).items.map((item: any) => item.id),
    plugin: plugin.id,
    marketplace: marketplace.id,
    configObjects: { skill: skill.id, context: context.id },
    llmProvider: { id: provider.id, ...llm },
    auditStream: { id: stream.stream.id, secret: stream.secret },
    auditEvents: events.map((event: any) => event.id)
  }
}

const embedded = async () => {
  const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-0.1.0-"))
  const data = Path.join(folder, "data")
  const receiver = await FakeAuditReceiver.start()
  const { child, url } = await serve(["--data", data], {})
  try {
    return await populate(url, receiver)
  } finally {
    await stop(child)
    await receiver.close()
    execFileSync("tar", ["cJf", Path.join(out, "embedded.tar.xz"), "-C", folder, "data", "encryption.key"])
    Fs.rmSync(folder, { recursive: true, force: true })
  }
}

const onPostgres = async () => {
  const database = `orgplane_fixture_010_${randomBytes(4).toString("hex")}`
  execFileSync("psql", [`${postgres}/postgres`, "-qc", `CREATE DATABASE ${database}`])
  const keys = `fixture:${randomBytes(32).toString("base64")}`
  const receiver = await FakeAuditReceiver.start()
  const { child, url } = await serve(["--data", "memory"], { DATABASE_URL: `${postgres}/${database}`, ORGPLANE_ENCRYPTION_KEYS: keys })
  try {
    return await populate(url, receiver)
  } finally {
    await stop(child)
    await receiver.close()
    const dump = execFileSync("pg_dump", ["--no-owner", "--no-privileges", "--inserts", `${postgres}/${database}`], { maxBuffer: 1 << 30 })
    Fs.writeFileSync(Path.join(out, "postgres.sql"), dump)
    Fs.writeFileSync(Path.join(out, "postgres-keys.txt"), `${keys}\n`)
    execFileSync("psql", [`${postgres}/postgres`, "-qc", `DROP DATABASE ${database} WITH (FORCE)`])
  }
}

Fs.mkdirSync(out, { recursive: true })
const written = { embedded: await embedded(), postgres: await onPostgres() }
// When the last of it was written: the test's clock starts here (the sessions as fresh as they were then).
const manifest = { writtenBy: "@orgplane/server 0.1.0 (Effect 3)", writtenAt: new Date().toISOString(), ...written }
Fs.writeFileSync(Path.join(out, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`)
console.log(`wrote ${out}`)
