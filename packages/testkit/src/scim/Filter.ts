/**
 * Tag `filter` (RFC 7644 §3.4.2.2): every operator (eq ne co sw ew pr gt ge lt le), and/or/not, grouping and value
 * paths, on the attributes the issue names (userName, externalId, emails.value, active, displayName, members.value,
 * meta.lastModified), each verified against fixtures created for the run: the answer must hold exactly the fixtures
 * the filter selects. Filters that could match other resources are narrowed by this run's mark, so the answer is
 * exact on a shared server too. Also `POST /.search` and the case-insensitivity of a caseExact:false attribute.
 */
import { asObject, type Check, check, type Context, expectListResponse, fail, once, random, skip } from "./Check.js"
import { supported } from "./Discovery.js"
import * as Fixtures from "./Fixtures.js"
import { type ResourceTypeDoc } from "./Schema.js"

const NAMES = ["alpha", "bravo", "charlie"] as const

interface Case {
  readonly name: string
  readonly type: "User" | "Group"
  readonly filter: string
  /** Indexes of the fixtures the filter selects. */
  readonly expected: ReadonlyArray<number>
  /** Attributes the filter needs the schema to advertise (`emails.value` names `emails`). */
  readonly needs: ReadonlyArray<string>
}

interface Made {
  readonly tag: string
  readonly users: ReadonlyArray<Fixtures.Created["resource"]>
  readonly groups: ReadonlyArray<Fixtures.Created["resource"]>
}

/** Whether a resource type has an attribute; `externalId` is common to all (RFC 7643 §3.1), advertised or not. */
const advertises = (context: Context, type: ResourceTypeDoc | undefined, name: string) =>
  type !== undefined &&
  (name === "externalId" ||
  [type.schema, ...(type.schemaExtensions ?? []).map((e) => e.schema)].some((urn) =>
    (context.discovery.schemas.get(urn)?.attributes ?? []).some((a) => a.name.toLowerCase() === name.toLowerCase())
    ))

/** Overrides for the advertised attributes only (a fixture never carries what the server does not advertise). */
const only = (context: Context, type: ResourceTypeDoc, values: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(values).filter(([name, value]) => value !== undefined && advertises(context, type, name)))

/** Three users, then (only when a Group case runs) two groups over them: a server without Groups still gets its User cases. */
const makeFixtures = (context: Context) => {
  const fixtures = Fixtures.make(context)
  context.defer(fixtures.cleanup)
  const tag = `f${context.run}${random()}`
  const users = once(async () => {
    const userType = Fixtures.typeNamed(context, "User")
    const made: Array<Fixtures.Created["resource"]> = []
    for (const [index, name] of NAMES.entries()) {
      if (userType === undefined) break
      const { resource } = await fixtures.create(
        userType,
        only(context, userType, {
          userName: `${name}-${tag}@example.com`,
          externalId: index < 2 ? `${tag}-ext-${index}` : undefined,
          displayName: `${name[0].toUpperCase()}${name.slice(1)} ${tag}`,
          emails: [{ value: `${name}.${tag}@work.example.com`, type: "work", primary: true }],
          active: index < 2
        })
      )
      made.push(resource)
    }
    return made
  })
  const groups = once(async () => {
    const groupType = Fixtures.typeNamed(context, "Group")
    const members = await users()
    const made: Array<Fixtures.Created["resource"]> = []
    for (const [index, letter] of ["A", "B"].entries()) {
      if (groupType === undefined) break
      const memberList = members.length < 2 ? undefined : (index === 0 ? [members[0], members[1]] : [members[1]]).map((u) => ({ value: u.id }))
      const { resource } = await fixtures.create(
        groupType,
        only(context, groupType, { displayName: `Team ${letter} ${tag}`, externalId: `${tag}-gext-${index}`, members: memberList })
      )
      made.push(resource)
    }
    return made
  })
  return { tag, users, groups }
}

/** The filter cases, built from the fixtures (ids and lastModified values are only known once they exist). */
const cases = ({ tag, users }: Made): ReadonlyArray<Case> => {
  const user = (i: number) => `${NAMES[i]}-${tag}@example.com`
  const mine = `userName ew "-${tag}@example.com"`
  const pivot = String(asObject(users[1]?.meta).lastModified ?? "")
  const byTime = (compare: (a: number, b: number) => boolean) =>
    users.flatMap((u, i) => (compare(Date.parse(String(asObject(u.meta).lastModified)), Date.parse(pivot)) ? [i] : []))
  return [
    { name: "userName.eq", type: "User", filter: `userName eq "${user(1)}"`, expected: [1], needs: ["userName"] },
    { name: "userName.eq.caseInsensitive", type: "User", filter: `userName eq "${user(1).toUpperCase()}"`, expected: [1], needs: ["userName"] },
    { name: "userName.ne.and", type: "User", filter: `userName ne "${user(1)}" and ${mine}`, expected: [0, 2], needs: ["userName"] },
    { name: "userName.co", type: "User", filter: `userName co "o-${tag}"`, expected: [1], needs: ["userName"] },
    { name: "userName.sw", type: "User", filter: `userName sw "charlie-${tag}"`, expected: [2], needs: ["userName"] },
    { name: "userName.ew", type: "User", filter: mine, expected: [0, 1, 2], needs: ["userName"] },
    { name: "externalId.pr", type: "User", filter: `externalId pr and ${mine}`, expected: [0, 1], needs: ["userName", "externalId"] },
    { name: "externalId.eq", type: "User", filter: `externalId eq "${tag}-ext-0"`, expected: [0], needs: ["externalId"] },
    { name: "emails.value.eq", type: "User", filter: `emails.value eq "bravo.${tag}@work.example.com"`, expected: [1], needs: ["emails"] },
    { name: "emails.valuePath", type: "User", filter: `emails[type eq "work" and value co "charlie.${tag}"]`, expected: [2], needs: ["emails"] },
    { name: "active.eq.false", type: "User", filter: `active eq false and ${mine}`, expected: [2], needs: ["active", "userName"] },
    { name: "active.eq.true", type: "User", filter: `active eq true and ${mine}`, expected: [0, 1], needs: ["active", "userName"] },
    { name: "displayName.eq", type: "User", filter: `displayName eq "Bravo ${tag}"`, expected: [1], needs: ["displayName"] },
    { name: "not.grouping", type: "User", filter: `not (userName eq "${user(0)}") and ${mine}`, expected: [1, 2], needs: ["userName"] },
    { name: "grouping.or.and", type: "User", filter: `(userName eq "${user(0)}" or userName eq "${user(2)}") and active eq true`, expected: [0], needs: ["userName", "active"] },
    { name: "or", type: "User", filter: `userName eq "${user(0)}" or externalId eq "${tag}-ext-1"`, expected: [0, 1], needs: ["userName", "externalId"] },
    { name: "meta.lastModified.gt", type: "User", filter: `meta.lastModified gt "${pivot}" and ${mine}`, expected: byTime((a, b) => a > b), needs: ["userName"] },
    { name: "meta.lastModified.ge", type: "User", filter: `meta.lastModified ge "${pivot}" and ${mine}`, expected: byTime((a, b) => a >= b), needs: ["userName"] },
    { name: "meta.lastModified.lt", type: "User", filter: `meta.lastModified lt "${pivot}" and ${mine}`, expected: byTime((a, b) => a < b), needs: ["userName"] },
    { name: "meta.lastModified.le", type: "User", filter: `meta.lastModified le "${pivot}" and ${mine}`, expected: byTime((a, b) => a <= b), needs: ["userName"] },
    { name: "displayName.eq", type: "Group", filter: `displayName eq "Team A ${tag}"`, expected: [0], needs: ["displayName"] },
    { name: "displayName.co", type: "Group", filter: `displayName co "B ${tag}"`, expected: [1], needs: ["displayName"] },
    { name: "displayName.sw.ew", type: "Group", filter: `displayName sw "Team " and displayName ew " ${tag}"`, expected: [0, 1], needs: ["displayName"] },
    { name: "externalId.eq", type: "Group", filter: `externalId eq "${tag}-gext-1"`, expected: [1], needs: ["externalId"] },
    { name: "members.value.eq", type: "Group", filter: `members.value eq "${users[0]?.id}" and displayName ew " ${tag}"`, expected: [0], needs: ["members", "displayName"] },
    { name: "members.valuePath", type: "Group", filter: `members[value eq "${users[1]?.id}"] and displayName ew " ${tag}"`, expected: [0, 1], needs: ["members", "displayName"] }
  ]
}

/** The ids a filter answers, across pages. */
const answer = async (context: Context, type: ResourceTypeDoc, filter: string) => {
  const response = await context.client.get(`${type.endpoint}?filter=${encodeURIComponent(filter)}&count=100`)
  const page = expectListResponse(response)
  check(page.totalResults === page.Resources.length, `expected every match on one page of 100`, response)
  return { ids: page.Resources.map((r) => String(r.id)), response }
}

/** The case list does not depend on the fixtures' values, only its filters do: its shape names the checks. */
const SHAPES = cases({ tag: "t", users: [], groups: [] })

export const checks = (context: Context): ReadonlyArray<Check> => {
  if (!supported(context.discovery, "filter")) {
    return [{ id: "filter", description: "filtered lists", run: async () => skip("ServiceProviderConfig: filter.supported is false") }]
  }
  const made = makeFixtures(context)
  const caseChecks = SHAPES.map((shape, index): Check => ({
    id: `filter.${shape.type}.${shape.name}`,
    description: `GET /${shape.type}s?filter=${shape.filter.replaceAll(/"[^"]*"/g, '"…"')}`,
    run: async () => {
      const type = Fixtures.typeNamed(context, shape.type)
      if (type === undefined) return skip(`no ${shape.type} resource type`)
      const missing = shape.needs.filter((name) => !advertises(context, type, name))
      if (missing.length > 0) return skip(`${shape.type} does not advertise ${missing.join(", ")}`)
      const userName = context.discovery.schemas.get(type.schema)?.attributes.find((a) => a.name === "userName")
      if (shape.name.endsWith("caseInsensitive") && userName?.caseExact === true) return skip("userName is advertised caseExact")
      const users = await made.users()
      const groups = shape.type === "Group" ? await made.groups() : []
      const { filter, expected } = cases({ tag: made.tag, users, groups })[index]
      const pool = shape.type === "User" ? users : groups
      const { ids, response } = await answer(context, type, filter)
      const want = expected.map((i) => pool[i].id as string).sort()
      if (JSON.stringify([...ids].sort()) !== JSON.stringify(want)) fail(`filter ${filter}: expected ${JSON.stringify(want)}, got ${JSON.stringify(ids)}`, response)
      return filter
    }
  }))
  return [
    ...caseChecks,
    {
      id: "filter.User.search",
      description: "POST /Users/.search with a SearchRequest answers as the same filter on GET",
      run: async () => {
        const type = Fixtures.typeNamed(context, "User")
        if (type === undefined) return skip("no User resource type")
        const { tag } = made
        const users = await made.users()
        const response = await context.client.post(`${type.endpoint}/.search`, {
          schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
          filter: `userName sw "bravo-${tag}"`,
          startIndex: 1,
          count: 10
        })
        const { Resources } = expectListResponse(response)
        check(Resources.length === 1 && Resources[0].id === users[1].id, "expected exactly the bravo fixture", response)
      }
    }
  ]
}
