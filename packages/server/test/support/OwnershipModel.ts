/**
 * The model of who owns which account, for test/http/AccountOwnershipModel.test.ts, and the rule it holds the server
 * to (issue 55): every account belongs to one person, and every credential that still works reaches only an account
 * its holder is entitled to; what the model says was revoked answers no more.
 *
 * People own their email: the mailbox (mailed links go there) and, on a domain an organization verified, the identity
 * at that organization's IdP. An account belongs to whoever made it (sign-up, an invitation accepted with `signUp`),
 * or to the person it was made for (SSO JIT, SCIM), until the owner of its email proves that address to the server
 * by a way in of their own: an SSO sign-in landing in it by that email, a reset link mailed to the address and used,
 * or their directory provisioning them into it. That re-establishes ownership: the account is theirs from then on,
 * and every way into it held by anyone else (passwords, sessions, API keys, SSO identities) must end.
 */
import type { AuthResult, Me, MyOrganizationPage } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import type { OrganizationLabel, World } from "./IdentityWorld.js"

/** The people of a run: two of organization A's domain, one of B's, and an outsider whose domain no one verified. */
export const PEOPLE = ["ana", "abe", "bo", "oz"] as const
export type Person = typeof PEOPLE[number]

/** Who may hold a credential: a person, or an organization's owner (a reset link used for a member). */
export type Holder = Person | "owner of A" | "owner of B"

export const isPerson = (holder: Holder): holder is Person => PEOPLE.some((person) => person === holder)

export interface Account {
  readonly id: string
  email: string
  owner: Person
  /** How it was made, for failure messages. */
  readonly made: string
}

export interface Credential {
  readonly kind: "session" | "API key" | "password"
  readonly holder: Holder
  readonly account: string
  readonly secret: string
  readonly apiKeyId?: string
  /** The organization an API key acts in. */
  readonly organizationId?: string
  /**
   * A password an organization's owner set with a reset link issued for a member: it may reach that account only
   * while this organization alone holds it.
   */
  readonly heldFor?: string
  readonly made: string
  /** Why it must no longer work, once the model says it was revoked. */
  revoked?: string
  /** It stopped working before the model required it to (a session or password, which never come back): not probed. */
  ended?: boolean
}

export interface Link {
  readonly kind: "verification" | "reset" | "invitation"
  readonly holder: Holder
  readonly token: string
  /** The account a verification or reset link is for. */
  readonly account?: string
  /** The address an invitation went to. */
  readonly email?: string
  readonly organization?: string
  /**
   * Where a reset link or an invitation went: the mailbox of the address (whoever uses it proves that address), or the
   * one who issued it, who saw its token (a reset link its organization's owner keeps; an invitation whose token the
   * inviter sends on to whomever they choose, proving nothing of the address).
   */
  readonly delivered?: "mailbox" | "issuer"
  used?: boolean
}

export interface OrganizationState {
  readonly label: string
  readonly id: string
  readonly name: string
  /** A or B, the world's organizations every run shares. */
  readonly shared?: OrganizationLabel
  /** A person's own organization: its owner and the account that owns it. */
  readonly owner?: { readonly person: Person; readonly account: string }
  deleted: boolean
}

/** A User the organization's directory provisioned: the person, and the SCIM resource (a membership). */
export interface DirectoryUser {
  readonly organization: OrganizationLabel
  readonly person: Person
  readonly id: string
  readonly account: string
  active: boolean
}

export interface Model {
  readonly run: string
  readonly emails: Readonly<Record<Person, string>>
  /** The verified domains of A and B. */
  readonly domains: Readonly<Record<OrganizationLabel, string>>
  readonly accounts: Map<string, Account>
  readonly credentials: Array<Credential>
  readonly links: Array<Link>
  readonly organizations: Array<OrganizationState>
  readonly directory: Array<DirectoryUser>
  /** What happened so far, a line or two a step, for failure messages. */
  readonly story: Array<string>
  /** How many steps ran. */
  steps: number
}

let runs = 0

/** A fresh model: new addresses for the run's people (the domains are the world's), registered at their IdPs. */
export const newModel = (world: World): Model => {
  const run = `r${++runs}${Math.random().toString(36).slice(2, 6)}`
  const emails: Record<Person, string> = {
    ana: `ana-${run}@${world.organizations.A.domain}`,
    abe: `abe-${run}@${world.organizations.A.domain}`,
    bo: `bo-${run}@${world.organizations.B.domain}`,
    oz: `oz-${run}@elsewhere.test`
  }
  for (const email of Object.values(emails)) world.addIdentity(email)
  return {
    run,
    emails,
    domains: { A: world.organizations.A.domain, B: world.organizations.B.domain },
    accounts: new Map(),
    credentials: [],
    links: [],
    organizations: [
      { label: "A", shared: "A", id: world.organizations.A.id, name: world.organizations.A.name, deleted: false },
      { label: "B", shared: "B", id: world.organizations.B.id, name: world.organizations.B.name, deleted: false }
    ],
    directory: [],
    story: [],
    steps: 0
  }
}

/** The person who owns an address of the run (its mailbox, its IdP identity). */
export const ownerOfEmail = (model: Model, email: string): Person | undefined =>
  PEOPLE.find((person) => model.emails[person].toLowerCase() === email.toLowerCase())

export const accountWithEmail = (model: Model, email: string) =>
  [...model.accounts.values()].find((account) => account.email.toLowerCase() === email.toLowerCase())

/** An account for failure messages: its id, address and owner. */
export const describeAccount = (model: Model, id: string) => {
  const account = model.accounts.get(id)
  return account === undefined ? `${id} (unknown to the model)` : `${id} (${account.email}, ${account.owner}'s, made by ${account.made})`
}

const describeCredential = (model: Model, credential: Credential) =>
  `${credential.holder}'s ${credential.kind} for ${describeAccount(model, credential.account)}, from "${credential.made}"`

/** Credentials that may still work, held by `holder`, of `kind`. */
export const live = (model: Model, holder: Holder, kind: Credential["kind"]) =>
  model.credentials.filter((credential) => credential.holder === holder && credential.kind === kind && credential.revoked === undefined && credential.ended !== true)

/** Marks every credential of the account that `which` selects as revoked, for `why`. */
export const revoke = (model: Model, account: string, why: string, which: (credential: Credential) => boolean) => {
  for (const credential of model.credentials) {
    if (credential.account === account && credential.revoked === undefined && which(credential)) {
      credential.revoked = why
      // Probed again: what the server ended by itself must not come back now that the model requires it to end.
      credential.ended = false
    }
  }
}

/**
 * The owner of the account's address proved it by a way in of their own: the account is theirs, and every way in
 * that anyone else holds must end.
 */
export const reestablish = (model: Model, accountId: string, person: Person, how: string) => {
  const account = model.accounts.get(accountId)
  if (account === undefined || account.owner === person) return
  const previous = account.owner
  account.owner = person
  revoke(model, accountId, `${person} took ${account.email} back from ${previous} (${how})`, (credential) => credential.holder !== person)
  model.story.push(`  → ${accountId} is ${person}'s now (it was ${previous}'s): nothing of anyone else's may reach it`)
}

/** A model that disagrees with the server, or a server that breaks the rule: the story so far, and what broke. */
export class RuleBroken extends Error {
  constructor(model: Model, what: string) {
    super(`${what}\n\nThe run (${model.run}) so far:\n${model.story.join("\n")}`)
    this.name = "RuleBroken"
  }
}

/**
 * Where the person's SSO identity landed: a new account (made for them), one of theirs, or one whose address is
 * theirs (re-established for them). Anything else is an identity reaching someone else's account.
 */
export const landed = (model: Model, person: Person, userId: string, email: string, how: string) => {
  const known = model.accounts.get(userId)
  if (known === undefined) {
    if (email.toLowerCase() !== model.emails[person].toLowerCase()) {
      throw new RuleBroken(model, `${how}: ${person}'s identity (${model.emails[person]}) made a new account ${userId} with another address, ${email}`)
    }
    model.accounts.set(userId, { id: userId, email, owner: person, made: how })
    return
  }
  if (known.owner === person) return
  if (known.email.toLowerCase() === model.emails[person].toLowerCase()) return reestablish(model, userId, person, how)
  throw new RuleBroken(model, `${how}: ${person}'s identity (${model.emails[person]}) reached ${describeAccount(model, userId)}, an account whose address is not ${person}'s and which ${person} does not own`)
}

interface Probe {
  readonly works: boolean
  readonly userId?: string
  readonly status: number
  readonly session?: string
}

const probe = async (world: World, model: Model, credential: Credential): Promise<Probe> => {
  if (credential.kind === "password") {
    const email = model.accounts.get(credential.account)?.email
    if (email === undefined) return { works: false, status: 0 }
    const signedIn = await Http.request(world.url, "POST", "/v1/auth/sign-in", { body: { email, password: credential.secret } })
    if (signedIn.status !== 200) return { works: false, status: signedIn.status }
    const answered = Http.expectStatus<typeof AuthResult.Encoded>("sign-in", signedIn, 200)
    return { works: true, status: 200, userId: answered.user.id, session: answered.session.token }
  }
  const me = await Http.request(world.url, "GET", "/v1/me", credential.kind === "session" ? { token: credential.secret } : { apiKey: credential.secret })
  return me.status === 200 ? { works: true, status: 200, userId: Http.expectStatus<typeof Me.Encoded>("me", me, 200).user.id } : { works: false, status: me.status }
}

/** The organizations a session of an account acts for (none when it may not list them). */
const organizationsOf = async (world: World, session: string) => {
  const page = await Http.request(world.url, "GET", "/v1/me/organizations?limit=100", { token: session })
  return page.status === 200 ? Http.expectStatus<typeof MyOrganizationPage.Encoded>("my organizations", page, 200).items.map((item) => item.organization.id) : []
}

/**
 * The rule, checked against the server after every step: each credential the model says was revoked answers no
 * more, and each that still works reaches the very account it was made for, which its holder owns (or, for a password
 * an organization's owner set, which that organization alone holds).
 */
export const checkRule = async (world: World, model: Model) => {
  for (const credential of model.credentials) {
    if (credential.ended === true) continue
    const reached = await probe(world, model, credential)
    if (!reached.works) {
      // A session or password the server ended early stays ended (an API key may only be paused: its organization
      // deleted); one the model revoked is tried after every step, for it must never work again.
      if (credential.revoked === undefined && credential.kind !== "API key") credential.ended = true
      continue
    }
    if (credential.revoked !== undefined) {
      throw new RuleBroken(model, `${describeCredential(model, credential)} still works (reaching ${describeAccount(model, reached.userId!)}), though it must have ended when ${credential.revoked}`)
    }
    if (reached.userId !== credential.account) {
      throw new RuleBroken(model, `${describeCredential(model, credential)} reached another account, ${describeAccount(model, reached.userId!)}`)
    }
    if (credential.heldFor !== undefined) {
      const elsewhere = (await organizationsOf(world, reached.session!)).filter((id) => id !== credential.heldFor)
      if (elsewhere.length > 0) {
        const names = elsewhere.map((id) => model.organizations.find((organization) => organization.id === id)?.label ?? id)
        throw new RuleBroken(model, `${describeCredential(model, credential)} still works though the account has joined ${names.join(", ")} since: a password an organization's owner set reaches what the person holds elsewhere`)
      }
      continue
    }
    const account = model.accounts.get(credential.account)!
    if (account.owner !== credential.holder) {
      throw new RuleBroken(model, `${describeCredential(model, credential)} still works, but the account is ${account.owner}'s`)
    }
  }
}
