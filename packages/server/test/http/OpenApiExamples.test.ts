/**
 * The documented examples against the running server: every operation's example request (its body, query and path
 * parameters as the served OpenAPI document shows them) is not refused by decoding, nor answered with a 5xx. The ids
 * of the examples stand for real resources of a fresh organization where there are some: its owner, admin and member
 * for the example people, and what the create operations' own examples made for the ids their documented answers
 * show. The links of those answers lead to the resources made. Generic over the document.
 */
import {
  type AuditAction,
  AuditActions,
  type CreatedScimToken,
  Examples,
  InvalidRequestResponse,
  OpenApiLinks,
  type ScimConnectionResponse
} from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import type * as OpenApi from "../../../../packages/testkit/src/OpenApiDocument.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

interface Operation {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly operation: OpenApi.Operation
}

interface Sent {
  readonly operation: Operation
  readonly path: string
  /** The JSON body sent, if any. */
  readonly body?: unknown
  readonly response: Http.RawResponse
}

/**
 * Refusals the document cannot promise against: checks of what only the server knows, made after decoding, with a
 * 400 on the member (a `code` marks the others). Each is the example being right and the world being different.
 */
const semantic: ReadonlyArray<{ readonly operation: string; readonly path: string; readonly message: RegExp }> = [
  // The example's password is not the test account's.
  { operation: "users.changePassword", path: "currentPassword", message: /^is not the account's current password$/ },
  { operation: "users.changeEmail", path: "password", message: /^is not the account's current password$/ },
  { operation: "account.delete", path: "password", message: /^is not the account's current password$/ },
  // The example MCP server is on the internet, which the tests cannot reach: its host does not resolve.
  { operation: "mcpConnections.create", path: "url", message: /^The outbound URL is not allowed: .* could not be resolved$/ },
  // The same for the example audit stream's endpoint.
  { operation: "auditStreams.create", path: "url", message: /^The outbound URL is not allowed: .* could not be resolved$/ },
  // And for the example worker runtime's URL, checked at registration.
  { operation: "workerRuntime.registerInstance", path: "url", message: /^The outbound URL is not allowed: .* could not be resolved$/ },
  // The update's example renamed Acme before: its deletion, confirmed with the old name, leaves the organization every
  // other example uses (were it deleted, the examples after it would answer 404, loudly).
  { operation: "organizations.delete", path: "confirmName", message: /^is not this organization's name/ }
]

let server: TestServer.RunningServer
let document: OpenApi.Document
let operations: ReadonlyArray<Operation>
let staff: Awaited<ReturnType<typeof Http.staffed>>
/** The caller: the owner, whose session an example (signing out, creating an organization) may end or move. */
let token: string
let workerToken: string
/** The directory the SCIM protocol's examples are sent as: a connection of the organization and a token of it. */
let directory: { readonly connectionId: string; readonly token: string }

/**
 * The same for the SCIM protocol, whose reader refuses with a SCIM error body (`{schemas, status, scimType, detail}`,
 * without member paths) rather than `invalid_request`.
 */
const scimSemantic: ReadonlyArray<{ readonly operation: RegExp; readonly scimType: string; readonly detail: RegExp }> = [
  // The Users examples deprovision Alan (their delete) before the Groups examples name him as a member again.
  { operation: /^scimGroups\.(replace|patch)$/, scimType: "invalidValue", detail: /is not a User of this SCIM connection/ }
]

/** Example ids (and the other example values that name things) → what stands for them on this server. */
const real = new Map<string, string>()
/**
 * For SCIM operations, first: example ids → what the directory's SCIM creates made for them (the directory's Alan is
 * the User it provisioned, not the member `real` has for him).
 */
const provisioned = new Map<string, string>()

beforeAll(async () => {
  // Enterprise, for the desktop policies and SSO; a webhook secret, so a delivery without a signature is a 401.
  server = await TestServer.start({ defaultPlan: "enterprise", codehostWebhookSecret: "examples-webhook-secret" })
  staff = await Http.staffed(server.url)
  token = staff.owner.token
  const response = await Http.request(server.url, "GET", "/openapi.json")
  document = Http.expectStatus<OpenApi.Document>("the document", response, 200)
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ id: operation.operationId, method: method.toUpperCase(), path, operation }))
  )
  real.set(Examples.acme.id, staff.organizationId)
  // The example setup token stands for the one this server was started with: its example makes the owner's
  // organization the operator (before the operator's own examples, which come after it in the document).
  real.set(Examples.exampleToken("opsetup"), Http.SETUP_TOKEN)
  for (const [person, joined] of [[Examples.ada, staff.owner], [Examples.grace, staff.admin], [Examples.alan, staff.member]] as const) {
    real.set(person.userId, joined.user.id)
    real.set(person.membershipId, joined.membership.id)
  }
  const worker = await Http.request(server.url, "POST", "/v1/workers", { token, body: { name: "runtime", destination: "local" } })
  workerToken = Http.expectStatus<{ token: string }>("register a worker", worker, 201).token
  // Its own connection, not the one the management examples make (and then delete, with their token).
  const connection = await Http.request(server.url, "POST", "/v1/scim/connections", { token, body: { name: "Examples directory" } })
  const connectionId = Http.expectStatus<typeof ScimConnectionResponse.Encoded>("create a SCIM connection", connection, 201).connection.id
  const issued = await Http.request(server.url, "POST", `/v1/scim/connections/${connectionId}/tokens`, { token, body: { name: "examples" } })
  directory = { connectionId, token: Http.expectStatus<typeof CreatedScimToken.Encoded>("create a SCIM token", issued, 201).token }
})
afterAll(() => server.close())

// --- Requests from the document -----------------------------------------------------------------------------------

const firstExample = (holder: { readonly examples?: Readonly<Record<string, OpenApi.Example>> } | undefined): unknown =>
  Object.values(holder?.examples ?? {})[0]?.value

/** `value` with every example id that stands for a real one replaced by it (`scim`: a provisioned one first). */
const substitute = (value: unknown, scim = false): unknown => {
  if (typeof value === "string") return (scim ? provisioned.get(value) : undefined) ?? real.get(value) ?? value
  if (Array.isArray(value)) return value.map((item) => substitute(item, scim))
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, scim)]))
  return value
}

/** A SCIM protocol operation: a directory's, with a token of the connection its path names. */
const isScim = (operation: Operation) => (operation.operation.security ?? []).some((scheme) => "scimToken" in scheme)

/** The owner's session, the runtime's token for worker operations, the directory's for SCIM, nothing where optional. */
const credentials = (operation: Operation): Http.Options => {
  const schemes = operation.operation.security ?? []
  if (schemes.length === 0 || schemes.some((scheme) => Object.keys(scheme).length === 0)) return {}
  if (schemes.some((scheme) => "workerToken" in scheme)) return { token: workerToken }
  if (isScim(operation)) return { token: directory.token }
  return { token }
}

/** The operation's documented example request, sent as the owner (or the runtime, or the directory). */
const send = async (operation: Operation): Promise<Sent> => {
  const parameters = operation.operation.parameters ?? []
  // The example connection of a SCIM path stands for the directory's (the management examples' one is deleted).
  const scim = isScim(operation)
  const value = (p: OpenApi.Parameter) => (scim && p.name === "connectionId" ? directory.connectionId : substitute(firstExample(p), scim))
  const path = parameters.filter((p) => p.in === "path").reduce(
    (url, p) => url.replace(`{${p.name}}`, encodeURIComponent(String(value(p)))),
    operation.path
  )
  const query = new URLSearchParams(
    parameters.filter((p) => p.in === "query" && firstExample(p) !== undefined).map((p) => [p.name, String(substitute(firstExample(p)))])
  ).toString()
  const example = firstExample(operation.operation.requestBody?.content?.["application/json"])
  const body = example === undefined ? undefined : substitute(example, scim)
  // A form (the SAML ACS, posted by the IdP's auto-submitting page) travels form-encoded.
  const form = firstExample(operation.operation.requestBody?.content?.["application/x-www-form-urlencoded"]) as Record<string, string> | undefined
  const response = await Http.request(server.url, operation.method, query === "" ? path : `${path}?${query}`, {
    ...credentials(operation),
    ...(body === undefined ? {} : { body }),
    ...(form === undefined
      ? {}
      : { rawBody: new URLSearchParams(substitute(form) as Record<string, string>).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } })
  })
  // A SCIM create's answer: its id stands for the example's in the SCIM operations sent after it (in document order).
  const shown = Json.at(firstExample(operation.operation.responses?.["201"]?.content?.["application/scim+json"]), "id")
  const given = Json.at(response.body, "id")
  if (scim && response.status === 201 && typeof shown === "string" && typeof given === "string") provisioned.set(shown, given)
  return { operation, path, body, response }
}

/** Signing out ends the owner's session and creating an organization moves them into it: back to where they were. */
const restoreCaller = async () => {
  let me = await Http.request(server.url, "GET", "/v1/me", { token })
  if (me.status === 401) {
    const signedIn = await Http.request(server.url, "POST", "/v1/auth/sign-in", {
      body: { email: staff.owner.email, password: staff.owner.password }
    })
    token = Http.expectStatus<{ session: { token: string } }>("sign in again", signedIn, 200).session.token
    me = await Http.request(server.url, "GET", "/v1/me", { token })
  }
  if (Json.at(me.body, "organization", "id") !== staff.organizationId) {
    const switched = await Http.request(server.url, "POST", "/v1/me/active-organization", {
      token,
      body: { organizationId: staff.organizationId }
    })
    Http.expectStatus("switch back", switched, 200)
  }
}

/** What of a response says the example was refused for its form, semantic checks aside. */
const refusal = ({ operation, response }: Sent): string | undefined => {
  if (response.status >= 500) return `${response.status} ${response.text.slice(0, 300)}`
  if (response.status !== 400) return undefined
  if (isScim(operation) && response.headers.get("content-type")?.startsWith("application/scim+json")) {
    const detail = Json.at(response.body, "detail")
    const scimType = Json.at(response.body, "scimType")
    const semantic = scimSemantic.some((check) =>
      check.operation.test(operation.id) && check.scimType === scimType && typeof detail === "string" && check.detail.test(detail)
    )
    return semantic ? undefined : `400 ${response.text.slice(0, 300)}`
  }
  const details = detailsOf(response.body) ?? [{ message: response.text, path: [] }]
  const refused = details.filter((detail) =>
    !("code" in detail) &&
    !semantic.some((check) => check.operation === operation.id && check.path === detail.path.join(".") && check.message.test(detail.message))
  )
  return refused.length === 0 ? undefined : `400 ${JSON.stringify(refused)}`
}

const pointerGet = (value: unknown, pointer: string): unknown =>
  pointer.split("/").slice(1).map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, token) => (typeof node === "object" && node !== null ? Reflect.get(node, token) : undefined), value)

/** An `invalid_request` body, each refused member in `details`. */
const isInvalidRequest = Schema.is(Schema.toEncoded(InvalidRequestResponse))

/** The refused members of an `invalid_request` body, undefined for any other body. */
const detailsOf = (body: unknown) => (isInvalidRequest(body) ? body.details : undefined)

/** The audit action an operation declares (`x-orgplane-audit`): false for none, undefined where it declares nothing. */
const declaredAction = (operation: OpenApi.Operation): AuditAction | false | undefined => {
  const declared = operation["x-orgplane-audit"]
  if (declared === undefined) return undefined
  const action = Json.at(declared, "action")
  if (action === false) return false
  if (!isAuditAction(action)) throw new Error(`${operation.operationId} declares no action of the catalog: ${JSON.stringify(declared)}`)
  return action
}
const isAuditAction = (value: unknown): value is AuditAction => typeof value === "string" && value in AuditActions

/** What a create answers: JSON, or a SCIM resource (`application/scim+json`). */
const createdMedia = (operation: OpenApi.Operation): OpenApi.MediaType | undefined =>
  operation.responses?.["201"]?.content?.["application/json"] ?? operation.responses?.["201"]?.content?.["application/scim+json"]

const createsOf = () => operations.filter(({ operation }) => createdMedia(operation) !== undefined)

// --- The checks ---------------------------------------------------------------------------------------------------

describe("the documented examples", () => {
  const created = new Map<string, Sent>()
  const results: Array<Sent> = []
  const followed: Array<{ readonly what: string; readonly status: number }> = []

  /** The GET operations a create's answer links to, with their parameters from the answer and the request. */
  const follow = async ({ operation: create, path, response }: Sent) => {
    const answers: Array<{ what: string; status: number }> = []
    for (const link of Object.values(create.operation.responses?.["201"]?.links ?? {})) {
      const target = operations.find((operation) => operation.id === link.operationId)!
      if (target.method !== "GET") continue
      const url = Object.entries(link.parameters ?? {}).map(([name, expression]) => [name, Json.string(expression, `${create.id}'s link ${name}`)] as const).reduce((at, [name, expression]) => {
        const fromBody = /^\$response\.body#(\/.*)$/.exec(expression)?.[1]
        const fromPath = /^\$request\.path\.(\w+)$/.exec(expression)?.[1]
        const value = fromBody !== undefined
          ? pointerGet(response.body, fromBody)
          : decodeURIComponent(path.split("/")[create.path.split("/").indexOf(`{${fromPath}}`)]!)
        return at.replace(`{${name}}`, encodeURIComponent(String(value)))
      }, target.path)
      const answer = await Http.request(server.url, "GET", url, credentials(target))
      answers.push({ what: `${create.id} → ${target.id} (GET ${url}): ${answer.status} ${answer.text.slice(0, 200)}`, status: answer.status })
    }
    return answers
  }

  it("of the create operations make what their answers show, and the links lead to it", async () => {
    // Until no more succeed: a grant's example needs the team another example creates.
    const attempts = new Map<string, Sent>()
    let pending = createsOf()
    for (let round = 0; round < 5 && pending.length > 0; round++) {
      const failed: Array<Operation> = []
      for (const operation of pending) {
        const sent = await send(operation)
        attempts.set(operation.id, sent)
        if (sent.response.status !== 201) {
          failed.push(operation)
          await restoreCaller()
          continue
        }
        created.set(operation.id, sent)
        // Right away, as a client chaining them would: an organization's membership is read in it, as its creator.
        followed.push(...(await follow(sent)))
        await restoreCaller()
        // The example ids the documented answer shows stand for the ones this answer gives.
        const media = createdMedia(operation.operation)!
        for (const { pointer } of OpenApiLinks.createdIds(document, media.schema)) {
          const shown = pointerGet(firstExample(media), pointer)
          const given = pointerGet(sent.response.body, pointer)
          if (typeof shown === "string" && typeof given === "string" && !real.has(shown)) real.set(shown, given)
        }
      }
      if (failed.length === pending.length) break
      pending = failed
    }
    results.push(...attempts.values())
    // What the examples make: most of the API's resources, on a server without the third parties.
    expect([...created.keys()]).toEqual(
      expect.arrayContaining(["teams.create", "plugins.create", "configObjects.create", "workers.register", "scimUsers.create", "scimGroups.create"])
    )
    // Found: not a 404 (nor a refused id). Operations that go on to a third party may answer that it is not there
    // (`codehost_not_configured`), having found the resource.
    const lost = followed.filter(({ status }) => status === 404 || status === 400 || status >= 500)
    expect(lost.map(({ what }) => what)).toEqual([])
    expect(followed.filter(({ status }) => status === 200).length).toBeGreaterThan(20)
  })

  it("are not refused by decoding, nor answered with a server error", async () => {
    for (const operation of operations) {
      if (results.some((sent) => sent.operation.id === operation.id)) continue
      results.push(await send(operation))
      await restoreCaller()
    }
    const offenders = results.flatMap((sent) => {
      const problem = refusal(sent)
      return problem === undefined ? [] : [`${sent.operation.id} (${sent.operation.method} ${sent.path}): ${problem}`]
    })
    expect(offenders).toEqual([])
    expect(results.length).toBe(operations.length)
    // The directory's token opens every SCIM operation: its examples were read, not turned away at the door.
    const scim = results.filter((sent) => isScim(sent.operation))
    expect(scim.length).toBeGreaterThan(10)
    expect(scim.filter(({ response }) => response.status === 401 || response.status === 403).map(({ path }) => path)).toEqual([])
  })

  it("that change something record exactly one audit event each, of the action their operation declares, by their caller, naming their path's resources and at least one target", async () => {
    const missing: Array<string> = []
    let checked = 0
    for (const { operation, path, response } of results) {
      const declared = declaredAction(operation.operation)
      if (declared === undefined || declared === false || response.status >= 300) continue
      if (elsewhere.has(operation.id)) continue
      const requestId = response.headers.get("x-request-id")!
      const events = await Http.request(server.url, "GET", `/v1/audit/events?requestId=${requestId}`, { token })
      const items = Http.expectStatus<{ items: Array<{ action: string; actor: { type: string; id: string }; targets: Array<{ id: string }> }> }>("audit", events, 200).items
      const actions = items.map((event) => event.action)
      checked++
      if (actions.length !== 1 || actions[0] !== declared) {
        missing.push(`${operation.id} (${operation.method} ${path}, ${response.status}): ${JSON.stringify(actions)} instead of ["${declared}"]`)
        continue
      }
      // The caller the example was sent as, and every resource its path names.
      const [event] = items
      const credential = credentials(operation)
      const actor = credential.token === workerToken ? "worker" : isScim(operation) ? "scim" : "user"
      if (event!.actor.type !== actor || (actor === "user" && event!.actor.id !== staff.owner.user.id)) {
        missing.push(`${operation.id}: actor ${JSON.stringify(event!.actor)} instead of the ${actor} that sent it`)
      }
      const named = path.split("/").map(decodeURIComponent).filter((part) => /^[a-z]{2,3}_[0-9a-z]{26}$/.test(part))
      const absent = named.filter((id) => !event!.targets.some((target) => target.id === id))
      if (absent.length > 0) missing.push(`${operation.id} (${path}): targets ${JSON.stringify(event!.targets)} lack ${absent.join(", ")}`)
      // Its subject, so that `targetId` finds it: none only for the actions that have none.
      const action: AuditAction = declared
      if ((event!.targets.length === 0) !== (withoutTarget[action] !== undefined)) {
        missing.push(`${operation.id} (${path}): targets ${JSON.stringify(event!.targets)} for ${action}`)
      }
      targeted.add(action)
    }
    expect(missing).toEqual([])
    expect(checked).toBeGreaterThan(60)
  })

  it("leave no action of the catalog unchecked for its target: here, by its path, or in the test listed for it", () => {
    // An operation with path parameters names their values in every event of its action (Audit.test.ts).
    const byPath = new Set<unknown>(
      operations.filter(({ operation }) => (operation.parameters ?? []).some((parameter) => parameter.in === "path"))
        .map(({ operation }) => declaredAction(operation))
    )
    const unchecked = Object.keys(AuditActions).filter((action) =>
      !targeted.has(action) && !byPath.has(action) && !(action in targetsCheckedElsewhere) && !(action in withoutTarget)
    )
    expect(unchecked).toEqual([])
    // The lists say no more than they must.
    expect(Object.keys(targetsCheckedElsewhere).filter((action) => targeted.has(action) || byPath.has(action))).toEqual([])
    expect(Object.keys(withoutTarget)).toEqual(["mcp_connection.resolve"])
  })

  it("never put a secret they sent or were given into the audit log", async () => {
    // Every value under a secret's name in what the examples sent and what they were answered: passwords, API
    // keys and tokens handed out once, client secrets, provider credentials.
    const secrets = new Set<string>()
    const collect = (value: unknown, name = ""): void => {
      if (typeof value === "string") {
        if (secretName.test(name) && value.length >= 8) secrets.add(value)
      } else if (Array.isArray(value)) {
        for (const item of value) collect(item, name)
      } else if (typeof value === "object" && value !== null) {
        // A provider's extra headers are secrets whatever their names.
        for (const [key, inner] of Object.entries(value)) collect(inner, name === "headers" ? "secret" : key)
      }
    }
    for (const { body, response } of results) {
      collect(body)
      collect(response.body)
    }
    expect(secrets.size).toBeGreaterThan(5)
    const exported = await Http.request(server.url, "GET", "/v1/audit/export?format=ndjson", { token })
    expect(exported.status).toBe(200)
    expect(exported.text.split("\n").length).toBeGreaterThan(60)
    expect([...secrets].filter((secret) => exported.text.includes(secret))).toEqual([])
  })
})

/** The names under which a value is a secret. */
const secretName = /(secret|password|passphrase|token|apiKey|^key|privateKey|credential)$/i

/** The actions whose events the examples checked for a target. */
const targeted = new Set<string>()

/**
 * Actions whose events name no target, with why: nothing stored is their subject. Every other action names at
 * least one, so `GET /v1/audit/events?targetId=` finds its events.
 */
const withoutTarget: Readonly<Partial<Record<AuditAction, string>>> = {
  "mcp_connection.resolve": "a free-form query (a URL, a host, a product name) resolved to an MCP server; nothing is stored, nothing is its subject"
}

/**
 * Actions the examples cannot complete here (a third party, a second person, a background job) and whose operations
 * have no path ids: where their target is checked instead.
 */
const targetsCheckedElsewhere: Readonly<Partial<Record<AuditAction, string>>> = {
  "session.create": "Audit.test.ts: records a sign-in in the organization the session acts in",
  "organization.create": "Audit.test.ts: records a new organization in its own log",
  "user.password.change": "Audit.test.ts: names the subject of an action that has no path id",
  "user.email.change": "AccountLifecycle.test.ts: is recorded, old and new address, in the person's organizations' audit log",
  "invitation.accept": "Audit.test.ts: names the subject of an action that has no path id",
  "audit.retention.apply": "Audit.test.ts: keeps 365 days unless an owner sets another",
  "workspace.bootstrap": "Identity.test.ts: a claim makes the person a member with its role",
  "workspace.claim.accept": "Identity.test.ts: a claim makes the person a member with its role",
  "sso.domain.verify": "Sso.test.ts: verifies the domain when the TXT record is published",
  "sso.policy.update": "SsoEnforcement.test.ts",
  "mcp_connection.create": "McpConnections.test.ts",
  "audit.stream.create": "AuditStreams.test.ts",
  "capability.mail_draft.create": "Capabilities.test.ts: creates a draft, never sent",
  "connector_sync.complete": "ConnectorSync.test.ts: materializes mapped files",
  "worker.instance.register": "Workers.test.ts: are driven by their runtime's token",
  "user.password.reset": "PasswordReset.test.ts: an owner's link sets the member's password once (the example's token was never issued)",
  "user.email.verify": "RecoveryMail.test.ts: mails a link to the person's own address (the example's token was never issued)",
  "user.reclaim": "SsoAccountTakeover.test.ts: ends another organization's identity link (the take-back's record names the account)",
  "organization.purge": "OrganizationPurge.test.ts: the record in the operator organization's log names the purged organization",
  "organization.document.apply": "OrganizationDocument.test.ts: makes the reviewed plan in one go (the example's plan hash is of another organization's state)",
  "organization.document.drift": "OrganizationDocument.test.ts: names each field changed outside it (the drift job records it; no operation does)"
}

/** Operations whose event is not in the caller's organization's log (Audit.test.ts checks them). */
const elsewhere = new Set([
  // The example's person (whom the sign-up example made) belongs to no organization: no log records it.
  "users.signIn",
  // Recorded in the organization it creates.
  "organizations.create",
  // A new workspace's own log.
  "bootstrap.workspace",
  "bootstrap.acceptClaim"
])
