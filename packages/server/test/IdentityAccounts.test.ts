/**
 * The account side of the identity area on a fresh migrated database (the embedded one, or Postgres with
 * DATABASE_URL), service by service, as http/SignInThrottle.test.ts and RecoveryMail.test.ts have it
 * through HTTP: the sign-in throttle's three limits, refusals counting nothing, the addresses an account signed in
 * from spared, a success clearing the email's counts, windows ending, an email's change and deletion; the recovery
 * mails word for word, and their leaving off the caller's fiber, a refusal logged without
 * the mail server's password; sign-up, sign-in, password and email changes (Accounts), an account's removal
 * (AccountRemoval) and its records (AccountRecords); password reset links mailed, issued on the machine and used
 * once (PasswordResets, MachineRecovery), email verification (EmailVerification), an organization's deletion, restoration and purge
 * (OrganizationDeletion, OrganizationPurge), accounts disabled and enabled by the operator (OperatorUsers); their errors word for word.
 */
import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import * as FakeSmtp from "../../../packages/testkit/src/FakeSmtp.js"
import { type Actor, type MemberContext, MembershipId, type OrganizationId } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { AccountRecords } from "../src/identity/AccountRecords.js"
import { AccountRemoval } from "../src/identity/AccountRemoval.js"
import { Accounts } from "../src/identity/Accounts.js"
import { UsersRepository } from "../src/identity/UsersRepository.js"
import { ApiKeysRepository } from "../src/identity/ApiKeysRepository.js"
import { EmailVerification } from "../src/identity/EmailVerification.js"
import * as MachineRecovery from "../src/identity/MachineRecovery.js"
import { MembershipsRepository, toMembership } from "../src/identity/MembershipsRepository.js"
import { Operator } from "../src/identity/Operator.js"
import { OperatorRepository } from "../src/identity/OperatorRepository.js"
import * as OrganizationDeletion_ from "../src/identity/OrganizationDeletion.js"
import { OrganizationDeletion } from "../src/identity/OrganizationDeletion.js"
import * as OrganizationPurge from "../src/identity/OrganizationPurge.js"
import { OrganizationsRepository, toOrganization } from "../src/identity/OrganizationsRepository.js"
import { OperatorUsers } from "../src/identity/OperatorUsers.js"
import { PasswordResets } from "../src/identity/PasswordResets.js"
import { PurgeRepository } from "../src/identity/PurgeRepository.js"
import { SessionsRepository } from "../src/identity/SessionsRepository.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import * as MonthlyPartitions from "../src/platform/MonthlyPartitions.js"
import * as Principal from "../src/platform/Principal.js"
import { RateLimiter } from "../src/platform/RateLimiter.js"
import { transaction } from "../src/platform/Sql.js"
import { Mailer } from "../src/integrations/mail/Mailer.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Db from "./support/IdentityDatabase.js"
import { emailVerificationMail, passwordResetMail } from "../src/identity/RecoveryMail.js"
import { sendLater } from "../src/integrations/mail/LinkMail.js"
import { KNOWN_ADDRESS_FOR, SignInThrottle } from "../src/identity/SignInThrottle.js"
import { migrations } from "../src/migrations/index.js"
import * as Config from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import { migrate } from "../src/platform/Migrator.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { clockAt } from "./support/Clocks.js"

let time = Date.parse("2030-01-01T00:00:00Z")
const advance = (duration: Duration.Input) => (time += Duration.toMillis(duration))
const atTestTime = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, clockAt(() => time))

/** ServerConfig from an empty environment with these options on top, as the server reads it. */
const settings = (options: Config.Options) =>
  Config.layer({ dataDir: "memory", ...options }).pipe(
    Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
  )

const database = Layer.unwrap(TestDatabase.layer({ migrated: true })).pipe((db) => Layer.provideMerge(Layer.effectDiscard(migrate(migrations)), db))

/** Small limits, to reach each without hundreds of attempts: 3 per email and address, 6 per email, 5 per address. */
const throttle = SignInThrottle.layer.pipe(
  Layer.provideMerge(Crypto.layer),
  Layer.provideMerge(settings({ signInFailuresPerAccountAndAddress: 3, signInFailuresPerAccount: 6, signInFailuresPerAddress: 5 })),
  Layer.provideMerge(database)
)

let counter = 0
const newAddress = () => `203.0.113.${++counter}`
const newEmail = (name: string) => `${name}.${++counter}@example.com`

/** Each attempt's outcome: `null` when counted (its password may be checked), else the refusal. */
const attempts = (count: number, email: () => string, address: () => string) =>
  Effect.gen(function*() {
    const throttle = yield* SignInThrottle
    const seen: Array<{ readonly retryAfterSeconds: number; readonly first: boolean } | null> = []
    for (let i = 0; i < count; i++) seen.push(Option.getOrNull(yield* throttle.attempt(email(), address())))
    return seen
  })

const accountKey = (email: string) => NodeCrypto.createHash("sha256").update(email.toLowerCase()).digest("hex")

layer(throttle, { timeout: 120_000, excludeTestServices: true })(`SignInThrottle on ${TestDatabase.kind}`, (it) => {
  it.effect("counts an email's attempts from one address up to its limit, then refuses until the window ends; only the first refusal is first", () =>
    Effect.gen(function*() {
      const email = newEmail("guessed")
      const address = newAddress()
      const seen = yield* attempts(5, () => email, () => address)
      expect(seen.slice(0, 3)).toEqual([null, null, null])
      expect(seen[3]).toEqual({ retryAfterSeconds: 15 * 60, first: true })
      expect(seen[4]).toEqual({ retryAfterSeconds: 15 * 60, first: false })
      // A refusal counts nothing: the email from another address is counted as before.
      expect(yield* attempts(1, () => email.toUpperCase(), newAddress)).toEqual([null])
      advance("10 minutes")
      expect((yield* attempts(1, () => email, () => address))[0]).toEqual({ retryAfterSeconds: 5 * 60, first: false })
      advance("5 minutes")
      expect(yield* attempts(1, () => email, () => address)).toEqual([null])
    }).pipe(atTestTime))

  it.effect("counts an address's attempts whatever the emails (credential stuffing): the sixth email from it is refused", () =>
    Effect.gen(function*() {
      const address = newAddress()
      const seen = yield* attempts(7, () => newEmail("stuffed"), () => address)
      expect(seen).toEqual([null, null, null, null, null, { retryAfterSeconds: 15 * 60, first: true }, { retryAfterSeconds: 15 * 60, first: true }])
      advance("15 minutes")
    }).pipe(atTestTime))

  it.effect("counts an email's attempts from anywhere; the address its owner signed in from stays spared, a stranger's does not", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const email = newEmail("owner")
      const home = newAddress()
      expect(yield* attempts(1, () => email, () => home)).toEqual([null])
      yield* throttle.succeeded(email, home)
      // Strangers spend the email's count of 6, one address each.
      expect(yield* attempts(6, () => email, newAddress)).toEqual([null, null, null, null, null, null])
      expect((yield* attempts(1, () => email, newAddress))[0]).toEqual({ retryAfterSeconds: 15 * 60, first: true })
      // Its owner, at home, is not shut out.
      expect(yield* attempts(1, () => email, () => home)).toEqual([null])
      // An address it signed in from longer ago than KNOWN_ADDRESS_FOR is a stranger's again.
      advance(KNOWN_ADDRESS_FOR)
      const old = newEmail("returning")
      const away = newAddress()
      yield* throttle.succeeded(old, away)
      advance(KNOWN_ADDRESS_FOR)
      advance("1 second")
      expect(yield* attempts(6, () => old, newAddress)).toEqual([null, null, null, null, null, null])
      expect((yield* attempts(1, () => old, () => away))[0]).toMatchObject({ first: true })
      advance("15 minutes")
    }).pipe(atTestTime))

  it.effect("a success clears the email's counts (here and from anywhere) and takes the attempt back from the address's", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const sql = yield* SqlClient.SqlClient
      const email = newEmail("remembered")
      const address = newAddress()
      expect(yield* attempts(3, () => email, () => address)).toEqual([null, null, null])
      expect(yield* attempts(1, () => email, newAddress)).toEqual([null])
      yield* throttle.succeeded(email, address)
      const counts = yield* sql<{ key: string; count: number }>`SELECT key, count FROM rate_limits WHERE key LIKE ${`%${accountKey(email)}%`} OR key = ${`sign-in:address:${address}`} ORDER BY key`
      expect(counts).toEqual([{ key: `sign-in:address:${address}`, count: 2 }, { key: expect.stringMatching(/^sign-in:pair:/), count: 1 }])
      const remembered = yield* sql<{ address: string }>`SELECT address FROM sign_in_addresses WHERE account_key = ${accountKey(email)}`
      expect(remembered).toEqual([{ address }])
      expect(yield* attempts(3, () => email, () => address)).toEqual([null, null, null])
      advance("15 minutes")
    }).pipe(atTestTime))

  it.effect("an email's change takes the addresses it signed in from along; its deletion forgets what is kept under its hash, not the addresses' counts", () =>
    Effect.gen(function*() {
      const throttle = yield* SignInThrottle
      const sql = yield* SqlClient.SqlClient
      const [from, to] = [newEmail("before"), newEmail("after")]
      const home = newAddress()
      yield* throttle.succeeded(from, home)
      yield* throttle.follow(from, to)
      const moved = yield* sql<{ accountKey: string }>`SELECT account_key FROM sign_in_addresses WHERE address = ${home}`
      expect(moved).toEqual([{ accountKey: accountKey(to) }])
      // A change of case only is the same email: nothing moves.
      yield* throttle.follow(to, to.toUpperCase())
      expect(yield* sql`SELECT 1 FROM sign_in_addresses WHERE account_key = ${accountKey(to)}`).toHaveLength(1)
      // The new email's owner is spared at home.
      expect(yield* attempts(6, () => to, newAddress)).toEqual([null, null, null, null, null, null])
      expect(yield* attempts(1, () => to, () => home)).toEqual([null])
      const guesser = newAddress()
      expect(yield* attempts(4, () => to, () => guesser)).toMatchObject([{ first: true }, { first: false }, { first: false }, { first: false }])

      yield* throttle.forget(to.toUpperCase())
      const kept = yield* sql<{ key: string }>`SELECT key FROM rate_limits WHERE key LIKE ${`%${accountKey(to)}%`}`
      expect(kept).toEqual([])
      expect(yield* sql`SELECT 1 FROM sign_in_addresses WHERE account_key = ${accountKey(to)}`).toEqual([])
      const addressCounts = yield* sql<{ count: number }>`SELECT count FROM rate_limits WHERE key = ${`sign-in:address:${home}`}`
      expect(addressCounts).toEqual([{ count: 1 }])
      advance("15 minutes")
    }).pipe(atTestTime))

  it.effect("refuses a window longer than the rate limiter keeps, naming the setting", () =>
    Effect.gen(function*() {
      const built = yield* Effect.exit(Layer.build(Layer.fresh(SignInThrottle.layer).pipe(
        Layer.provide(Crypto.layer),
        Layer.provideMerge(settings({ signInWindow: "2 days" }))
      )))
      expect(Exit.isFailure(built) && Cause.pretty(built.cause)).toContain("ORGPLANE_SIGN_IN_WINDOW is at most 1d (2d given)")
    }).pipe(Effect.scoped))
})

const SMTP_PASSWORD = "smtp-secret-p@ss:word"
const PUBLIC_URL = "https://orgplane.example.com"
let smtp: FakeSmtp.FakeSmtp
beforeAll(async () => {
  smtp = await FakeSmtp.start({ user: "orgplane", password: SMTP_PASSWORD })
})
afterAll(async () => {
  await smtp?.close()
})

describe("RecoveryMail", () => {
  const link = { to: "person@example.com", baseUrl: PUBLIC_URL, token: `opr_${"a".repeat(43)}`, expiresAt: new Date("2030-01-01T01:00:00Z") }

  it("writes the reset and verification mails word for word: how to use the token, until when, what using it ends, and for whom", () => {
    const verification = `opv_${"b".repeat(43)}`
    expect(emailVerificationMail({ ...link, token: verification })).toEqual({
      to: "person@example.com",
      subject: "Verify your email address for orgplane",
      text: [
        `Someone signed in to the orgplane account person@example.com at ${PUBLIC_URL} asked to verify this address.`,
        "",
        "To prove it is yours, signed in as that account, run:",
        "",
        `  orgplane auth verify-email ${verification} --url ${PUBLIC_URL}`,
        "",
        `or send POST ${PUBLIC_URL}/v1/auth/verify-email, with the account's session, and {"token": "${verification}"}.`,
        "",
        "The link works once, until 2030-01-01T01:00:00.000Z, and only for the account that asked for it.",
        "If you did not ask for it, ignore this message: someone else may have made an account with your address."
      ].join("\n")
    })
    expect(passwordResetMail(link)).toEqual({
      to: "person@example.com",
      subject: "Reset your orgplane password",
      text: [
        `Someone asked to reset the password of the orgplane account person@example.com at ${PUBLIC_URL}.`,
        "",
        "To choose a new password, run:",
        "",
        `  orgplane auth reset-password ${link.token} --url ${PUBLIC_URL}`,
        "",
        `or send POST ${PUBLIC_URL}/v1/auth/password-reset with {"token": "${link.token}", "newPassword": "..."}.`,
        "",
        "The link works once, until 2030-01-01T01:00:00.000Z, and using it signs the account out everywhere and revokes its API keys.",
        "If you did not ask for it, ignore this message: your password stays as it is."
      ].join("\n")
    })
    expect(passwordResetMail(link, "Ada <ada@acme.test>, of Acme,").text).toContain(
      `Ada <ada@acme.test>, of Acme, issued a link to reset the password of your orgplane account person@example.com at ${PUBLIC_URL}.`
    )
  })

  const logged: Array<string> = []
  const capture = Logger.layer([
    Logger.make(({ logLevel, message }) => void logged.push(`${logLevel}: ${Array.isArray(message) ? message.join(" ") : String(message)}`))
  ])

  it.live("sends a mail off the caller's fiber; a refusal is a warning naming the mail server, never its password", () =>
    Effect.gen(function*() {
      const mail = yield* Mailer
      const to = `mailed.${Date.now()}@example.com`
      yield* sendLater(mail, passwordResetMail({ ...link, to }))
      const received = yield* Effect.promise(() => smtp.next(to))
      expect(received).toMatchObject({ from: "no-reply@orgplane.example.com", subject: "Reset your orgplane password", user: "orgplane" })
      expect(received.text).toContain(`--url ${PUBLIC_URL}`)

      smtp.refuse = true
      const refused = `refused.${Date.now()}@example.com`
      yield* sendLater(mail, emailVerificationMail({ ...link, to: refused })).pipe(Effect.provide(capture))
      yield* Effect.promise(async () => {
        for (let i = 0; i < 500 && logged.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
      }).pipe(Effect.ensuring(Effect.sync(() => (smtp.refuse = false))))
      expect(logged).toHaveLength(1)
      expect(logged[0]).toMatch(new RegExp(
        `^Warn: A mail \\("Verify your email address for orgplane"\\) was not sent: The mail server 127\\.0\\.0\\.1:${new URL(smtp.url).port} did not take the message: `
      ))
      expect(logged.join("\n")).not.toContain(SMTP_PASSWORD)
      expect(logged.join("\n")).not.toContain(encodeURIComponent(SMTP_PASSWORD))
      expect(smtp.to(refused)).toEqual([])
    }).pipe(Effect.provide(Layer.unwrap(Effect.sync(() =>
      Mailer.layer.pipe(Layer.provide(settings({ smtpUrl: smtp.url, mailFrom: "orgplane <no-reply@orgplane.example.com>" })))
    )))))
})

/** Accounts, AccountRemoval and AccountRecords, with small limits: 2 sign-ups an hour per address, 3 failed sign-ins per email and address. */
const accounts = Layer.mergeAll(Accounts.layer, AccountRemoval.layer, AccountRecords.layer, UsersRepository.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Crypto.layer, IdGenerator.layer)),
  Layer.provideMerge(settings({ passwordCost: 10, signUpsPerHour: 2, signInFailuresPerAccountAndAddress: 3 })),
  Layer.provideMerge(Db.layer)
)

const PASSWORD = "correct horse battery"

layer(accounts, { timeout: 120_000, excludeTestServices: true })(`Accounts, AccountRemoval, AccountRecords on ${TestDatabase.kind}`, (it) => {
  it.effect("sign-up and sign-in: a session each, email_taken, the sign-up limit per address, a wrong password, the throttle, a disabled account", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const users = yield* UsersRepository
      const address = newAddress()
      const email = newEmail("signed")
      const signedUp = yield* service.signUp({ email, password: PASSWORD, name: "Signed Up" }, address)
      expect(signedUp.user).toMatchObject({ email, name: "Signed Up" })
      expect(signedUp.session.token).toMatch(/^ops_/)
      const taken = yield* Effect.flip(service.signUp({ email, password: PASSWORD, name: "Again" }, address))
      expect(taken).toMatchObject({ _tag: "Conflict", error: "email_taken", message: "An account with this email already exists." })
      const limited = yield* Effect.flip(service.signUp({ email: newEmail("third"), password: PASSWORD, name: "Third" }, address))
      // The window started at the first sign-up: an hour, less the time the two took.
      expect(limited).toMatchObject({ _tag: "RateLimited", message: expect.stringMatching(/^Too many sign-ups from this address; retry in 3[56]\d\d seconds\.$/) })

      const signedIn = yield* service.signIn({ email, password: PASSWORD }, address)
      expect(signedIn.user.id).toBe(signedUp.user.id)
      expect(signedIn.session.id).not.toBe(signedUp.session.id)
      expect(yield* Effect.flip(service.signIn({ email, password: "wrong password" }, address))).toMatchObject({ _tag: "Unauthorized" })
      expect(yield* Effect.flip(service.signIn({ email: newEmail("nobody"), password: PASSWORD }, address))).toMatchObject({ _tag: "Unauthorized" })
      // Two more wrong ones reach the pair's limit of 3: the right password is refused too, with the seconds left.
      for (let i = 0; i < 2; i++) yield* Effect.flip(service.signIn({ email, password: "wrong password" }, address))
      const throttled = yield* Effect.flip(service.signIn({ email, password: PASSWORD }, address))
      expect(throttled).toMatchObject({ _tag: "RateLimited" })
      expect(throttled.message).toMatch(/^Too many failed sign-ins; retry in \d+ seconds\.$/)
      // From elsewhere the right password works; a disabled account is told so only with it.
      yield* users.setDisabled({ id: signedUp.user.id, at: new Date() })
      expect(yield* Effect.flip(service.signIn({ email, password: "wrong password" }, newAddress()))).toMatchObject({ _tag: "Unauthorized" })
      expect(yield* Effect.flip(service.signIn({ email, password: PASSWORD }, newAddress()))).toMatchObject({
        _tag: "Forbidden",
        reason: "account_disabled",
        message: "This account is disabled by the instance's operator: ask them to enable it (POST /v1/admin/users/{userId}/enable)."
      })
    }))

  it.effect("a password change checks the current one (in a budget of 10 per 15 minutes) and ends the other sessions; an email change follows", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const users = yield* UsersRepository
      const email = newEmail("changing")
      const first = yield* service.signUp({ email, password: PASSWORD, name: "Changing" }, newAddress())
      const second = yield* service.signIn({ email, password: PASSWORD }, newAddress())
      const session = { sessionId: second.session.id, userId: first.user.id }
      const wrong = yield* Effect.flip(service.changePassword(session, { currentPassword: "not it", newPassword: "a new password here" }))
      expect(wrong).toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["currentPassword"], message: "is not the account's current password" }] })
      const changed = yield* service.changePassword(session, { currentPassword: PASSWORD, newPassword: "a new password here" })
      expect(changed).toEqual({ otherSessionsEnded: 1, apiKeys: [], apiKeysRevoked: false })
      expect(yield* Effect.flip(service.signIn({ email, password: PASSWORD }, newAddress()))).toMatchObject({ _tag: "Unauthorized" })

      const actor: Actor = {
        user: first.user,
        credential: { _tag: "Session", sessionId: second.session.id, ssoConnectionId: null, authenticatedAt: new Date() },
        organization: null,
        membership: null
      }
      const other = newEmail("changed")
      const moved = yield* service.changeEmail(actor, { email: other, password: "a new password here" })
      expect(moved).toMatchObject({ user: { id: first.user.id, email: other }, emailVerified: false })
      expect(Option.getOrThrow(yield* users.findById(first.user.id)).email).toBe(other)
      // Two checks spent above: eight more wrong ones fill the budget, the next is refused whatever the password.
      for (let i = 0; i < 8; i++) yield* Effect.flip(service.confirmPassword(first.user.id, "not it", "password"))
      const refused = yield* Effect.flip(service.confirmPassword(first.user.id, "a new password here", "password"))
      expect(refused).toMatchObject({ _tag: "RateLimited", message: expect.stringMatching(/^Too many password checks; retry in (900|8\d\d) seconds\.$/) })
    }))

  it.effect("an account's removal: 404 for no account, 409 naming the organizations it is the last owner of, then the erasure; its records before", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const removal = yield* AccountRemoval
      const records = yield* AccountRecords
      const users = yield* UsersRepository
      const sql = yield* SqlClient.SqlClient
      expect(yield* Effect.flip(removal.lock(Db.userId()))).toMatchObject({
        _tag: "NotFound",
        error: "user_not_found",
        message: "No account has this id (or it was deleted)."
      })

      const owner = (yield* service.signUp({ email: newEmail("owner"), password: PASSWORD, name: "Owner" }, newAddress())).user
      const leaving = yield* service.signUp({ email: newEmail("leaving"), password: PASSWORD, name: "Leaving" }, newAddress())
      const person = leaving.user
      const shared = yield* Db.insertOrganization({ name: "Shared" })
      yield* Db.insertMembership(shared, owner.id, "owner")
      const membership = Schema.decodeUnknownSync(MembershipId)(yield* Db.insertMembership(shared, person.id, "member"))
      const alone = yield* Db.insertOrganization({ name: "Alone" })
      yield* Db.insertMembership(alone, person.id, "owner")
      yield* sql`INSERT INTO api_keys (id, organization_id, membership_id, name, prefix, key_hash, created_at)
        VALUES (${Db.newId("apk")}, ${shared}, ${membership}, 'ci', 'opk_abcdefgh', ${`hash-${membership}`}, ${Db.at})`

      const refused = yield* Effect.flip(removal.organizationsOf(owner.id))
      expect(refused).toMatchObject({
        _tag: "Conflict",
        error: "last_owner_of_organizations",
        message: `The account is the last owner of Shared (${shared}), which has other members: ` +
          "make another member an owner first (POST /v1/members/{memberId}/transfer-ownership, 'orgplane members transfer-ownership'), " +
          "or delete the organization; then delete the account."
      })

      const exported = yield* records.of({ userId: person.id, sessionId: leaving.session.id }, new Date())
      expect(exported.user).toMatchObject({ id: person.id, email: person.email, emailVerified: false })
      expect([...exported.organizationIds].sort()).toEqual([shared, alone].sort())
      expect(exported.memberships.map((held) => [held.organization.name, held.membership.role]).sort()).toEqual([["Alone", "owner"], ["Shared", "member"]])
      expect(exported.sessions).toMatchObject([{ id: leaving.session.id, current: true }])
      expect(exported.apiKeys).toMatchObject([{ name: "ci", prefix: "opk_abcdefgh" }])
      expect(yield* Effect.flip(records.of({ userId: Db.userId(), sessionId: leaving.session.id }, new Date()))).toMatchObject({ _tag: "Unauthorized" })

      const erased = yield* transaction(Effect.gen(function*() {
        const user = yield* removal.lock(person.id)
        const found = yield* removal.organizationsOf(person.id)
        expect(found.find((organization) => organization.organizationId === alone)).toMatchObject({ name: "Alone", lastOwner: false, lastMember: true, deprovisioned: false })
        expect(found.find((organization) => organization.organizationId === shared)).toMatchObject({ name: "Shared", lastOwner: false, lastMember: false, membershipIds: [membership] })
        return yield* removal.erase(user, found, new Date())
      }))
      expect(erased).toMatchObject({ sessions: 1, apiKeys: 1 })
      expect([...erased.organizationsLeft].sort()).toEqual([shared, alone].sort())
      const tombstone = Option.getOrThrow(yield* users.findById(person.id))
      expect(tombstone).toMatchObject({ name: removal.pseudonymOf(person.id), email: removal.pseudonymOf(person.id), deletedAt: expect.any(Date) })
      expect(removal.pseudonymOf(person.id)).toBe(`deleted-user-${NodeCrypto.createHash("sha256").update(person.id).digest("hex").slice(0, 12)}`)
      expect(yield* sql`SELECT 1 FROM memberships WHERE user_id = ${person.id} AND removed_at IS NULL`).toEqual([])
      expect(yield* Effect.flip(removal.lock(person.id))).toMatchObject({ error: "user_not_found" })
      expect(yield* Effect.flip(service.signIn({ email: person.email, password: PASSWORD }, newAddress()))).toMatchObject({ _tag: "Unauthorized" })
    }))
})

/** The recovery and lifecycle services, mailing through the test's SMTP server, with a public URL. */
const recovery = Layer.unwrap(Effect.sync(() =>
  Layer.mergeAll(
    PasswordResets.layer,
    EmailVerification.layer,
    OrganizationDeletion.layer,
    OperatorUsers.layer,
    Accounts.layer,
    UsersRepository.layer,
    OrganizationsRepository.layer,
    MembershipsRepository.layer,
    OperatorRepository.layer,
    PurgeRepository.layer,
    SessionsRepository.layer,
    ApiKeysRepository.layer,
    RateLimiter.layer,
    Operator.layer
  ).pipe(
    Layer.provideMerge(AuditRecorder.layer),
    Layer.provideMerge(Layer.mergeAll(Crypto.layer, IdGenerator.layer)),
    Layer.provideMerge(settings({ passwordCost: 10, smtpUrl: smtp.url, mailFrom: "orgplane <no-reply@orgplane.example.com>", publicUrl: PUBLIC_URL })),
    Layer.provideMerge(Db.layer)
  )
))

/** The token a mail carries (`opr_…` or `opv_…`). */
const tokenIn = (text: string, prefix: "opr" | "opv") => {
  const found = new RegExp(`${prefix}_[A-Za-z0-9_-]{43}`).exec(text)
  if (found === null) throw new Error(`no ${prefix} token in: ${text}`)
  return found[0]
}

layer(recovery, { timeout: 120_000, excludeTestServices: true })(`PasswordResets, EmailVerification, OrganizationDeletion, OperatorUsers on ${TestDatabase.kind}`, (it) => {
  it.effect("forgot password mails a working link only to an account's address; a link works once; mails are counted per email", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const resets = yield* PasswordResets
      const person = yield* service.signUp({ email: newEmail("forgot"), password: PASSWORD, name: "Forgot" }, newAddress())
      const stranger = newEmail("stranger")
      yield* resets.forgotPassword(stranger, newAddress())
      yield* resets.forgotPassword(person.user.email, newAddress())
      const mail = yield* Effect.promise(() => smtp.next(person.user.email))
      expect(mail).toMatchObject({ subject: "Reset your orgplane password" })
      expect(mail.text).toContain(`--url ${PUBLIC_URL}`)
      expect(smtp.to(stranger)).toEqual([])
      const token = tokenIn(mail.text, "opr")
      const reset = yield* resets.reset({ token, newPassword: "remembered at last" }, newAddress())
      expect(reset).toMatchObject({ user: { id: person.user.id }, sessionsEnded: 1, apiKeys: [], apiKeysRevoked: true })
      const again = yield* Effect.flip(resets.reset({ token, newPassword: "remembered at last" }, newAddress()))
      expect(again).toMatchObject({
        _tag: "InvalidRequest",
        details: [{
          path: ["token"],
          code: "password_reset_token_invalid",
          message: "is not a live password reset link: it is unknown, expired or used, or a newer link or a change of the account's password or email replaced it. Ask for a new one."
        }]
      })
      expect((yield* service.signIn({ email: person.user.email, password: "remembered at last" }, newAddress())).user.id).toBe(person.user.id)
      // Two more mails make three this hour; the fourth is refused, with and without an account alike.
      for (const email of [person.user.email, stranger]) {
        for (let i = 1; i < 3; i++) yield* resets.forgotPassword(email, newAddress())
        const refused = yield* Effect.flip(resets.forgotPassword(email, newAddress()))
        expect(refused).toMatchObject({ _tag: "RateLimited", message: expect.stringMatching(/^Too many recovery mails to this address; retry in \d+ seconds\.$/) })
      }
    }))

  it.effect("the machine's link names no caller; an unknown email is 404", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const resets = yield* PasswordResets
      const person = yield* service.signUp({ email: newEmail("machine"), password: PASSWORD, name: "Machine" }, newAddress())
      const missing = newEmail("missing")
      expect(yield* Effect.flip(resets.issueOnMachine(missing))).toMatchObject({ _tag: "NotFound", error: "user_not_found", message: `No account has the email ${missing}.` })
      const link = yield* resets.issueOnMachine(person.user.email)
      expect(link).toMatchObject({ userId: person.user.id, email: person.user.email, token: expect.stringMatching(/^opr_/) })
      expect(link.delivery).toBe("shown")
      expect(yield* resets.reset({ token: link.token ?? "", newPassword: "set by the machine" }, newAddress())).toMatchObject({ user: { id: person.user.id } })
      // The command's own form: its layers of its own, the database's migrations checked first.
      const latest = Math.max(...migrations.map((migration) => migration.id))
      const printed = yield* MachineRecovery.issue({ email: person.user.email, latestMigration: latest })
      expect(printed).toMatchObject({ passwordReset: { userId: person.user.id, token: expect.stringMatching(/^opr_/) }, baseUrl: PUBLIC_URL })
      expect(yield* Effect.flip(MachineRecovery.issue({ email: person.user.email, latestMigration: latest + 1 }))).toMatchObject({
        _tag: "DatabaseNotMigrated",
        message: `The database is not migrated to this version (migration ${latest} of ${latest + 1}): start \`orgplane serve\` of this version once, then run this again.`
      })
    }))

  it.effect("email verification mails a link to the person's own address; using it proves the address once", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const verification = yield* EmailVerification
      const person = yield* service.signUp({ email: newEmail("verified"), password: PASSWORD, name: "Verified" }, newAddress())
      yield* verification.request(person.user.id)
      const mail = yield* Effect.promise(() => smtp.next(person.user.email))
      expect(mail.subject).toBe("Verify your email address for orgplane")
      const token = tokenIn(mail.text, "opv")
      const verified = yield* verification.verify(token, person.user.id, newAddress())
      expect(verified).toMatchObject({ user: { id: person.user.id, email: person.user.email }, emailVerifiedAt: expect.any(Date) })
      expect(yield* Effect.flip(verification.verify(token, person.user.id, newAddress()))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: ["token"], code: "email_verification_token_invalid" }]
      })
      expect(yield* Effect.flip(verification.request(person.user.id))).toMatchObject({
        _tag: "Conflict",
        error: "email_already_verified",
        message: "Your email address is proven already."
      })
    }))

  it.effect("an organization's deletion by the system, its name confirmed, restored within its grace; the purge removes one past it", () =>
    Effect.gen(function*() {
      const deletion = yield* OrganizationDeletion
      const organizations = yield* OrganizationsRepository
      // The audit log's partitions of this month and the next, as the server makes them at start.
      const auditEvents = MonthlyPartitions.make("audit_events")
      yield* auditEvents.create(MonthlyPartitions.monthOf(new Date()))
      yield* auditEvents.create(MonthlyPartitions.monthOf(new Date()) + 1)
      const id = yield* Db.insertOrganization({ name: "Doomed" })
      const organization = toOrganization(Option.getOrThrow(yield* organizations.find(id)))
      const system = Principal.system("account-deletion", organization)
      expect(yield* Effect.flip(deletion.schedule(system, id, { confirmName: "Other" }))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: ["confirmName"], message: "is not this organization's name: repeat it exactly as GET /v1/organization shows it" }]
      })
      const scheduled = yield* deletion.schedule(system, id, { confirmName: " Doomed " })
      expect(scheduled).toMatchObject({ organization: { id, name: "Doomed" }, totalRows: 0 })
      expect(scheduled.purgeAfter.getTime() - scheduled.deletedAt.getTime()).toBe(7 * 24 * 3_600_000)
      expect(yield* deletion.restore(system, id)).toMatchObject({ organization: { id, name: "Doomed" } })
      expect(yield* Effect.flip(deletion.restore(system, id))).toMatchObject({ _tag: "Conflict", error: "organization_not_deleted", message: "This organization is not deleted." })

      const doomed = yield* deletion.schedule(system, id)
      const purged = yield* OrganizationPurge.run(new Date(doomed.purgeAfter.getTime() + 1))
      expect(purged.find((done) => done.organizationId === id)).toMatchObject({ rows: { organizations: 1 } })
      expect(yield* organizations.lockLifecycle(id)).toEqual(Option.none())
      expect(OrganizationDeletion_.describeRows({ teams: 1, memberships: 3, agents: 1 })).toBe("memberships 3, agents 1, teams 1")
      expect(OrganizationDeletion_.describeRows({})).toBe("none")
      expect(OrganizationDeletion_.totalOf({ teams: 1, memberships: 3 })).toBe(4)
    }))

  it.effect("the operator disables an account (its sessions end, its sign-in is refused) and enables it again; not their own; others may not", () =>
    Effect.gen(function*() {
      const service = yield* Accounts
      const operatorUsers = yield* OperatorUsers
      const organizations = yield* OrganizationsRepository
      const memberships = yield* MembershipsRepository
      const operatorId = yield* Db.insertOrganization({ name: "Operators" })
      expect(yield* (yield* OperatorRepository).claim(operatorId)).toBe(true)
      const memberOf = Effect.fn("test.memberOf")(function*(organizationId: OrganizationId, role: "owner" | "member") {
        const signedUp = yield* service.signUp({ email: newEmail(role), password: PASSWORD, name: role }, newAddress())
        yield* Db.insertMembership(organizationId, signedUp.user.id, role)
        const membership = toMembership(Option.getOrThrow(yield* memberships.findActive(organizationId, { userId: signedUp.user.id })))
        const caller: MemberContext = {
          _tag: "Member",
          user: signedUp.user,
          credential: { _tag: "Session", sessionId: signedUp.session.id, ssoConnectionId: null, authenticatedAt: new Date() },
          organization: toOrganization(Option.getOrThrow(yield* organizations.find(organizationId))),
          membership
        }
        return caller
      })
      const operator = yield* memberOf(operatorId, "owner")
      const outsider = yield* memberOf(yield* Db.insertOrganization({ name: "Elsewhere" }), "owner")
      const target = yield* service.signUp({ email: newEmail("target"), password: PASSWORD, name: "Target" }, newAddress())

      expect(yield* Effect.flip(operatorUsers.disable(outsider, target.user.id))).toMatchObject({
        _tag: "Forbidden",
        reason: "operator_only",
        message: "Only owners and admins of the operator organization may do this."
      })
      expect(yield* Effect.flip(operatorUsers.disable(operator, operator.user.id))).toMatchObject({
        _tag: "Conflict",
        error: "cannot_disable_yourself",
        message: "You cannot disable your own account: another owner or admin of the operator organization can."
      })
      expect(yield* Effect.flip(operatorUsers.disable(operator, Db.userId()))).toMatchObject({ _tag: "NotFound", error: "user_not_found" })
      const disabled = yield* operatorUsers.disable(operator, target.user.id)
      expect(disabled.user).toMatchObject({ id: target.user.id, disabledAt: expect.any(Date) })
      expect(yield* (yield* SessionsRepository).allLive({ userId: target.user.id, current: target.session.id, at: new Date(), idleSince: new Date(0) })).toEqual([])
      expect(yield* Effect.flip(service.signIn({ email: target.user.email, password: PASSWORD }, newAddress()))).toMatchObject({ reason: "account_disabled" })
      const listed = yield* operatorUsers.list(operator, { limit: 50, disabled: true })
      expect(listed.items.map((user) => user.id)).toEqual([target.user.id])
      expect((yield* operatorUsers.enable(operator, target.user.id)).user).toMatchObject({ id: target.user.id, disabledAt: null })
      expect((yield* service.signIn({ email: target.user.email, password: PASSWORD }, newAddress())).user.id).toBe(target.user.id)
    }))
})
