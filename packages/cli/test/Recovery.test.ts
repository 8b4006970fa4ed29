/**
 * Recovery through the CLI (issue 45 item 3), in-process (Harness.ts) against real servers: `members reset-password`,
 * `admin users reset-password`, `auth reset-password`, `auth forgot-password` and `auth verify-email` (mail to a real
 * SMTP server on loopback, testkit's FakeSmtp), and `admin reset-password <email>` run against the server's database
 * directly (the embedded data folder, or a fresh database on the Postgres at DATABASE_URL) with no server running.
 * The servers are RealServer.ts's, on the database the CLI opens, and the server's TestDatabase makes the fresh
 * Postgres database.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FakeSmtp from "../../../packages/testkit/src/FakeSmtp.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../../server/test/support/TestDatabase.js"
import { cleanup, fresh, json } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let smtp: FakeSmtp.FakeSmtp
let server: RealServer.RealServer
const scope = Effect.runSync(Scope.make())
beforeAll(async () => {
  smtp = await FakeSmtp.start()
  server = await RealServer.start({
    ORGPLANE_SETUP_TOKEN: Http.SETUP_TOKEN,
    ORGPLANE_SMTP_URL: smtp.url,
    ORGPLANE_MAIL_FROM: "no-reply@orgplane.example.com"
  })
})
afterAll(async () => {
  await server?.close()
  await smtp?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await cleanup()
})

const NEW_PASSWORD = "a passphrase chosen again"
const tokenIn = (text: string, prefix: "opr" | "opv") => new RegExp(`${prefix}_[A-Za-z0-9_-]{43}`).exec(text)?.[0] ?? ""
const signIn = (email: string, password: string) => Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email, password } })

describe("orgplane members reset-password, admin users reset-password and auth reset-password", { timeout: 120_000 }, () => {
  it("an owner has a member's link mailed to them; the member sets a new password with it, signed out everywhere", async () => {
    const org = await Http.staffed(server.url, "CLI Resets")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.owner.token }
    const issued = await cli(["members", "reset-password", org.member.membership.id], env)
    expect(issued.code, issued.stderr).toBe(0)
    expect(issued.stdout).toContain(`Password reset link for ${org.member.email} (${org.member.user.id}) mailed to that address`)
    // The owner never sees the token: the person's mailbox holds it.
    expect(tokenIn(issued.stdout, "opr")).toBe("")
    const token = tokenIn((await smtp.next(org.member.email)).text, "opr")

    const member = await fresh()
    const reset = await member.cli(["auth", "reset-password", token], { ORGPLANE_URL: server.url, ORGPLANE_NEW_PASSWORD: NEW_PASSWORD })
    expect(reset.code, reset.stderr).toBe(0)
    expect(reset.stdout).toContain(`Password set for ${org.member.email}; 1 session ended.`)
    expect(reset.stdout).toContain(`orgplane auth login --email ${org.member.email} --url ${server.url}`)
    expect((await signIn(org.member.email, NEW_PASSWORD)).status).toBe(200)

    const spent = await member.cli(["auth", "reset-password", token, "--json"], { ORGPLANE_URL: server.url, ORGPLANE_NEW_PASSWORD: "yet another passphrase" })
    expect(spent.code).not.toBe(0)
    expect(spent.stderr).toContain("is not a live password reset link")

    const refused = await cli(["members", "reset-password", org.owner.membership.id], env)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("reset_own_password")
  })

  it("the operator prints a link for any account, an owner of another organization included", async () => {
    const operator = await Http.operator(server.url)
    const customer = await Http.owner(server.url, "Customer")
    const { cli } = await fresh()
    const issued = await cli(["admin", "users", "reset-password", customer.user.id, "--json"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: operator.token })
    expect(issued.code, issued.stderr).toBe(0)
    const link = json(issued).passwordReset
    expect(link).toMatchObject({ userId: customer.user.id, email: customer.email, delivery: "mailed", token: null })
    const token = tokenIn((await smtp.next(customer.email)).text, "opr")
    const reset = await cli(["auth", "reset-password", token, "--revoke-api-keys"], { ORGPLANE_URL: server.url, ORGPLANE_NEW_PASSWORD: NEW_PASSWORD })
    expect(reset.code, reset.stderr).toBe(0)
    expect((await signIn(customer.email, NEW_PASSWORD)).status).toBe(200)
  })
})

describe("a link shown to an owner, on a server that sends no mail", { timeout: 120_000 }, () => {
  it("prints the token once and says the password is temporary; auth login then replaces it with the person's own", async () => {
    const quiet = await RealServer.start({})
    try {
      const org = await Http.staffed(quiet.url, "CLI Temporary")
      const { cli } = await fresh()
      const issued = await cli(["members", "reset-password", org.member.membership.id], { ORGPLANE_URL: quiet.url, ORGPLANE_TOKEN: org.owner.token })
      expect(issued.code, issued.stderr).toBe(0)
      expect(issued.stdout).toContain("The password it sets is temporary")
      const member = await fresh()
      const env = { ORGPLANE_URL: quiet.url }
      expect((await member.cli(["auth", "reset-password", tokenIn(issued.stdout, "opr")], { ...env, ORGPLANE_NEW_PASSWORD: NEW_PASSWORD })).code).toBe(0)
      // Without a terminal or a new password, the server's refusal says what to do.
      const refused = await member.cli(["auth", "login", "--email", org.member.email], { ...env, ORGPLANE_PASSWORD: NEW_PASSWORD })
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain("password_change_required")
      const login = await member.cli(["auth", "login", "--email", org.member.email], { ...env, ORGPLANE_PASSWORD: NEW_PASSWORD, ORGPLANE_NEW_PASSWORD: "the member's own choice" })
      expect(login.code, login.stderr).toBe(0)
      expect(Http.expectStatus("sign-in", await Http.request(quiet.url, "POST", "/v1/auth/sign-in", { body: { email: org.member.email, password: "the member's own choice" } }), 200)).toBeDefined()
    } finally {
      await quiet.close()
    }
  })
})

describe("orgplane auth forgot-password and verify-email", { timeout: 120_000 }, () => {
  it("mails a reset link the person then uses, which proves the address, and a verification link used signed in", async () => {
    const person = await Http.signUp(server.url, "CLI Forgetful")
    const { cli } = await fresh()
    const asked = await cli(["auth", "forgot-password", "--email", person.email], { ORGPLANE_URL: server.url })
    expect(asked.code, asked.stderr).toBe(0)
    expect(asked.stdout).toContain(`If an account has ${person.email}, a reset link is on its way`)
    const mail = await smtp.next(person.email)
    const reset = await cli(["auth", "reset-password", tokenIn(mail.text, "opr")], { ORGPLANE_URL: server.url, ORGPLANE_NEW_PASSWORD: NEW_PASSWORD })
    expect(reset.code, reset.stderr).toBe(0)

    // The link reached the address: using it proved the address too.
    const signedIn = Http.expectStatus<{ session: { token: string } }>("sign-in", await signIn(person.email, NEW_PASSWORD), 200).session.token
    const already = await cli(["auth", "verify-email"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: signedIn })
    expect(already.stderr).toContain("email_already_verified")

    const other = await Http.signUp(server.url, "CLI Verifying")
    const requested = await cli(["auth", "verify-email"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: other.token })
    expect(requested.code, requested.stderr).toBe(0)
    expect(requested.stdout).toContain("A verification link is on its way")
    const verification = await smtp.next(other.email)
    const proven = await cli(["auth", "verify-email", tokenIn(verification.text, "opv")], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: other.token })
    expect(proven.code, proven.stderr).toBe(0)
    expect(proven.stdout).toContain(`${other.email} is proven`)
  })
})

/**
 * Where the CLI and the servers find the database: a data folder, or a fresh Postgres database; `start` starts a
 * server on it.
 */
const newDatabase = async (home: string) => {
  const url = TestDatabase.postgresUrl
  if (url !== undefined) {
    const database = await Effect.runPromise(Scope.provide(TestDatabase.freshPostgres(url), scope))
    // A server on Postgres needs a key of its own, and a runner port of its own beside other files' servers.
    const environment = { DATABASE_URL: database, ORGPLANE_ENCRYPTION_KEYS: `a:${NodeCrypto.randomBytes(32).toString("base64")}`, ORGPLANE_CLUSTER_PORT: "0" }
    return { embedded: false, flags: ["--database-url", database], start: () => RealServer.start(environment) }
  }
  const dataDir = Path.join(home, "data")
  await Fs.mkdir(dataDir, { recursive: true })
  return { embedded: true, flags: ["--data", dataDir], start: () => RealServer.start({}, { data: dataDir }) }
}

describe("orgplane admin reset-password <email>, on the server's machine", { timeout: 180_000 }, () => {
  it("prints a link from the database itself, with no server and no sign-in; refuses a data folder a server holds, and an unknown email", async () => {
    const { cli, home } = await fresh()
    const database = await newDatabase(home)
    let running = await database.start()
    const operator = await Http.owner(running.url, "Locked Out")
    if (database.embedded) {
      const held = await cli(["admin", "reset-password", operator.email, ...database.flags], {})
      expect(held.code).not.toBe(0)
      expect(held.stderr).toContain(`The data folder ${database.flags[1]}`)
      expect(held.stderr).toContain("Stop the server, run this command again")
    }
    await running.close()

    const unknown = await cli(["admin", "reset-password", "nobody@example.com", ...database.flags], {})
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain("No account has the email nobody@example.com")

    const printed = await cli(["admin", "reset-password", operator.email, ...database.flags], { ORGPLANE_PUBLIC_URL: "https://orgplane.example.com" })
    expect(printed.code, printed.stderr).toBe(0)
    expect(printed.stdout).toContain(`Password reset link for ${operator.email}`)
    expect(printed.stdout).toContain("--url https://orgplane.example.com")
    const token = tokenIn(printed.stdout, "opr")

    running = await database.start()
    try {
      const reset = await cli(["auth", "reset-password", token], { ORGPLANE_URL: running.url, ORGPLANE_NEW_PASSWORD: NEW_PASSWORD })
      expect(reset.code, reset.stderr).toBe(0)
      const session = Http.expectStatus<{ session: { token: string } }>(
        "sign-in",
        await Http.request(running.url, "POST", "/v1/auth/sign-in", { body: { email: operator.email, password: NEW_PASSWORD } }),
        200
      ).session.token
      const events = Http.expectStatus<{ items: Array<{ action: string; actor: { id: string } }> }>("log", await Http.request(running.url, "GET", "/v1/audit/events?action=user.password.*", { token: session }), 200).items
      expect(events.map((event) => [event.action, event.actor.id])).toEqual(expect.arrayContaining([
        ["user.password.reset_link.create", "system:admin-reset-password"],
        ["user.password.reset", operator.user.id]
      ]))
    } finally {
      await running.close()
    }
  })
})
