import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"

/**
 * A loader of the dependencies of the server package at `serverPackage`, as the server imports them (each one's ESM
 * entry, resolved from that package), so that their services and tags are the very ones the server uses: for the
 * bench's scripts, whose root package does not depend on them, whichever checkout is measured.
 */
export const serverDependencies = (serverPackage: string) => {
  const fromServer = createRequire(Path.join(serverPackage, "package.json"))
  /** `subpath`: one of the package's exports (`sql` for Effect 4's `effect/sql`), else its main entry. */
  return async (name: string, subpath?: string): Promise<unknown> => {
    const manifestPath = fromServer.resolve(`${name}/package.json`)
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
    const exported = manifest.exports[subpath === undefined ? "." : `./${subpath}`]
    const entry = (typeof exported === "string" ? exported : exported.import) as string
    return import(pathToFileURL(Path.join(Path.dirname(manifestPath), entry)).href)
  }
}
