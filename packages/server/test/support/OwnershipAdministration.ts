/**
 * What the organizations and the instance do to the run's people in the account-ownership model
 * (test/http/AccountOwnershipModel.test.ts): the owners of A and B invite them, their directories provision,
 * deactivate, delete and reactivate them, owners and the operator issue reset links for them, and organizations are
 * deleted and restored. Provisioning is judged as it happens: the directory vouches for its person, so the account it
 * lands in is theirs from then on.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import type { AcceptedInvitation, CreatedInvitation, MemberPage, MemberResponse, RefreshedInvitation } from "@orgplane/schema"
import { memberAt, type OrganizationLabel, type World } from "./IdentityWorld.js"
import {
  describeAccount,
  type Link,
  type Model,
  type OrganizationState,
  ownerOfEmail,
  type Person,
  reestablish,
  revoke,
  RuleBroken
} from "./OwnershipModel.js"
import { addCredential, at, newPassword, nth, organizationLabel, request, sessionsOf, step, switchTo, tell, unusedLinks, usingReset, why } from "./OwnershipSteps.js"

const stateOf = (model: Model, label: OrganizationLabel) => model.organizations.find((organization) => organization.shared === label)!

// Invitations

/** Accepts an invitation by signing up (a new account of the person's) or signed in to an account with its address. */
const accepting = async (model: Model, world: World, person: Person, link: Link, how: "signUp" | "signedIn", sessionPick: number) => {
  const label = organizationLabel(model, link.organization!)
  if (how === "signUp") {
    const password = newPassword()
    const answered = await request(world, "POST", "/v1/invitations/accept", { body: { token: link.token, signUp: { name: `${person} ${model.run}`, password } } })
    const accepted = answered.status === 200 ? Http.expectStatus<typeof AcceptedInvitation.Encoded>("accepting", answered, 200) : undefined
    tell(model, `${person} accepts ${label}'s invitation to ${link.email} by signing up: ${answered.status}${accepted !== undefined ? ` → account ${accepted.user.id}` : why(answered)}`)
    if (accepted === undefined) return
    link.used = true
    const id: string = accepted.user.id
    if (model.accounts.has(id)) throw new RuleBroken(model, `accepting by signing up answered an account that existed before, ${describeAccount(model, id)}`)
    const made = `${person}'s signUp accepting ${label}'s invitation`
    model.accounts.set(id, { id, email: accepted.user.email, owner: person, made })
    if (accepted.session === null) throw new Error(`accepting by signing up answered no session: ${answered.text}`)
    addCredential(model, { kind: "session", holder: person, account: id, secret: accepted.session.token, made })
    addCredential(model, { kind: "password", holder: person, account: id, secret: password, made })
    return
  }
  const fitting = sessionsOf(model, person).filter((session) => model.accounts.get(session.account)?.email.toLowerCase() === link.email!.toLowerCase())
  const session = at(fitting, sessionPick)
  if (session === undefined) return tell(model, `${person} has no session of an account with ${link.email} to accept ${label}'s invitation in`)
  const answered = await request(world, "POST", "/v1/invitations/accept", { token: session.secret, body: { token: link.token } })
  tell(model, `${person} accepts ${label}'s invitation signed in to ${session.account}: ${answered.status}${answered.status === 200 ? "" : why(answered)}`)
  if (answered.status === 200) link.used = true
}

/**
 * The owner of A or B invites the person's address, from their session or their script's API key. A mailed invitation
 * reaches the address's mailbox alone, whose owner accepts it now or later; a shown one's token is the inviter's, who
 * sends it on to someone: the address's owner as a rule, but whoever they choose (a squatter of the address, say: an
 * inviter's mistake, or a leaked key's holder).
 */
export const invite = (
  label: OrganizationLabel,
  person: Person,
  role: "member" | "admin",
  by: "session" | "key",
  delivery: "mailed" | "shown",
  sendTo: Person,
  then: "signUp" | "signedIn" | "later"
) => {
  const recipient = delivery === "mailed" ? person : sendTo
  return step(
    `the owner of ${label} invites ${person}'s address as ${role} with their ${by === "key" ? "API key" : "session"}, ` +
      (delivery === "mailed" ? "mailed" : `shown and sent on to ${sendTo === person ? person : `${sendTo} instead`}`) +
      (then === "later" ? "" : ` where ${recipient} accepts it ${then === "signUp" ? "by signing up" : "signed in"}`),
    (model) => !stateOf(model, label).deleted,
    async (model, world) => {
      const organization = world.organizations[label]
      const email = model.emails[person]
      const credential = by === "key" ? { apiKey: organization.ownerApiKey } : { token: await world.asOwner(organization) }
      const answered = await request(world, "POST", "/v1/invitations", { ...credential, body: { email, role, delivery } })
      tell(model, `the owner of ${label} invites ${email} as ${role} with their ${by === "key" ? "API key" : "session"}, ${delivery}: ${answered.status}${answered.status >= 400 ? why(answered) : ""}`)
      if (answered.status !== 201 && answered.status !== 200) return
      const shown = (answered.status === 201
        ? Http.expectStatus<typeof CreatedInvitation.Encoded>("invitation", answered, 201)
        : Http.expectStatus<typeof RefreshedInvitation.Encoded>("refreshed invitation", answered, 200)).inviteToken
      if (delivery === "mailed" && shown !== null) throw new RuleBroken(model, `a mailed invitation's answer showed its token to the inviter`)
      const token = delivery === "shown" ? String(shown) : await world.mailedToken(email, "opi")
      if (token === undefined) return tell(model, `  (the invitation was not mailed to ${email})`)
      const link: Link = { kind: "invitation", holder: recipient, token, email, organization: organization.id, delivered: delivery === "mailed" ? "mailbox" : "issuer" }
      model.links.push(link)
      if (then !== "later") await accepting(model, world, recipient, link, then, 0)
    }
  )
}

export const acceptInvitation = (person: Person, pick: number, how: "signUp" | "signedIn", sessionPick: number) =>
  step(
    `${person} accepts their ${nth(pick)} invitation ${how === "signUp" ? "by signing up" : `signed in (${nth(sessionPick)} fitting session)`}`,
    (model) => unusedLinks(model, person, "invitation").length > 0,
    async (model, world) => accepting(model, world, person, at(unusedLinks(model, person, "invitation"), pick)!, how, sessionPick)
  )

// Directories

const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

const directoryUser = (model: Model, label: OrganizationLabel, person: Person) =>
  model.directory.find((user) => user.organization === label && user.person === person)

/** Whether the person's address is of the organization's domain: the people its directory provisions. */
const employee = (model: Model, label: OrganizationLabel, person: Person) =>
  model.emails[person].endsWith(`@${model.domains[label]}`)

export const provision = (label: OrganizationLabel, person: Person) =>
  step(
    `${label}'s directory provisions ${person}`,
    (model) => employee(model, label, person) && !stateOf(model, label).deleted && directoryUser(model, label, person) === undefined,
    async (model, world) => {
      const organization = world.organizations[label]
      const email = model.emails[person]
      const answered = await world.scim(organization, "POST", "/Users", {
        schemas: [USER_SCHEMA],
        userName: email,
        name: { givenName: person, familyName: model.run },
        emails: [{ value: email, type: "work", primary: true }],
        active: true
      })
      if (answered.status !== 201) return tell(model, `${label}'s directory provisions ${email}: ${answered.status}${why(answered)}`)
      // A SCIM resource: the protocol's document, not one of the API's schemas.
      const provisioned = Http.expectStatus<{ readonly id: string }>("the provisioned user", answered, 201).id
      const member = Http.expectStatus<typeof MemberResponse.Encoded>(
        "the provisioned member",
        await request(world, "GET", `/v1/members/${provisioned}`, { token: await world.asOwner(organization) }),
        200
      )
      const account = member.member.userId
      if (account == null) throw new RuleBroken(model, `${label}'s directory provisioned ${email} as member ${provisioned}, which has no account`)
      tell(model, `${label}'s directory provisions ${email}: 201 → member ${provisioned} of account ${account}`)
      model.directory.push({ organization: label, person, id: provisioned, account, active: true })
      const known = model.accounts.get(account)
      if (known === undefined) {
        model.accounts.set(account, { id: account, email, owner: person, made: `${label}'s directory provisioning ${person}` })
      } else if (known.owner !== person) {
        if (known.email.toLowerCase() !== email.toLowerCase()) {
          throw new RuleBroken(model, `${label}'s directory provisioned ${email} into ${describeAccount(model, account)}, whose address is another`)
        }
        // The directory vouches for the person: the account is theirs from now on (or the provisioning is refused).
        reestablish(model, account, person, `${label}'s directory provisioned ${person} into it`)
      }
    }
  )

export const deprovision = (label: OrganizationLabel, person: Person, how: "deactivate" | "delete") =>
  step(
    `${label}'s directory ${how === "delete" ? "deletes" : "deactivates"} ${person}`,
    (model) => !stateOf(model, label).deleted && directoryUser(model, label, person) !== undefined,
    async (model, world) => {
      const user = directoryUser(model, label, person)!
      const organization = world.organizations[label]
      const answered = how === "delete"
        ? await world.scim(organization, "DELETE", `/Users/${user.id}`)
        : await world.scim(organization, "PATCH", `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: "replace", value: { active: false } }] })
      tell(model, `${label}'s directory ${how}s ${user.id} (${person}): ${answered.status}`)
      if (answered.status !== 200 && answered.status !== 204) return
      revoke(model, user.account, `${label}'s directory ${how}d ${person}`, (credential) => credential.kind === "API key" && credential.organizationId === organization.id)
      if (how === "delete") model.directory.splice(model.directory.indexOf(user), 1)
      else user.active = false
    }
  )

export const reactivate = (label: OrganizationLabel, person: Person) =>
  step(
    `${label}'s directory reactivates ${person}`,
    (model) => !stateOf(model, label).deleted && directoryUser(model, label, person)?.active === false,
    async (model, world) => {
      const user = directoryUser(model, label, person)!
      const answered = await world.scim(world.organizations[label], "PATCH", `/Users/${user.id}`, { schemas: [PATCH_OP], Operations: [{ op: "replace", value: { active: true } }] })
      tell(model, `${label}'s directory reactivates ${user.id} (${person}): ${answered.status}`)
      if (answered.status === 200) user.active = true
    }
  )

// Reset links issued for someone

/**
 * A link issued for an account: shown to its issuer (or mailed by the server, which only its address's mailbox
 * reads). Sent on to the address, its user uses it now unless `later`.
 */
const issued = async (model: Model, world: World, account: string, answered: Http.RawResponse, keptBy: OrganizationLabel | undefined, later: boolean) => {
  const email = model.accounts.get(account)!.email
  // A mailed link's answer names no token (`token: null`): only the mailbox holds it.
  const answeredToken = memberAt(answered.body, "passwordReset", "token")
  const shown = typeof answeredToken === "string" ? answeredToken : undefined
  const token = shown ?? await world.mailedToken(email, "opr")
  if (token === undefined) return tell(model, `  (the link was neither shown nor mailed to ${email})`)
  const mailbox = ownerOfEmail(model, email)!
  const link: Link = shown !== undefined && keptBy !== undefined
    ? { kind: "reset", holder: `owner of ${keptBy}`, token, account, delivered: "issuer", organization: world.organizations[keptBy].id }
    : { kind: "reset", holder: mailbox, token, account, delivered: "mailbox" }
  model.links.push(link)
  if (!later) await usingReset(model, world, link.holder, link, false)
}

/** The owner of A or B issues a reset link for a member of the run, and sends it to the member's address or keeps it. */
export const ownerIssuesReset = (label: OrganizationLabel, pick: number, kept: boolean, later: boolean) =>
  step(
    `the owner of ${label} issues a reset link for their ${nth(pick)} member of the run and ${kept ? "keeps it" : "sends it to the member's address"}${later ? " for later" : kept ? " and uses it" : " where it is used"}`,
    (model) => !stateOf(model, label).deleted && model.accounts.size > 0,
    async (model, world) => {
      const organization = world.organizations[label]
      const token = await world.asOwner(organization)
      const page = Http.expectStatus<typeof MemberPage.Encoded>("members", await request(world, "GET", `/v1/members?q=${model.run}&limit=100`, { token }), 200)
      const members = page.items.filter((member) => member.userId != null && model.accounts.has(member.userId))
      const member = at(members, pick)
      if (member === undefined) return tell(model, `the owner of ${label} has no member of the run to reset`)
      const answered = await request(world, "POST", `/v1/members/${member.id}/password-reset`, { token })
      tell(model, `the owner of ${label} issues a reset link for ${describeAccount(model, member.userId!)}: ${answered.status}${answered.status === 201 ? "" : why(answered)}`)
      if (answered.status === 201) await issued(model, world, member.userId!, answered, kept ? label : undefined, later)
    }
  )

export const operatorIssuesReset = (pick: number, later: boolean) =>
  step(
    `the operator issues a reset link for the run's ${nth(pick)} account and sends it to its address${later ? " for later" : " where it is used"}`,
    (model) => model.accounts.size > 0,
    async (model, world) => {
      const account = at([...model.accounts.values()], pick)!
      const answered = await request(world, "POST", `/v1/admin/users/${account.id}/password-reset`, { token: world.operatorToken })
      tell(model, `the operator issues a reset link for ${describeAccount(model, account.id)}: ${answered.status}${answered.status === 201 ? "" : why(answered)}`)
      if (answered.status === 201) await issued(model, world, account.id, answered, undefined, later)
    }
  )

// Deleting and restoring organizations

/** A session of the organization's owner: A's or B's owner's, or a person's live session of the account owning it. */
const ownerSessionOf = (model: Model, world: World, state: OrganizationState) => {
  if (state.shared !== undefined) return world.organizations[state.shared].ownerToken
  const owner = state.owner
  return owner === undefined ? undefined : sessionsOf(model, owner.person).find((candidate) => candidate.account === owner.account)?.secret
}

export const deleteOrganization = (pick: number, by: "owner" | "operator") =>
  step(
    `the ${by} deletes the ${nth(pick)} organization`,
    (model) => model.organizations.some((organization) => !organization.deleted),
    async (model, world) => {
      const organization = at(model.organizations.filter((candidate) => !candidate.deleted), pick)!
      let answered: Http.RawResponse
      if (by === "operator") {
        answered = await request(world, "DELETE", `/v1/admin/organizations/${organization.id}`, { token: world.operatorToken })
      } else {
        const session = ownerSessionOf(model, world, organization)
        if (session === undefined || !(await switchTo(world, session, organization.id))) {
          return tell(model, `no session of ${organization.label}'s owner is left to delete it`)
        }
        answered = await request(world, "DELETE", "/v1/organization", { token: session, body: { confirmName: organization.name } })
      }
      tell(model, `the ${by} deletes ${organization.label}: ${answered.status}${answered.status === 200 ? "" : why(answered)}`)
      if (answered.status === 200) organization.deleted = true
    }
  )

export const restoreOrganization = (pick: number, by: "owner" | "operator") =>
  step(
    `the ${by} restores the ${nth(pick)} deleted organization`,
    (model) => model.organizations.some((organization) => organization.deleted),
    async (model, world) => {
      const organization = at(model.organizations.filter((candidate) => candidate.deleted), pick)!
      let answered: Http.RawResponse
      if (by === "operator") {
        answered = await request(world, "POST", `/v1/admin/organizations/${organization.id}/restore`, { token: world.operatorToken })
      } else {
        // A deleted organization is no session's active one: the owner's session restores it by its id.
        const session = ownerSessionOf(model, world, organization)
        if (session === undefined) return tell(model, `no session of ${organization.label}'s owner is left to restore it`)
        answered = await request(world, "POST", `/v1/organizations/${organization.id}/restore`, { token: session })
      }
      tell(model, `the ${by} restores ${organization.label}: ${answered.status}${answered.status === 200 ? "" : why(answered)}`)
      if (answered.status === 200) organization.deleted = false
    }
  )

/** A and B serve again after a run, whatever it did: the next run's people sign in through them. */
export const restoreShared = async (world: World) => {
  for (const organization of Object.values(world.organizations)) {
    const restored = await request(world, "POST", `/v1/admin/organizations/${organization.id}/restore`, { token: world.operatorToken })
    if (restored.status !== 200 && restored.status !== 409) throw new Error(`restoring ${organization.label} after the run: ${restored.status} ${restored.text}`)
    await world.asOwner(organization)
  }
}
