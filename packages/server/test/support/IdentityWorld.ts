/**
 * The world the account-ownership model (test/http/AccountOwnershipModel.test.ts) acts on: one server, the instance's
 * operator, and two enterprise organizations on verified domains of the DNS fake, A signing in through a real OpenID
 * Provider (IdpOidc) and B through a real SAML IdP (IdpSaml), each with an active connection and a SCIM directory;
 * the server mails recovery and verification links to a FakeSmtp. People are registered at the IdP of their
 * address's domain, so "signing in through SSO" is the person's own identity at their employer's provider.
 */
import type {
  AuthResult,
  CreatedApiKey,
  DomainVerificationResponse,
  OrganizationWithMembership,
  SsoConnectionResponse,
  StartedSsoSignIn,
  StartedSsoTest
} from "@orgplane/schema"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import * as FakeSmtp from "../../../../packages/testkit/src/FakeSmtp.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../../packages/testkit/src/IdpOidc.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as TestServer from "./HttpServer.js"

const OIDC_SECRET = "oidc-client-secret-value"
const ADMIN_PASSWORD = "correct horse battery"
/** How long a mail the server was asked for may take to arrive before the model takes it that none is coming. */
const MAIL_WAIT_MILLIS = 5_000

export type OrganizationLabel = "A" | "B"

/** One of the two organizations: its owner's session acts in it (`World.asOwner` makes it the active one again). */
export interface Organization {
  readonly label: OrganizationLabel
  readonly id: string
  readonly name: string
  readonly domain: string
  readonly protocol: "oidc" | "saml"
  readonly ownerToken: string
  /** An API key its owner made with the default scopes (a script's, say): it may invite members. */
  readonly ownerApiKey: string
  /** Its SCIM directory: the base path and the bearer token the directory sends. */
  readonly scim: { readonly base: string; readonly token: string }
}

/** An SSO sign-in's outcome: the account it landed in with a session, or the refusal. */
export type SsoOutcome =
  | { readonly _tag: "SignedIn"; readonly userId: string; readonly email: string; readonly token: string }
  | { readonly _tag: "Refused"; readonly status: number; readonly reason: string }

export interface World {
  readonly url: string
  readonly organizations: Readonly<Record<OrganizationLabel, Organization>>
  /** A session of the instance's operator (an owner of the operator organization). */
  readonly operatorToken: string
  /** The organization a verified domain belongs to, for an email of it. */
  readonly organizationOf: (email: string) => Organization | undefined
  /** Registers the person owning `email` at the IdP of its domain's organization (none for other domains). */
  readonly addIdentity: (email: string) => void
  /** The person owning `email` signs in through SSO, at the IdP of its domain, as themselves. */
  readonly ssoSignIn: (email: string) => Promise<SsoOutcome>
  /** A SCIM request as the organization's directory sends it. */
  readonly scim: (organization: Organization, method: string, path: string, body?: unknown) => Promise<Http.RawResponse>
  /** Makes the organization its owner's session's active one again (after a deletion and restore). */
  readonly asOwner: (organization: Organization) => Promise<string>
  /**
   * The newest link (`opr_…` reset, `opv_…` verification, `opi_…` invitation) mailed to `address` that no call took yet, waited for;
   * undefined when none came (the server decided to send none).
   */
  readonly mailedToken: (address: string, prefix: "opr" | "opv" | "opi") => Promise<string | undefined>
  readonly close: () => Promise<void>
}

/** The member of a JSON answer at `path` (undefined where a step is missing): for answers read whatever they are. */
export const memberAt = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((at, key) => (typeof at === "object" && at !== null ? Reflect.get(at, key) : undefined), value)

const unique = () => Math.random().toString(36).slice(2, 8)

/** What the browser posts to a SAML ACS, posted: the JSON answer. */
const postAcs = async (acs: IdpSaml.AcsPost) => {
  const response = await fetch(acs.acsUrl, { method: "POST", body: new URLSearchParams(acs.form), redirect: "manual" })
  const text = await response.text()
  let body: Http.RawResponse["body"] = undefined
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, body, text }
}

/** Starts the server, the IdPs, the DNS fake and the mail server, and sets up both organizations. */
export const start = async (options: TestServer.Options = {}): Promise<World> => {
  const dns = await FakeDns.start()
  const smtp = await FakeSmtp.start()
  const server = await TestServer.start({
    defaultPlan: "enterprise",
    dnsServers: dns.address,
    outboundAllowPrivate: true,
    smtpUrl: smtp.url,
    mailFrom: "orgplane <no-reply@orgplane.test>",
    // The model signs in, fails to and recovers hundreds of times from loopback: no throttle may decide for it.
    signInFailuresPerAccountAndAddress: 1_000_000,
    signInFailuresPerAccount: 1_000_000,
    signInFailuresPerAddress: 1_000_000,
    recoveryMailsPerEmail: 1_000_000,
    organizationsPerUser: 1_000,
    apiKeysPerMember: 1_000,
    pendingInvitationsPerOrganization: 100_000,
    trustProxy: true,
    ...options
  })
  const oidc = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: OIDC_SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
  const saml = await IdpSaml.start()
  const { post } = Http.verbs(() => server.url)

  let subjects = 0
  const identities = new Map<string, "oidc" | "saml">()
  const register = (email: string, protocol: "oidc" | "saml") => {
    if (identities.has(email)) return
    identities.set(email, protocol)
    if (protocol === "oidc") oidc.addAccount(email, { sub: `subject-${++subjects}`, email, email_verified: true, name: `Person ${subjects}` })
    else saml.addUser(email, { email, name: `Person ${email.split("@")[0]}` })
  }

  /** The owner signs up with an address of the domain, creates the organization and verifies the domain. */
  const owned = async (label: OrganizationLabel, protocol: "oidc" | "saml") => {
    const domain = `${label.toLowerCase()}-${unique()}.test`
    const email = `owner@${domain}`
    register(email, protocol)
    const token: string = Http.expectStatus<typeof AuthResult.Encoded>("owner sign-up", await post("/v1/auth/sign-up", { body: { email, password: ADMIN_PASSWORD, name: `Owner ${label}` } }), 201).session.token
    const name = `Organization ${label}`
    const id: string = Http.expectStatus<typeof OrganizationWithMembership.Encoded>("organization", await post("/v1/organizations", { token, body: { name } }), 201).organization.id
    const record = Http.expectStatus<typeof DomainVerificationResponse.Encoded>("verification record", await post(`/v1/sso/request-domain-verification?domain=${domain}`, { token }), 200).verification
    dns.setTxt(record.recordName, [record.recordValue])
    Http.expectStatus("verify domain", await post(`/v1/sso/verify-domain?domain=${domain}`, { token }), 200)
    return { label, domain, email, token, name, id }
  }

  const scimOf = async (token: string) => {
    const directory = await Http.scimDirectory(server.url, token, { defaultRole: "admin" })
    return { base: directory.base, token: directory.token }
  }

  // A: OpenID Connect, tested by its owner and activated.
  const a = await owned("A", "oidc")
  const oidcConnection: string = Http.expectStatus<typeof SsoConnectionResponse.Encoded>("OIDC connection", await post("/v1/sso/connections", {
    token: a.token,
    body: { kind: "oidc", name: "A's IdP", domains: [a.domain], oidc: { issuer: oidc.issuer, clientId: "orgplane", clientSecret: OIDC_SECRET } }
  }), 201).connection.id
  const oidcTest = Http.expectStatus<typeof StartedSsoTest.Encoded>("OIDC test", await post(`/v1/sso/connections/${oidcConnection}/tests`, { token: a.token }), 201)
  const tested = await Http.request((await oidc.signIn(oidcTest.authorizationUrl, { as: a.email })).url, "GET", "")
  if (memberAt(tested.body, "test", "status") !== "succeeded") throw new Error(`OIDC test: ${tested.text}`)
  Http.expectStatus("activate OIDC", await post(`/v1/sso/connections/${oidcConnection}/activate`, { token: a.token }), 200)

  // B: SAML, registered at the IdP by its SP metadata, tested through the ACS and activated.
  const b = await owned("B", "saml")
  const samlConnection = Http.expectStatus<typeof SsoConnectionResponse.Encoded>("SAML connection", await post("/v1/sso/connections", {
    token: b.token,
    body: { kind: "saml", name: "B's IdP", domains: [b.domain], saml: { source: "metadataUrl", url: saml.metadataUrl } }
  }), 201).connection
  saml.addServiceProvider({ metadata: await (await fetch(`${server.url}/v1/sso/saml/${samlConnection.id}/metadata`)).text() })
  const samlTest = Http.expectStatus<typeof StartedSsoTest.Encoded>("SAML test", await post(`/v1/sso/connections/${samlConnection.id}/tests`, { token: b.token }), 201)
  const samlTested = await postAcs(await saml.signIn(samlTest.authorizationUrl, { as: b.email }))
  if (memberAt(samlTested.body, "test", "status") !== "succeeded") throw new Error(`SAML test: ${samlTested.text}`)
  Http.expectStatus("activate SAML", await post(`/v1/sso/connections/${samlConnection.id}/activate`, { token: b.token }), 200)

  const keyOf = async (token: string): Promise<string> => Http.expectStatus<typeof CreatedApiKey.Encoded>("owner's API key", await post("/v1/api-keys", { token, body: { name: "invitations script" } }), 201).key
  const organizations: Record<OrganizationLabel, Organization> = {
    A: { label: "A", id: a.id, name: a.name, domain: a.domain, protocol: "oidc", ownerToken: a.token, ownerApiKey: await keyOf(a.token), scim: await scimOf(a.token) },
    B: { label: "B", id: b.id, name: b.name, domain: b.domain, protocol: "saml", ownerToken: b.token, ownerApiKey: await keyOf(b.token), scim: await scimOf(b.token) }
  }
  const operator = await Http.operator(server.url)

  const organizationOf = (email: string) => Object.values(organizations).find((organization) => email.endsWith(`@${organization.domain}`))

  // SSO sign-ins start from addresses of their own (behind the proxy the server trusts): the model starts more than
  // the 30 a minute one address may.
  let browsers = 0
  const ssoSignIn = async (email: string): Promise<SsoOutcome> => {
    const browser = ++browsers
    const address = `10.${(browser >> 16) & 255}.${(browser >> 8) & 255}.${browser & 255}`
    const started = await post("/v1/sso/sign-in", { body: { email }, headers: { "x-forwarded-for": address } })
    if (started.status !== 201) {
      return { _tag: "Refused", status: started.status, reason: String(memberAt(started.body, "code") ?? memberAt(started.body, "error") ?? started.text) }
    }
    const { authorizationUrl } = Http.expectStatus<typeof StartedSsoSignIn.Encoded>("SSO sign-in", started, 201)
    const protocol = identities.get(email)
    let answered: { status: number; body: unknown; text: string }
    if (protocol === "saml") answered = await postAcs(await saml.signIn(authorizationUrl, { as: email }))
    else answered = await Http.request((await oidc.signIn(authorizationUrl, { as: email })).url, "GET", "")
    const code = memberAt(answered.body, "code")
    if (typeof code !== "string") return { _tag: "Refused", status: answered.status, reason: String(code ?? memberAt(answered.body, "failure", "code") ?? answered.text) }
    const exchanged = await post("/v1/sso/sign-in/exchange", { body: { code } })
    if (exchanged.status !== 200) return { _tag: "Refused", status: exchanged.status, reason: exchanged.text }
    const signedIn = Http.expectStatus<typeof AuthResult.Encoded>("SSO exchange", exchanged, 200)
    return { _tag: "SignedIn", userId: signedIn.user.id, email: signedIn.user.email, token: signedIn.session.token }
  }

  const scim = (organization: Organization, method: string, path: string, body?: unknown) =>
    Http.request(server.url, method, `${organization.scim.base}${path}`, {
      token: organization.scim.token,
      headers: { "content-type": "application/scim+json" },
      ...(body === undefined ? {} : { body })
    })

  const asOwner = async (organization: Organization) => {
    const switched = await post("/v1/me/active-organization", { token: organization.ownerToken, body: { organizationId: organization.id } })
    if (switched.status !== 200) throw new Error(`the owner of ${organization.label} could not act in it: ${switched.status} ${switched.text}`)
    return organization.ownerToken
  }

  const taken = new Set<string>()
  const mailedToken = async (address: string, prefix: "opr" | "opv" | "opi") => {
    const pattern = new RegExp(`${prefix}_[A-Za-z0-9_-]{43}`, "g")
    const fresh = () => smtp.to(address).flatMap((mail) => mail.text.match(pattern) ?? []).filter((token) => !taken.has(token))
    // Mail leaves the server on a fiber of its own after the answer: waited for, up to a bound past which none is coming.
    const deadline = Date.now() + MAIL_WAIT_MILLIS
    while (fresh().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
    const token = fresh().at(-1)
    for (const seen of fresh()) taken.add(seen)
    return token
  }

  return {
    url: server.url,
    organizations,
    operatorToken: operator.token,
    organizationOf,
    addIdentity: (email) => {
      const organization = organizationOf(email)
      if (organization !== undefined) register(email, organization.protocol)
    },
    ssoSignIn,
    scim,
    asOwner,
    mailedToken,
    close: async () => {
      await server.close()
      await oidc.close()
      await saml.close()
      await smtp.close()
      await dns.stop()
    }
  }
}
