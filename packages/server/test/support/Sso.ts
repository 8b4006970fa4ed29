/**
 * The SSO area's services on a fresh migrated database, for SsoServices.test.ts and SsoSamlServices.test.ts: every
 * service of the area over its real dependencies (the outbound guard in private mode, so the IdPs on loopback are
 * reachable; the DNS resolver asking testkit's FakeDns), and enterprise organizations with an owner whose email is of
 * a domain of the test's choosing, seeded with SQL as the member middleware would resolve them.
 */
import {
  type MemberContext,
  Membership,
  MembershipId,
  Organization,
  OrganizationId,
  SessionId,
  User,
  UserId
} from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { typeid } from "typeid-js"
import type * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import { DnsConfig } from "../../src/integrations/dns/DnsConfig.js"
import { Resolver } from "../../src/integrations/dns/Resolver.js"
import * as AddressGuard from "../../src/platform/AddressGuard.js"
import { AuditRecorder } from "../../src/platform/AuditRecorder.js"
import * as Config from "../../src/platform/Config.js"
import * as Crypto from "../../src/platform/Crypto.js"
import { IdGenerator } from "../../src/platform/Ids.js"
import * as MonthlyPartitions from "../../src/platform/MonthlyPartitions.js"
import * as Outbound from "../../src/platform/Outbound.js"
import { IdentityLinksRepository } from "../../src/identity/IdentityLinksRepository.js"
import { IntentsRepository } from "../../src/sso/IntentsRepository.js"
import { Policy } from "../../src/sso/Policy.js"
import { Saml } from "../../src/sso/Saml.js"
import { SamlAcs } from "../../src/sso/SamlAcs.js"
import { SamlRefresh } from "../../src/sso/SamlRefresh.js"
import { SignIn } from "../../src/sso/SignIn.js"
import { Sso } from "../../src/sso/Sso.js"
import { SsoRepository } from "../../src/sso/SsoRepository.js"
import * as Db from "./IdentityDatabase.js"

/** The server's public base URL as the services are given it (the SP's URLs, the OIDC redirect URL). */
export const BASE = "http://127.0.0.1:9"

const KEYS = `test:${NodeCrypto.randomBytes(32).toString("base64")}`

/**
 * Every service of the area over the database, with the DNS servers `dns()` answers (read when the layer is built,
 * after the file's `beforeAll` started them).
 */
export const testLayer = (dns: () => FakeDns.FakeDns) => {
  const server = () => {
    const [host, port] = dns().address.split(":")
    return { host: host!, port: Number(port) }
  }
  const resolver = Resolver.layer.pipe(
    Layer.provide(Layer.unwrap(Effect.sync(() => Layer.succeed(DnsConfig, { servers: [server()], timeout: Duration.seconds(2) }))))
  )
  const platform = Layer.mergeAll(
    Layer.effect(Crypto.Crypto, Crypto.make({ passwordCost: 10, keys: Crypto.parseKeys(KEYS) })),
    Outbound.layer({ allowPrivate: true, timeout: "5 seconds" }).pipe(Layer.provide(AddressGuard.systemLayer)),
    Config.layer({ dataDir: "memory", outboundAllowPrivate: true }).pipe(
      Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
    ),
    IdGenerator.layer,
    resolver
  )
  // As the server composes them: SamlAcs over SignIn; SignIn, Policy and SamlRefresh over Sso; all over the engine.
  const services = SamlAcs.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(SignIn.layer, Policy.layer, SamlRefresh.layer)),
    Layer.provideMerge(Sso.layer),
    Layer.provideMerge(Layer.mergeAll(SsoRepository.layer, IntentsRepository.layer, IdentityLinksRepository.layer, Saml.layer, AuditRecorder.layer))
  )
  return services.pipe(Layer.provideMerge(platform), Layer.provideMerge(Db.layer))
}

const newId = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, prefix: string): S["Type"] =>
  Schema.decodeUnknownSync(schema)(typeid(prefix).toString())

let made = 0
/** A fresh domain, unique in the database (domains are unique once verified, across organizations). */
export const newDomain = (label = "corp") => `${label}-${++made}-${Math.random().toString(36).slice(2, 8)}.test`

/**
 * An organization on `plan` with a member of `role` whose email is `email`, signed in by a session just now, inserted
 * as the member middleware would find them; the audit log's partitions of this month and the next exist.
 */
export const member = Effect.fn("SsoSupport.member")(function*(
  email: string,
  options: { readonly role?: "owner" | "admin" | "member"; readonly plan?: "enterprise" | "free"; readonly organization?: Organization } = {}
) {
  const sql = yield* SqlClient.SqlClient
  const at = new Date()
  const organization = options.organization ??
    new Organization({ id: newId(OrganizationId, "org"), name: `Org ${email}`, plan: options.plan ?? "enterprise", provisional: false, createdAt: at })
  const user = new User({ id: newId(UserId, "usr"), email, name: `Person ${email.split("@")[0]}`, createdAt: at })
  const role = options.role ?? "owner"
  const caller: MemberContext = {
    _tag: "Member",
    organization,
    membership: new Membership({ id: newId(MembershipId, "om"), organizationId: organization.id, userId: user.id, role, createdAt: at }),
    user,
    credential: { _tag: "Session", sessionId: newId(SessionId, "ses"), ssoConnectionId: null, authenticatedAt: at }
  }
  const far = new Date(at.getTime() + 86_400_000)
  yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at)
             VALUES (${organization.id}, ${organization.name}, ${organization.plan}, ${at}, ${at}) ON CONFLICT DO NOTHING`
  yield* sql`INSERT INTO users (id, email, name, password_hash, created_at, updated_at)
             VALUES (${user.id}, ${email}, ${user.name}, 'x', ${at}, ${at})`
  yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
             VALUES (${caller.membership.id}, ${organization.id}, ${user.id}, ${role}, ${at}, ${at})`
  if (caller.credential._tag === "Session") {
    yield* sql`INSERT INTO sessions (id, user_id, token_hash, active_organization_id, created_at, expires_at)
               VALUES (${caller.credential.sessionId}, ${user.id}, ${caller.credential.sessionId}, ${organization.id}, ${at}, ${far})`
  }
  const auditEvents = MonthlyPartitions.make("audit_events")
  yield* auditEvents.create(MonthlyPartitions.monthOf(at))
  yield* auditEvents.create(MonthlyPartitions.monthOf(at) + 1)
  return caller
})

/** Verifies `domain` for the caller's organization: the record requested, published at the fake DNS, checked. */
export const verifyDomain = Effect.fn("SsoSupport.verifyDomain")(function*(caller: MemberContext, domain: string, dns: FakeDns.FakeDns) {
  const sso = yield* Sso
  const { verification } = yield* sso.requestDomainVerification(caller, domain)
  dns.setTxt(verification.recordName, [verification.recordValue])
  return yield* sso.verifyDomain(caller, domain)
})
