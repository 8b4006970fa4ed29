/**
 * `pnpm install`'s last step: `node_modules/.bin/node` becomes a symbolic link to the Node binary that the root's
 * optional dependency `node` installed, instead of the shell script pnpm writes for it. That script runs Node as its
 * child without `exec` (and sets NODE_PATH to pnpm's hoisted folder), so a signal sent to the process a supervisor
 * started (SIGTERM to `orgplane serve`, or to `pnpm start`) stopped the script and left the server running, orphaned.
 * With the link, `node` on a script's PATH is Node itself. Nothing to do where the dependency was not installed
 * (a platform the registry has no binary for) or on Windows, whose shims pnpm writes differently. Last, it checks that
 * pnpm-workspace.yaml's nodeVersion is that dependency's version.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.dirname(Path.dirname(new URL(import.meta.url).pathname))
const binary = Path.join(root, "node_modules", "node", "bin", "node")
const shim = Path.join(root, "node_modules", ".bin", "node")

if (process.platform !== "win32" && Fs.existsSync(binary)) {
  const target = Path.relative(Path.dirname(shim), binary)
  const current = Fs.lstatSync(shim, { throwIfNoEntry: false })
  if (current?.isSymbolicLink() !== true || Fs.readlinkSync(shim) !== target) {
    Fs.rmSync(shim, { force: true })
    Fs.symlinkSync(target, shim)
  }
}

// pnpm-workspace.yaml's `nodeVersion` (the Node pnpm checks packages' engines against) is the one the root's `node`
// dependency pins: a bump of one without the other fails here, at the install, rather than warning or passing wrongly
// later.
const pinned = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")).optionalDependencies?.node
const checked = /^nodeVersion:\s*(\S+)\s*$/m.exec(Fs.readFileSync(Path.join(root, "pnpm-workspace.yaml"), "utf8"))?.[1]
if (pinned !== undefined && checked !== pinned) {
  console.error(`pnpm-workspace.yaml's nodeVersion (${checked ?? "unset"}) must be the root's optional dependency node (${pinned})`)
  process.exit(1)
}
