/**
 * Tag `errors` (RFC 7644 §3.12): SCIM error bodies (schemas, status as a string, detail, scimType) as
 * `application/scim+json` for an unknown URL, an unknown id, a malformed filter, a uniqueness conflict, a request
 * without valid credentials (401, with the `WWW-Authenticate` challenge RFC 7644 §2 requires) and a method an
 * endpoint does not take (405 with `Allow`, or 501).
 */
import { type Check, check, type Context, expectError, idOf, random, skip } from "./Check.js"
import { supported } from "./Discovery.js"
import * as Fixtures from "./Fixtures.js"
import { payload, pick } from "./Schema.js"

export const checks = (context: Context): ReadonlyArray<Check> => [
  {
    id: "errors.unknownUrl",
    description: "GET a random URL under the base → 404 SCIM error",
    run: async () => expectError(await context.client.get(`/Unknown${random()}/${random()}`), 404)
  },
  {
    id: "errors.unauthorized",
    description: "GET a resource endpoint without a token, and with a wrong one → 401 SCIM error with a WWW-Authenticate challenge",
    run: async () => {
      const type = context.discovery.resourceTypes[0]
      if (type === undefined) return skip("no resource type is advertised")
      const schemes = ((context.discovery.serviceProviderConfig.authenticationSchemes ?? []) as ReadonlyArray<{ type?: string }>).map((scheme) => scheme.type?.toLowerCase())
      for (const token of [null, `wrong-${random()}`]) {
        const response = await context.client.get(type.endpoint, { token })
        expectError(response, 401)
        // RFC 7644 §2: the service provider "SHALL indicate supported HTTP authentication schemes via the WWW-Authenticate header".
        const challenge = response.headers.get("www-authenticate") ?? ""
        check(challenge.trim() !== "", "a 401 must carry a WWW-Authenticate challenge", response)
        if (schemes.includes("oauthbearertoken")) check(/^\s*bearer\b/i.test(challenge), "the challenge must name the advertised Bearer scheme", response)
      }
    }
  },
  {
    id: "errors.methodNotAllowed",
    description: "DELETE /ServiceProviderConfig (a read-only endpoint) → a SCIM error: 405 with Allow, or 501",
    run: async () => {
      const response = await context.client.del("/ServiceProviderConfig")
      expectError(response, response.status === 501 ? 501 : 405)
      // RFC 9110 §15.5.6: a 405 lists the methods the target has.
      if (response.status === 405) check(/\bGET\b/.test(response.headers.get("allow") ?? ""), "a 405 must list GET in Allow", response)
    }
  },
  ...context.discovery.resourceTypes.map((type): Check => ({
    id: `errors.${type.name}.unknownId`,
    description: `GET, PATCH and DELETE ${type.endpoint}/<unknown id> → 404 SCIM error`,
    run: async () => {
      const url = `${type.endpoint}/${crypto.randomUUID()}`
      expectError(await context.client.get(url), 404)
      expectError(await context.client.del(url), 404)
      expectError(await context.client.patch(url, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", path: "externalId", value: "x" }] }), 404)
    }
  })),
  {
    id: "errors.invalidFilter",
    description: "a malformed filter → 400 SCIM error with scimType invalidFilter",
    run: async () => {
      if (!supported(context.discovery, "filter")) return skip("ServiceProviderConfig: filter.supported is false")
      const type = context.discovery.resourceTypes[0]
      for (const filter of ['userName zz "x"', '(userName eq "x"', 'emails[type eq "work"']) {
        expectError(await context.client.get(`${type.endpoint}?filter=${encodeURIComponent(filter)}`), 400, "invalidFilter")
      }
    }
  },
  ...context.discovery.resourceTypes.map((type): Check => ({
    id: `errors.${type.name}.uniqueness`,
    description: `creating a second ${type.name} with the value of a unique attribute → 409 scimType uniqueness`,
    run: () =>
      Fixtures.using(context, async (fixtures) => {
        const unique = (context.discovery.schemas.get(type.schema)?.attributes ?? []).find((a) => (a.uniqueness ?? "none") !== "none" && a.type === "string" && a.mutability !== "readOnly" && !a.multiValued)
        if (unique === undefined) return skip(`${type.name} advertises no unique attribute`)
        const { resource } = await fixtures.create(type)
        const body = payload(type, context.discovery.schemas, await fixtures.references())
        body[unique.name] = pick(resource, unique.name)
        const response = await context.client.post(type.endpoint, body)
        if (response.status === 201) await context.client.del(`${type.endpoint}/${encodeURIComponent(idOf(response.body))}`)
        expectError(response, 409, "uniqueness")
        return unique.name
      })
  }))
]
