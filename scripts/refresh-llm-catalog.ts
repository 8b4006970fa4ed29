/**
 * Rebuilds the LLM provider catalog the server ships (`packages/server/src/llm/CatalogSnapshot.ts`) from a clone of
 * the models.dev repository (https://github.com/anomalyco/models.dev, formerly sst/models.dev; MIT): one
 * `providers/<id>/provider.toml` per provider and one `providers/<id>/models/<model id>.toml` per model, a model
 * that names a `base_model` taking that file's fields (`models/<base>.toml`) under its own.
 *
 * Only the providers in `PROVIDERS` are kept (the whole catalog is a few MB; these are the well-known ones an
 * organization registers), only the fields the API serves, and no deprecated model.
 *
 *   node --import tsx scripts/refresh-llm-catalog.ts <models.dev checkout or bare git directory> [revision]
 *
 * A bare git directory (a mirror) is read with `git show`; a checkout, from its files.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { parse } from "smol-toml"

/**
 * The providers kept, with the base URL of their OpenAI-compatible (or Anthropic) API where models.dev names
 * none (`api` in provider.toml wins when present).
 */
const PROVIDERS: Record<string, { readonly apiStyle: "openai-compatible" | "anthropic"; readonly baseUrl?: string }> = {
  openai: { apiStyle: "openai-compatible", baseUrl: "https://api.openai.com/v1" },
  anthropic: { apiStyle: "anthropic", baseUrl: "https://api.anthropic.com" },
  google: { apiStyle: "openai-compatible", baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai" },
  mistral: { apiStyle: "openai-compatible", baseUrl: "https://api.mistral.ai/v1" },
  deepseek: { apiStyle: "openai-compatible" },
  groq: { apiStyle: "openai-compatible", baseUrl: "https://api.groq.com/openai/v1" },
  xai: { apiStyle: "openai-compatible", baseUrl: "https://api.x.ai/v1" },
  openrouter: { apiStyle: "openai-compatible" },
  togetherai: { apiStyle: "openai-compatible", baseUrl: "https://api.together.xyz/v1" },
  "fireworks-ai": { apiStyle: "openai-compatible" },
  cerebras: { apiStyle: "openai-compatible", baseUrl: "https://api.cerebras.ai/v1" },
  deepinfra: { apiStyle: "openai-compatible", baseUrl: "https://api.deepinfra.com/v1/openai" },
  perplexity: { apiStyle: "openai-compatible", baseUrl: "https://api.perplexity.ai" },
  moonshotai: { apiStyle: "openai-compatible" },
  zai: { apiStyle: "openai-compatible" }
}

const [source, revision = "HEAD"] = process.argv.slice(2)
if (source === undefined) {
  console.error("usage: refresh-llm-catalog.ts <models.dev checkout or bare git directory> [revision]")
  process.exit(2)
}
const bare = !Fs.existsSync(Path.join(source, "providers")) && Fs.existsSync(Path.join(source, "HEAD"))

const git = (...args: Array<string>) => execFileSync("git", ["--git-dir", source, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
const read = (path: string): string | undefined => {
  try {
    return bare ? git("show", `${revision}:${path}`) : Fs.readFileSync(Path.join(source, path), "utf8")
  } catch {
    return undefined
  }
}
const list = (folder: string): Array<string> =>
  bare
    ? git("ls-tree", "-r", "--name-only", revision, `${folder}/`).split("\n").filter((line) => line !== "")
    : (Fs.readdirSync(Path.join(source, folder), { recursive: true }) as Array<string>).map((file) => `${folder}/${file}`)

type Toml = Record<string, any>
const toml = (path: string): Toml | undefined => {
  const text = read(path)
  return text === undefined ? undefined : parse(text) as Toml
}

const number = (value: unknown): number | null => typeof value === "number" && Number.isFinite(value) ? value : null

const model = (providerId: string, file: string) => {
  const own = toml(file)!
  const base = typeof own.base_model === "string" ? toml(`models/${own.base_model}.toml`) ?? {} : {}
  const merged: Toml = { ...base, ...own, limit: { ...base.limit, ...own.limit }, cost: { ...base.cost, ...own.cost } }
  if (merged.status === "deprecated") return undefined
  const id = file.slice(`providers/${providerId}/models/`.length).replace(/\.toml$/, "")
  const cost = number(merged.cost.input) === null && number(merged.cost.output) === null
    ? null
    : { input: number(merged.cost.input), output: number(merged.cost.output), cacheRead: number(merged.cost.cache_read) }
  return {
    id,
    name: typeof merged.name === "string" ? merged.name : id,
    family: typeof merged.family === "string" ? merged.family : null,
    contextWindow: number(merged.limit.context),
    maxOutputTokens: number(merged.limit.output),
    cost,
    reasoning: merged.reasoning === true,
    toolCall: merged.tool_call === true
  }
}

const providers = Object.entries(PROVIDERS).map(([id, known]) => {
  const provider = toml(`providers/${id}/provider.toml`)
  if (provider === undefined) throw new Error(`models.dev has no provider ${id}`)
  const baseUrl = (typeof provider.api === "string" ? provider.api : known.baseUrl)?.replace(/\/+$/, "")
  if (baseUrl === undefined) throw new Error(`no base URL for ${id}: add one to PROVIDERS`)
  const models = list(`providers/${id}/models`)
    .filter((file) => file.endsWith(".toml"))
    .map((file) => model(id, file))
    .filter((entry) => entry !== undefined)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return { id, name: String(provider.name), apiStyle: known.apiStyle, baseUrl, docUrl: typeof provider.doc === "string" ? provider.doc : null, models }
})

const commit = bare ? git("rev-parse", revision).trim() : "working tree"
const catalog = { source: "https://models.dev", revision: commit, providers }
const json = JSON.stringify(catalog)
const licence = read("LICENSE")!.trim()

const target = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "../packages/server/src/llm/CatalogSnapshot.ts")
Fs.writeFileSync(
  target,
  `/*!
 * The LLM provider catalog shipped with orgplane: a subset of models.dev (https://models.dev,
 * https://github.com/anomalyco/models.dev at ${commit}), made by scripts/refresh-llm-catalog.ts.
 * Do not edit: run the script again. The data's licence:
 *
${licence.split("\n").map((line) => ` * ${line}`.trimEnd()).join("\n")}
 */
// A JSON text rather than an object literal: the type checker reads one string instead of a thousand objects; the
// server decodes it with the catalog's schema at start-up, as it does an operator's file (ORGPLANE_LLM_CATALOG).
export const CATALOG_SNAPSHOT_JSON: string = ${JSON.stringify(json)}
`
)
Fs.writeFileSync(Path.join(Path.dirname(target), "models.dev.LICENSE"), `${licence}\n`)
console.log(`${target}: ${providers.length} providers, ${providers.reduce((n, p) => n + p.models.length, 0)} models, ${json.length} bytes of JSON`)
