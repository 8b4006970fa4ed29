/**
 * What the run's people do in the account-ownership model (test/http/AccountOwnershipModel.test.ts), as fast-check
 * commands: sign up with any address, sign in by password or through their employer's SSO, change an account's
 * address or password, prove an address or recover an account by mail, make and revoke API keys, make organizations.
 * Each step asks the server, tells the model what it answered (judging where an SSO sign-in landed), then checks the
 * rule (OwnershipModel.checkRule). Steps name what they act with by position ("ana's 2nd session"), resolved against
 * the model when they run, so a shrunk sequence still replays; one the model does not allow yet is skipped.
 */
import type fc from "fast-check"
import * as Http from "../../../../packages/testkit/src/Http.js"
import type { AuthResult, CreatedApiKey, MyOrganizationPage, OrganizationWithMembership, PasswordResetResult } from "@orgplane/schema"
import { memberAt, type World } from "./IdentityWorld.js"
import {
  accountWithEmail,
  checkRule,
  type Credential,
  describeAccount,
  type Holder,
  isPerson,
  landed,
  type Link,
  live,
  type Model,
  ownerOfEmail,
  PEOPLE,
  type Person,
  reestablish,
  revoke,
  RuleBroken
} from "./OwnershipModel.js"

export type Step = fc.AsyncCommand<Model, World, false>

/** A step: whether the model lets it happen, and what it does; the rule is checked after it. */
export const step = (label: string, applies: (model: Model) => boolean, act: (model: Model, world: World) => Promise<void>): Step => ({
  check: applies,
  run: async (model, world) => {
    model.steps++
    await act(model, world)
    await checkRule(world, model)
  },
  toString: () => label
})

export const nth = (index: number) => `${index + 1}${["st", "nd", "rd"][index] ?? "th"}`
/** The item at a position drawn before the run, wrapped around what there is when it runs. */
export const at = <A>(items: ReadonlyArray<A>, index: number): A | undefined => items.length === 0 ? undefined : items[index % items.length]

let secrets = 0
export const newPassword = () => `passphrase ${++secrets} ${Math.random().toString(36).slice(2, 10)}`

export const request = (world: World, method: string, path: string, options: Http.Options = {}) => Http.request(world.url, method, path, options)

/** A line of the story: who did what, and what the server answered. */
export const tell = (model: Model, line: string) => void model.story.push(line)
/** What a refusal said, for the story. */
export const why = (answered: Http.RawResponse) =>
  ` ${String(memberAt(answered.body, "reason") ?? memberAt(answered.body, "error") ?? memberAt(answered.body, "detail") ?? "")}`.trimEnd()

export const sessionsOf = (model: Model, person: Person) => live(model, person, "session")
/** The person's live sessions, each with a live password of theirs for the same account. */
const sessionsWithPassword = (model: Model, person: Person) =>
  sessionsOf(model, person).flatMap((session) => {
    const password = live(model, person, "password").find((candidate) => candidate.account === session.account)
    return password === undefined ? [] : [{ session, password }]
  })

export const addCredential = (model: Model, credential: Credential) => void model.credentials.push(credential)

/**
 * A new session of the holder's. Beyond two live sessions of one account, the oldest is signed out first (a person
 * signs in again from where they were): the credentials checked after every step stay few, and a session signed out
 * must answer no more.
 */
const holdSession = async (model: Model, world: World, session: Credential) => {
  const [oldest, ...others] = live(model, session.holder, "session").filter((candidate) => candidate.account === session.account)
  if (oldest !== undefined && others.length > 0) {
    const signedOut = await request(world, "POST", "/v1/auth/sign-out", { token: oldest.secret })
    if (signedOut.status === 204) oldest.revoked = `${session.holder} signed it out`
    else oldest.ended = true
  }
  addCredential(model, session)
}

export const unusedLinks = (model: Model, holder: Holder, kind: Link["kind"]) =>
  model.links.filter((link) => link.holder === holder && link.kind === kind && link.used !== true)

/** The session acts in the organization from now on (a person's several organizations; one restored). */
export const switchTo = async (world: World, session: string, organizationId: string) =>
  (await request(world, "POST", "/v1/me/active-organization", { token: session, body: { organizationId } })).status === 200

export const organizationLabel = (model: Model, id: string) => model.organizations.find((organization) => organization.id === id)?.label ?? id

// Signing up and in

export const signUp = (person: Person, address: Person) =>
  step(
    `${person} signs up with ${address === person ? "their own address" : `${address}'s address`}`,
    // An address an account has already is refused (409 email_taken): nothing to learn from drawing it.
    (model) => accountWithEmail(model, model.emails[address]) === undefined,
    async (model, world) => {
      const email = model.emails[address]
      const password = newPassword()
      const answered = await request(world, "POST", "/v1/auth/sign-up", { body: { email, password, name: `${person} ${model.run}` } })
      const signedUp = answered.status === 201 ? Http.expectStatus<typeof AuthResult.Encoded>("sign-up", answered, 201) : undefined
      tell(model, `${person} signs up as ${email}: ${answered.status}${signedUp !== undefined ? ` → account ${signedUp.user.id}` : why(answered)}`)
      if (signedUp === undefined) return
      const id: string = signedUp.user.id
      model.accounts.set(id, { id, email, owner: person, made: `${person}'s sign-up` })
      addCredential(model, { kind: "session", holder: person, account: id, secret: signedUp.session.token, made: `${person}'s sign-up` })
      addCredential(model, { kind: "password", holder: person, account: id, secret: password, made: `${person}'s sign-up` })
    }
  )

export const passwordSignIn = (person: Person, pick: number) =>
  step(`${person} signs in with their ${nth(pick)} password`, (model) => live(model, person, "password").length > 0, async (model, world) => {
    const password = at(live(model, person, "password"), pick)!
    const email = model.accounts.get(password.account)!.email
    const answered = await request(world, "POST", "/v1/auth/sign-in", { body: { email, password: password.secret } })
    const signedIn = answered.status === 200 ? Http.expectStatus<typeof AuthResult.Encoded>("sign-in", answered, 200) : undefined
    tell(model, `${person} signs in as ${email} with a password: ${answered.status}${signedIn !== undefined ? ` → ${signedIn.user.id}` : ""}`)
    if (signedIn === undefined) return
    // A password reaching another account than the model's is the check's to report; the session is that account's.
    await holdSession(model, world, { kind: "session", holder: person, account: signedIn.user.id, secret: signedIn.session.token, made: `${person}'s password sign-in` })
  })

export const ssoSignIn = (person: Person) =>
  step(`${person} signs in through their employer's SSO`, (model) => !model.emails[person].endsWith("@elsewhere.test"), async (model, world) => {
    const email = model.emails[person]
    const organization = world.organizationOf(email)!
    const through = `${organization.label}'s ${organization.protocol.toUpperCase()}`
    const outcome = await world.ssoSignIn(email)
    if (outcome._tag === "Refused") return tell(model, `${person} signs in through ${through} as ${email}: refused (${outcome.status} ${outcome.reason})`)
    tell(model, `${person} signs in through ${through} as ${email}: lands in ${outcome.userId} (${outcome.email})`)
    const how = `${person}'s SSO sign-in through ${organization.label}`
    landed(model, person, outcome.userId, outcome.email, how)
    await holdSession(model, world, { kind: "session", holder: person, account: outcome.userId, secret: outcome.token, made: how })
  })

// Changing an account

/** The run's addresses no account has: where an account's address may move. */
const freeAddresses = (model: Model) => PEOPLE.filter((person) => accountWithEmail(model, model.emails[person]) === undefined)

/** The person moves an account of theirs to an address no account has (the `to`th of them: whoever's it is). */
export const changeEmail = (person: Person, pick: number, to: number) =>
  step(
    `${person} changes an account's address to the ${nth(to)} free address`,
    (model) => sessionsWithPassword(model, person).length > 0 && freeAddresses(model).length > 0,
    async (model, world) => {
      const { password, session } = at(sessionsWithPassword(model, person), pick)!
      const email = model.emails[at(freeAddresses(model), to)!]
      const answered = await request(world, "PUT", "/v1/me/email", { token: session.secret, body: { email, password: password.secret } })
      tell(model, `${person} changes ${session.account}'s address to ${email}: ${answered.status}${answered.status === 200 ? "" : why(answered)}`)
      if (answered.status === 200) model.accounts.get(session.account)!.email = email
    }
  )

export const changePassword = (person: Person, pick: number, revokeApiKeys: boolean) =>
  step(`${person} changes a password${revokeApiKeys ? " and revokes API keys" : ""}`, (model) => sessionsWithPassword(model, person).length > 0, async (model, world) => {
    const { password, session } = at(sessionsWithPassword(model, person), pick)!
    const next = newPassword()
    const answered = await request(world, "POST", "/v1/me/password", { token: session.secret, body: { currentPassword: password.secret, newPassword: next, revokeApiKeys } })
    tell(model, `${person} changes ${session.account}'s password${revokeApiKeys ? " with revokeApiKeys" : ""}: ${answered.status}`)
    if (answered.status !== 200) return
    const because = `${person} changed ${session.account}'s password`
    revoke(model, session.account, because, (credential) => credential.kind === "password")
    revoke(model, session.account, `${because}, which ends every other session`, (credential) => credential.kind === "session" && credential !== session)
    if (revokeApiKeys) revoke(model, session.account, `${because} with revokeApiKeys`, (credential) => credential.kind === "API key")
    addCredential(model, { kind: "password", holder: person, account: session.account, secret: next, made: `${person}'s password change` })
  })

// Links by mail

/** Uses a verification link: the address is proven to the server (the model's owners stay: the link's asker is one). */
const usingVerification = async (model: Model, world: World, person: Person, link: Link) => {
  link.used = true
  const answered = await request(world, "POST", "/v1/auth/verify-email", { body: { token: link.token } })
  tell(model, `${person} verifies ${link.account}'s address with the mailed link: ${answered.status}`)
}

/** The person asks for a link proving a session's account's address; they use it at once unless `later`. */
export const verifyByMail = (person: Person, pick: number, later: boolean) =>
  step(`${person} asks for a verification link${later ? " (kept for later)" : " and uses it"}`, (model) => sessionsOf(model, person).length > 0, async (model, world) => {
    const session = at(sessionsOf(model, person), pick)!
    const answered = await request(world, "POST", "/v1/me/email-verification", { token: session.secret })
    const address = model.accounts.get(session.account)!.email
    tell(model, `${person} asks for a link verifying ${session.account}'s ${address}: ${answered.status}${answered.status === 202 ? "" : why(answered)}`)
    if (answered.status !== 202) return
    const token = await world.mailedToken(address, "opv")
    if (token === undefined) return tell(model, `  (no link came to ${address})`)
    const mailbox = ownerOfEmail(model, address)
    // Only whoever asked uses a verification link: one arriving unasked is not clicked.
    if (mailbox !== person) return tell(model, `  (the link went to ${mailbox}'s mailbox, who did not ask for it)`)
    const link: Link = { kind: "verification", holder: person, token, account: session.account }
    model.links.push(link)
    if (!later) await usingVerification(model, world, person, link)
  })

export const useVerification = (person: Person, pick: number) =>
  step(`${person} uses their ${nth(pick)} verification link`, (model) => unusedLinks(model, person, "verification").length > 0, async (model, world) => {
    await usingVerification(model, world, person, at(unusedLinks(model, person, "verification"), pick)!)
  })

/**
 * Uses a reset link: a new password, every session ended, the keys too with `revokeApiKeys`. One that went to the
 * address's mailbox proves the address: the account is its user's from now on.
 */
export const usingReset = async (model: Model, world: World, holder: Holder, link: Link, revokeApiKeys: boolean) => {
  link.used = true
  const password = newPassword()
  const answered = await request(world, "POST", "/v1/auth/password-reset", { body: { token: link.token, newPassword: password, revokeApiKeys } })
  const delivered = link.delivered === "mailbox" ? "sent to its address" : "kept by its issuer"
  tell(model, `${holder} uses a reset link for ${link.account} (${delivered})${revokeApiKeys ? " with revokeApiKeys" : ""}: ${answered.status}${answered.status === 200 ? "" : why(answered)}`)
  if (answered.status !== 200) return
  const account = link.account!
  const reset = Http.expectStatus<typeof PasswordResetResult.Encoded>("password reset", answered, 200)
  if (reset.user.id !== account) {
    throw new RuleBroken(model, `a reset link issued for ${describeAccount(model, account)} set the password of ${describeAccount(model, reset.user.id)}`)
  }
  const how = `${holder}'s reset link, ${delivered}`
  if (link.delivered === "mailbox" && isPerson(holder)) reestablish(model, account, holder, how)
  revoke(model, account, `the password was reset (${how})`, (credential) => credential.kind === "password")
  revoke(model, account, `the reset ended every session (${how})`, (credential) => credential.kind === "session")
  if (revokeApiKeys) revoke(model, account, `the reset revoked every API key (${how}, revokeApiKeys)`, (credential) => credential.kind === "API key")
  addCredential(model, { kind: "password", holder, account, secret: password, made: how, ...(link.delivered === "issuer" ? { heldFor: link.organization! } : {}) })
}

/** The person asks for a reset link for their own address ("forgot password"); they use it at once unless `later`. */
export const recoverByMail = (person: Person, revokeApiKeys: boolean, later: boolean) =>
  step(
    `${person} asks for a reset link for their address${later ? " (kept for later)" : ` and uses it${revokeApiKeys ? " and revokes API keys" : ""}`}`,
    () => true,
    async (model, world) => {
      const email = model.emails[person]
      const answered = await request(world, "POST", "/v1/auth/forgot-password", { body: { email } })
      const account = accountWithEmail(model, email)
      tell(model, `${person} asks for a reset link for ${email}: ${answered.status}${account === undefined ? " (no account has it)" : ""}`)
      if (answered.status !== 202 || account === undefined) return
      const token = await world.mailedToken(email, "opr")
      if (token === undefined) return tell(model, `  (no link came to ${email})`)
      const link: Link = { kind: "reset", holder: person, token, account: account.id, delivered: "mailbox" }
      model.links.push(link)
      if (!later) await usingReset(model, world, person, link, revokeApiKeys)
    }
  )

export const useReset = (holder: Holder, pick: number, revokeApiKeys: boolean) =>
  step(
    `${holder} uses their ${nth(pick)} reset link${revokeApiKeys ? " and revokes API keys" : ""}`,
    (model) => unusedLinks(model, holder, "reset").length > 0,
    async (model, world) => usingReset(model, world, holder, at(unusedLinks(model, holder, "reset"), pick)!, revokeApiKeys)
  )

// Organizations of their own, and API keys

export const createOrganization = (person: Person, pick: number) =>
  step(`${person} creates an organization`, (model) => sessionsOf(model, person).length > 0, async (model, world) => {
    const session = at(sessionsOf(model, person), pick)!
    const name = `${person}'s ${model.run} ${model.organizations.length}`
    const answered = await request(world, "POST", "/v1/organizations", { token: session.secret, body: { name } })
    tell(model, `${person} creates "${name}" as ${session.account}: ${answered.status}${answered.status === 201 ? "" : why(answered)}`)
    if (answered.status !== 201) return
    const created = Http.expectStatus<typeof OrganizationWithMembership.Encoded>("organization", answered, 201)
    model.organizations.push({ label: name, id: created.organization.id, name, owner: { person, account: session.account }, deleted: false })
  })

export const createApiKey = (person: Person, pick: number, organizationPick: number) =>
  step(`${person} makes an API key in their ${nth(organizationPick)} organization`, (model) => sessionsOf(model, person).length > 0, async (model, world) => {
    const session = at(sessionsOf(model, person), pick)!
    const mine = await request(world, "GET", "/v1/me/organizations?limit=100", { token: session.secret })
    const organization = mine.status === 200 ? at(Http.expectStatus<typeof MyOrganizationPage.Encoded>("my organizations", mine, 200).items, organizationPick)?.organization.id : undefined
    if (organization === undefined || !(await switchTo(world, session.secret, organization))) {
      return tell(model, `${person} has no organization to make an API key in as ${session.account}`)
    }
    const answered = await request(world, "POST", "/v1/api-keys", { token: session.secret, body: { name: `${person} ${model.run}` } })
    const label = organizationLabel(model, organization)
    const made = answered.status === 201 ? Http.expectStatus<typeof CreatedApiKey.Encoded>("API key", answered, 201) : undefined
    tell(model, `${person} makes an API key in ${label} as ${session.account}: ${answered.status}${made !== undefined ? ` → ${made.apiKey.id}` : why(answered)}`)
    if (made === undefined) return
    addCredential(model, {
      kind: "API key",
      holder: person,
      account: session.account,
      secret: made.key,
      apiKeyId: made.apiKey.id,
      organizationId: organization,
      made: `${person}'s key in ${label}`
    })
  })

const revocableKeys = (model: Model, person: Person) =>
  live(model, person, "API key").filter((key) => sessionsOf(model, person).some((session) => session.account === key.account))

export const revokeApiKey = (person: Person, pick: number) =>
  step(`${person} revokes their ${nth(pick)} API key`, (model) => revocableKeys(model, person).length > 0, async (model, world) => {
    const key = at(revocableKeys(model, person), pick)!
    const session = sessionsOf(model, person).find((candidate) => candidate.account === key.account)!
    if (!(await switchTo(world, session.secret, key.organizationId!))) {
      return tell(model, `${person} cannot act in ${organizationLabel(model, key.organizationId!)} to revoke ${key.apiKeyId}`)
    }
    const answered = await request(world, "DELETE", `/v1/api-keys/${key.apiKeyId}`, { token: session.secret })
    tell(model, `${person} revokes ${key.apiKeyId}: ${answered.status}`)
    if (answered.status === 204) key.revoked = `${person} revoked it (DELETE /v1/api-keys/${key.apiKeyId})`
  })
