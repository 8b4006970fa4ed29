// Fails when a TypeScript file of the packages, their tests, the testkit, the examples or the benchmarks names the
// type `any` (the parser's AnyKeyword: an annotation, an `as any`, a type argument), listing each place. `unknown`
// and the schemas' types say what a value is; `any` would let a test read an answer the contract no longer has.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { execFileSync } from "node:child_process"
import ts from "typescript"

const root = Path.dirname(Path.dirname(new URL(import.meta.url).pathname))
const files = execFileSync("git", ["ls-files", "--", ":(glob)packages/**/*.ts", ":(glob)examples/**/*.ts", ":(glob)bench/**/*.ts"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((file) => file !== "" && !file.endsWith(".d.ts") && !file.includes("/node_modules/"))

const found = []
for (const file of files) {
  const text = Fs.readFileSync(Path.join(root, file), "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source))
      found.push(`${file}:${line + 1}: ${text.split("\n")[line].trim()}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
}
if (found.length > 0) {
  console.error(`The type \`any\` in ${found.length} place(s) (use \`unknown\`, or the schema's type):\n${found.join("\n")}`)
  process.exitCode = 1
} else {
  console.log(`no \`any\` in ${files.length} TypeScript files`)
}
