/**
 * Staging to production with the Promise client: the parts of a staging organization's document that hold for every
 * environment (the member directory setting, the audit log's retention, the LLM providers) planned against the
 * production organization and applied there, each secret resolved from this process's environment by the reference
 * the document names (`env:NAME`; `file:PATH` reads a file). The document never holds a secret: docs/config-as-code.md.
 *
 *   ORGPLANE_URL=http://127.0.0.1:8787 STAGING_TOKEN=ops_... PRODUCTION_TOKEN=ops_... \
 *     LLM_OPENAI_API_KEY=sk-... pnpm --filter @orgplane/examples promote
 *
 * Without ORGPLANE_URL it starts a throwaway server first (in memory) with two organizations, Acme (staging), whose
 * LLM provider OpenAI was registered through the API, and Acme (production), and promotes one to the other.
 */
import { createClient } from "@orgplane/client"
import type { AppliedPlan, DocumentGrant, OrganizationDocument, OrganizationPlan } from "@orgplane/schema"
import { readFile } from "node:fs/promises"
import { startLocalServer } from "./local-server.js"

export interface Promotion {
  readonly plan: OrganizationPlan
  readonly applied: AppliedPlan
  /** The promoted document planned against production again once applied: no changes. */
  readonly after: OrganizationPlan
}

/** Grants that mean the same in every environment: the whole organization's (people and teams differ). */
const everywhere = <A extends { readonly grants?: ReadonlyArray<DocumentGrant> }>(resource: A): A => ({
  ...resource,
  grants: (resource.grants ?? []).filter((grant) => "organization" in grant)
})

/**
 * What is promoted: the parts that are the same in every environment (people and their teams are not, so neither
 * are grants to them).
 */
export const promotable = (document: OrganizationDocument): OrganizationDocument => ({
  version: document.version,
  ...(document.directory === undefined ? {} : { directory: document.directory }),
  ...(document.audit === undefined ? {} : { audit: document.audit }),
  ...(document.llmProviders === undefined ? {} : { llmProviders: document.llmProviders.map(everywhere) })
})

/**
 * The value of each secret the plan writes, read where its reference points: an environment variable, or a file
 * (without one trailing newline). Fails naming every variable that is not set.
 */
export const readSecrets = async (sources: ReadonlyArray<string>, environment: Readonly<Record<string, string | undefined>>) => {
  const unset = sources.filter((source) => source.startsWith("env:") && (environment[source.slice(4)] ?? "") === "")
  if (unset.length > 0) throw new Error(`The plan writes secrets whose variables are not set: ${unset.join(", ")}`)
  const values = await Promise.all(sources.map(async (source) =>
    source.startsWith("env:") ? environment[source.slice(4)]! : (await readFile(source.slice(5), "utf8")).replace(/\r?\n$/, "")
  ))
  return sources.map((from, index) => ({ from, value: values[index]! }))
}

export const promote = async (options: {
  readonly baseUrl: string
  readonly stagingToken: string
  readonly productionToken: string
  readonly environment: Readonly<Record<string, string | undefined>>
}): Promise<Promotion> => {
  const staging = createClient({ baseUrl: options.baseUrl, token: options.stagingToken })
  const production = createClient({ baseUrl: options.baseUrl, token: options.productionToken })
  try {
    const document = promotable(await staging.organizationDocument.export())
    const plan = await production.organizationDocument.plan({ payload: { document } })
    // Review `plan.markdown`; only the secrets it sets or rotates are read, here, never by the server.
    const secrets = await readSecrets(plan.secrets, options.environment)
    const applied = await production.organizationDocument.apply({ payload: { document, planHash: plan.planHash, secrets } })
    const after = await production.organizationDocument.plan({ payload: { document } })
    return { plan, applied, after }
  } finally {
    await Promise.all([staging.close(), production.close()])
  }
}

/** Two organizations on a fresh server: staging, configured through the API, and an empty production. */
export const demoEnvironments = async (baseUrl: string) => {
  const anonymous = createClient({ baseUrl })
  try {
    const password = "a long password"
    const owner = async (email: string, organization: string) => {
      const { session } = await anonymous.users.signUp({ payload: { email, password, name: organization } })
      const client = createClient({ baseUrl, token: session.token })
      await client.organizations.create({ payload: { name: organization } })
      return { client, token: session.token }
    }
    const staging = await owner("staging@example.com", "Acme (staging)")
    const production = await owner("production@example.com", "Acme (production)")
    try {
      await staging.client.members.setDirectorySettings({ payload: { emailsVisibleToMembers: true } })
      await staging.client.llmProviders.create({
        payload: { name: "OpenAI", catalogProviderId: "openai", models: [{ id: "gpt-4o" }, { id: "gpt-4o-mini" }], apiKey: "sk-staging-demo" }
      })
      return { stagingToken: staging.token, productionToken: production.token }
    } finally {
      await Promise.all([staging.client.close(), production.client.close()])
    }
  } finally {
    await anonymous.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const given = process.env.ORGPLANE_URL ?? ""
  if (given !== "" && ((process.env.STAGING_TOKEN ?? "") === "" || (process.env.PRODUCTION_TOKEN ?? "") === "")) {
    console.error("STAGING_TOKEN and PRODUCTION_TOKEN: an owner's session in each organization is needed with ORGPLANE_URL")
    process.exit(2)
  }
  const local = given === "" ? await startLocalServer() : undefined
  try {
    const baseUrl = local?.url ?? given
    const tokens = local === undefined
      ? { stagingToken: process.env.STAGING_TOKEN!, productionToken: process.env.PRODUCTION_TOKEN! }
      : await demoEnvironments(local.url)
    if (local !== undefined) {
      console.error(`No ORGPLANE_URL: started a throwaway server on ${local.url} (Acme (staging), Acme (production)).`)
    }
    const { after, applied, plan } = await promote({ baseUrl, ...tokens, environment: process.env })
    console.log(plan.markdown)
    console.log(`Promoted ${applied.changes.length} changes (plan ${applied.planHash}); secrets read here: ${plan.secrets.join(", ")}.`)
    console.log(`Production's plan of the staging document now: ${after.changes.length} changes.`)
  } finally {
    await local?.close()
  }
}
