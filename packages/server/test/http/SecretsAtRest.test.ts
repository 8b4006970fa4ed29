/**
 * What a copy of the database gives away: nothing secret. One server is given one secret of every kind through the
 * public HTTP API (passwords, sessions, an API key, kept idempotent answers holding it, an invitation, bootstrap claim
 * links, a SCIM token, a worker token and its runtime's credential, MCP API keys, OAuth client secrets and the
 * tokens an OAuth flow stored, an LLM provider's key and headers, an audit stream's signing secret, an SSO client
 * secret, a suite client secret, a GitHub token); then every row of every table of every schema is read as text
 * (and, on Postgres, `pg_dump` is run too), and searched for each secret the test was shown or gave, and for the
 * plaintext of every stored ciphertext (decrypted here with the key the test configured), in clear, base64,
 * base64url (at every byte alignment) and hex. Neither the encryption key nor the instance's cursor key may be
 * there either: the cursor key is found, if it is there, as a 32-byte value (in any of those encodings) that signs
 * the OAuth state the server handed out, as an attacker with the dump would find it to forge cursors and states.
 */
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { execFile } from "node:child_process"
import * as NodeCrypto from "node:crypto"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Crypto from "../../src/platform/Crypto.js"
import { stateKeyOf, verifyState } from "../../src/platform/OAuthState.js"
import { allSecretColumns, bind } from "../../src/platform/SecretColumns.js"

const KEY = NodeCrypto.randomBytes(32)
const KEYS = `dump:${KEY.toString("base64")}`
const keyring = Crypto.makeKeyring(Crypto.parseKeys(KEYS))

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
const fakes: Array<{ close: () => Promise<void> }> = []
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ encryptionKeys: KEYS, outboundAllowPrivate: true, defaultPlan: "enterprise" })
}, 120_000)
afterAll(async () => {
  for (const fake of fakes) await fake.close()
  await server?.close()
})

const { get } = Http.verbs(() => server.url)
const api = calls(() => server.url)

/** `n` random bytes as text, for a secret the test makes up. */
const random = (prefix: string) => `${prefix}${NodeCrypto.randomBytes(18).toString("base64url")}`

/** Where `secret` could be hiding, as text: the chunks of its encodings that do not depend on what surrounds it. */
const encodings = (secret: string): ReadonlyArray<string> => {
  const bytes = Buffer.from(secret, "utf8")
  const found = new Set([secret, bytes.toString("hex"), bytes.toString("hex").toUpperCase()])
  for (const offset of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes])
    // The characters that only this secret's bits make up, at this alignment inside a longer base64 text.
    const from = Math.ceil((offset * 8) / 6)
    const to = Math.floor((padded.length * 8) / 6)
    const chunk = padded.toString("base64").slice(from, to)
    found.add(chunk)
    found.add(chunk.replaceAll("+", "-").replaceAll("/", "_"))
  }
  return [...found].filter((text) => text.length >= 8)
}

/** Every run of base64, base64url or hex characters in `dump`, decoded at each alignment: the byte strings it may hold. */
const decodedRuns = function*(dump: string): Generator<Buffer> {
  for (const [run] of dump.matchAll(/[A-Za-z0-9+/_-]{43,}/g)) {
    for (const offset of [0, 1, 2, 3]) yield Buffer.from(run.slice(offset).replaceAll("-", "+").replaceAll("_", "/"), "base64")
  }
  for (const [run] of dump.matchAll(/[0-9a-fA-F]{64,}/g)) {
    for (const offset of [0, 1]) yield Buffer.from(run.slice(offset, offset + Math.floor((run.length - offset) / 2) * 2), "hex")
  }
}

/** What in `dump` is a key: the encryption key, or a 32-byte value signing `state` as the cursor key does. */
const keysIn = (dump: string, state: string) => {
  const found = new Set<string>()
  for (const bytes of decodedRuns(dump)) {
    for (let at = 0; at + 32 <= bytes.length; at++) {
      const candidate = bytes.subarray(at, at + 32)
      if (candidate.equals(KEY)) found.add("the encryption key")
      else if (verifyState(stateKeyOf(candidate), state) !== undefined) found.add("the cursor key")
    }
  }
  return [...found]
}

/** Every row of every table of every schema, as text: what a copy of the database holds. */
const rowsAsText = () =>
  server.sql((sql) =>
    Effect.gen(function*() {
      const tables = yield* sql<{ readonly schema: string; readonly name: string }>`
        /* instance-wide: every table, for the secrets-at-rest test */
        SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`
      const lines: Array<string> = []
      for (const { name, schema } of tables) {
        const rows = yield* sql.unsafe<{ readonly line: string }>(
          `/* instance-wide: every row, for the secrets-at-rest test */ SELECT t::text AS line FROM "${schema}"."${name}" t`
        )
        lines.push(`-- ${schema}.${name}`, ...rows.map((row) => row.line))
      }
      return { tables: tables.map(({ name, schema }) => `${schema}.${name}`), text: lines.join("\n") }
    })
  )

/** The plaintext of every ciphertext of every registered encrypted column, decrypted with the test's key. */
const storedPlaintexts = () =>
  server.sql((sql) =>
    Effect.gen(function*() {
      const plaintexts: Array<{ readonly where: string; readonly value: string }> = []
      for (const column of allSecretColumns) {
        const instance = (column as { readonly scope?: string }).scope === "instance"
        const keys = instance ? column.row : ["organization_id", ...column.row]
        const rows = yield* sql.unsafe<Record<string, string>>(
          `/* instance-wide: every stored secret, for the secrets-at-rest test */ SELECT ${keys.map((key, i) => `${key} AS k${i}`).join(", ")}, ${column.column} AS secret FROM ${column.table} WHERE ${column.column} IS NOT NULL`
        )
        for (const row of rows) {
          const place = keys.map((_, i) => row[`k${i}`]!)
          const binding = instance ? bind(column, "", ...place) : bind(column, place[0]!, ...place.slice(1))
          const opened = keyring.open(row.secret!, binding)
          if (Result.isFailure(opened)) throw new Error(`${column.table}.${column.column} does not decrypt: ${opened.failure._tag}`)
          plaintexts.push({ where: `${column.table}.${column.column}`, value: opened.success })
        }
      }
      return plaintexts
    })
  )

/** `pg_dump` of the server's database, when it is on Postgres. */
const pgDump = async (): Promise<string | undefined> => {
  const url = TestDatabase.postgresUrl
  if (url === undefined) return undefined
  const [{ name }] = await server.sql((sql) => sql<{ readonly name: string }>`SELECT current_database() AS name`)
  const target = new URL(url)
  target.pathname = `/${name}`
  const { stdout } = await promisify(execFile)("pg_dump", ["--data-only", "--no-owner", target.toString()], { maxBuffer: 256 * 1024 * 1024 })
  return stdout
}

describe("a copy of the database", { timeout: 300_000 }, () => {
  it("holds none of the secrets the server was given or gave out, no encryption key and no cursor key, in any encoding", async () => {
    const secrets: Array<{ readonly what: string; readonly value: string }> = []
    const keep = (what: string, value: string | null) => {
      expect(typeof value, what).toBe("string")
      if (value === null) throw new Error(`${what}: none was given`)
      secrets.push({ what, value })
      return value
    }

    // People: passwords and sessions; an API key, created with an Idempotency-Key so that its answer is kept.
    const org = await Http.staffed(server.url)
    keep("a password", org.owner.password)
    for (const [who, person] of Object.entries({ owner: org.owner, admin: org.admin, member: org.member })) keep(`the ${who}'s session`, person.token)
    const signIn = ok(await api.users.signIn({ payload: { email: org.owner.email, password: org.owner.password } }), 200)
    const token = keep("a signed-in session", signIn.session.token)
    const apiKey = ok(await api.apiKeys.create({ token, payload: { name: "CI" }, headers: { "idempotency-key": "key-1" } }), 201)
    keep("an API key", apiKey.key)
    const replayed = await api.apiKeys.create({ token, payload: { name: "CI" }, headers: { "idempotency-key": "key-1" } })
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    keep("an invitation token", ok(await api.invitations.create({ token, payload: { email: "grace@acme.example", role: "member" } }), 201).inviteToken)
    const bootstrap = ok(await api.bootstrap.workspace({ payload: { workspaceName: "Provisional", claimRoles: ["owner", "admin"] } }), 201)
    for (const link of bootstrap.claimLinks) keep(`a ${link.role} claim token`, link.token)

    // Directories and workers.
    keep("a SCIM token", (await Http.scimDirectory(server.url, token)).token)
    const worker = ok(await api.workers.register({ token, payload: { name: "Laptop", destination: "local" } }), 201)
    keep("a worker token", worker.token)
    const runtimeCredential = keep("a worker runtime's credential", random("rt_"))
    ok(await api.workerRuntime.registerInstance({
      token: worker.token,
      payload: { provider: "static", status: "running", url: "http://127.0.0.1:9/runtime", credential: runtimeCredential }
    }), 201)

    // Third parties: MCP (an API key; an OAuth client secret; an OAuth flow's tokens), an LLM provider, an audit
    // stream, SSO, a suite, GitHub.
    const mcpKey = random("sk-mcp-")
    const keyed = await FakeMcp.start({ auth: { apiKey: mcpKey } })
    fakes.push(keyed)
    ok(await api.mcpConnections.create({ token, payload: { name: "Keyed", url: keyed.url, authType: "apikey", apiKey: keep("an MCP API key", mcpKey) } }), 201)
    const oauthMcp = await FakeMcp.start({ auth: "oauth" })
    fakes.push(oauthMcp)
    ok(await api.mcpConnections.create({
      token,
      payload: { name: "Registered", url: oauthMcp.url, authType: "oauth", oauth: { clientId: "orgplane", clientSecret: keep("an MCP OAuth client secret", random("cs_")) } }
    }), 201)
    const flowed = ok(await api.mcpConnections.create({ token, payload: { name: "Flowed", url: oauthMcp.url, authType: "oauth" } }), 201).item
    const started = ok(await api.mcpAuthorization.connect({ token, path: { connectionId: flowed.id } }), 200)
    expect(started.status).toBe("needs_auth")
    const authorizeUrl = started.authorizeUrl
    if (authorizeUrl === null) throw new Error("needs_auth without an authorizeUrl")
    const state = new URL(authorizeUrl).searchParams.get("state")!
    const approved = await fetch(authorizeUrl, { redirect: "manual" })
    const callback = new URL(approved.headers.get("location")!)
    expect(Http.expectStatus("the callback", await get(`${callback.pathname}${callback.search}`), 200)).toMatchObject({ status: "connected" })

    ok(await api.llmProviders.create({
      token,
      payload: {
        name: "Custom",
        apiStyle: "openai-compatible",
        baseUrl: "http://127.0.0.1:9/v1",
        headers: { "X-Tenant-Secret": keep("an LLM provider's header", random("hdr-")) },
        models: [{ id: "model-1" }],
        apiKey: keep("an LLM provider's API key", random("sk-llm-"))
      }
    }), 201)
    keep("an audit stream's signing secret", ok(await api.auditStreams.create({ token, payload: { url: "http://127.0.0.1:9/audit", status: "paused" } }), 201).secret)
    ok(await api.sso.createConnection({
      token,
      payload: { kind: "oidc", name: "Okta", domains: ["acme-dump.example"], oidc: { issuer: "https://login.acme-dump.example", clientId: "orgplane", clientSecret: keep("an SSO client secret", random("sso-")) } }
    }), 201)
    ok(await api.suiteClients.put({
      token,
      path: { suite: "suite-a" },
      payload: { clientId: "suite-client", clientSecret: keep("a suite client secret", random("suite-")), features: ["mailDraft"] }
    }), 200)
    ok(await api.connectorAccounts.create({ token, payload: { kind: "token", token: keep("a GitHub token", random("ghp_")) } }), 201)

    // What the database holds, and what its encrypted columns decrypt to.
    const { tables, text: rows } = await rowsAsText()
    expect(tables).toEqual(expect.arrayContaining(["public.users", "public.mcp_connections", "public.idempotency_keys"]))
    for (const { value, where } of await storedPlaintexts()) secrets.push({ what: `the plaintext of ${where}`, value })
    const dumps = [{ name: "every row", text: rows }]
    const dumped = await pgDump()
    if (dumped !== undefined) dumps.push({ name: "pg_dump", text: dumped })
    expect(dumps.length).toBe(TestDatabase.onPostgres ? 2 : 1)

    for (const dump of dumps) {
      // It is the whole database: what is stored in place of the secrets is there.
      expect(dump.text, dump.name).toContain(NodeCrypto.createHash("sha256").update(apiKey.key).digest("hex"))
      expect(dump.text, dump.name).toContain("v2:dump:")
      expect(dump.text, dump.name).toContain("Provisional")

      const shown = secrets.flatMap(({ value, what }) => encodings(value).filter((encoded) => dump.text.includes(encoded)).map(() => what))
      expect([dump.name, [...new Set(shown)]]).toEqual([dump.name, []])
      expect([dump.name, keysIn(dump.text, state)]).toEqual([dump.name, []])
    }
    // The searches find what they look for.
    expect(encodings(apiKey.key).some((encoded) => `x${Buffer.from(`{"key":"${apiKey.key}"}`).toString("base64")}x`.includes(encoded))).toBe(true)
    expect(keysIn(`k:${KEY.toString("base64url")}`, state)).toEqual(["the encryption key"])
    expect(secrets.length).toBeGreaterThanOrEqual(25)
  })
})
