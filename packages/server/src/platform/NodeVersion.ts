/**
 * The Node orgplane runs on: package.json's engines, `>=22.19`. On an older Node the server loads and seems to
 * start, then never becomes ready (the embedded database's socket dies with EPIPE): every entry point refuses one at
 * once with the line the CLI prints (packages/cli/src/bin.ts checks before it loads anything).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Why orgplane cannot run on Node `version`, in one line, or undefined where it can. */
export const refusal = (version: string): string | undefined => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  return major > 22 || (major === 22 && minor >= 19)
    ? undefined
    : `orgplane needs Node 22.19 or later and this is Node ${version}: install Node 24 from https://nodejs.org (or \`nvm install 24\`)`
}

/** Throws the refusal on the Node this process runs, as the embedding functions do before anything starts. */
export const requireSupported = (): void => {
  const refused = refusal(process.versions.node)
  if (refused !== undefined) throw new Error(refused)
}

/** The same for a Layer: its build dies with the refusal, before any other layer of the server's is built. */
export const layer = Layer.effectDiscard(Effect.sync(requireSupported))
