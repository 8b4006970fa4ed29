/**
 * Writes the static help pages (src/HelpPages.ts) of the command tree to the file named by its argument. Run from
 * the sources by the build (tsup.config.ts), beside the bundle it writes.
 */
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import { layout, make } from "../src/Cli.js"
import * as Commands from "../src/Commands.js"
import * as Help from "../src/Help.js"
import type * as HelpPages from "../src/HelpPages.js"
import { VERSION } from "../src/Version.js"

const style = { color: true }

/** Every page of the tree but `serve --help`, whose environment variables are the server's (read when asked). */
const render = (root: Commands.Group): HelpPages.Pages => {
  const groups: Record<string, string> = {}
  const leaves: Record<string, string> = {}
  const visit = (node: Commands.Node, path: ReadonlyArray<string>) => {
    if (node._tag === "Leaf") {
      if (path.join(" ") !== "serve") leaves[path.join(" ")] = Help.leaf(style, path, node)
      return
    }
    if (path.length > 0) groups[path.join(" ")] = Help.group(style, path, node)
    for (const child of node.children) visit(child, [...path, child.name])
  }
  visit(root, [])
  return { version: VERSION, overview: Help.overview(style, root, VERSION, layout), groups, leaves }
}

const [file] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: help-pages.ts <file>")
Fs.writeFileSync(file, JSON.stringify(render(await Effect.runPromise(make()))))
