/**
 * The examples every command's help ends with: its own (a command whose common use needs flags has them in its
 * declaration, `examples` in Commands.ts), else the one its usage gives, its arguments and required flags filled
 * with a value each. A value comes from the input's schema (an id schema's own example, a choice's first value),
 * else from `samples` below, by the input's name. test/Examples.test.ts runs every example against a server that is
 * not there: each gets past the parser, so none shows words the command refuses.
 */
import { exampleId } from "@orgplane/schema"
import type * as Commands from "./Commands.js"
import type * as Inputs from "./Inputs.js"

/** A value for an input whose schema has no example, by its name (`--email`, `<name>`). */
const samples: Readonly<Record<string, string>> = {
  email: "ada@example.com",
  "new-email": "ada@example.org",
  name: "Platform",
  policyName: "Engineering laptops",
  "workspace-name": "Agents",
  content: "Deploys go through the staging cluster first",
  query: "deploy",
  url: "https://siem.example.com/orgplane",
  "mcp-url": "https://mcp.example.com/mcp",
  token: "opr_…",
  "setup-token": "opsetup_…",
  connection: "github-mcp",
  provider: "openai",
  tool: "search",
  messageId: "AAMkAGI2TQ",
  file: "SKILL.md",
  dir: "./plugins",
  branch: "main",
  repository: "acme/agents",
  selector: "skills/*",
  subject: "Weekly report",
  kind: "workspace",
  policy: '{"autoUpdate":true}',
  "retention-days": "365",
  "client-id": "0oa1b2c3d4e5f6",
  resourceId: exampleId("cob"),
  memberId: exampleId("om"),
  grantId: exampleId("coa"),
  eventId: "7k3f1c2d9e0b4a6g8h"
}

/** Placeholders whose value says what it is: a file by its extension. */
const byPlaceholder: Readonly<Record<string, string>> = {
  "<file.sql>": "orgplane.sql"
}

/** The value the examples give an input, or undefined when neither its schema nor the tables have one. */
export const sample = (doc: Inputs.Doc): string | undefined =>
  doc.example ?? byPlaceholder[doc.placeholder] ?? samples[doc.name]

/**
 * The example its usage gives: the command's words, each argument (optional ones left out) and required flag with a
 * value; undefined when one has none (test/Examples.test.ts asserts that never happens).
 */
export const fromUsage = (path: ReadonlyArray<string>, leaf: Commands.Leaf): Commands.Example | undefined => {
  const words: Array<string> = [...path]
  for (const doc of leaf.docs) {
    if (doc.kind === "arg" ? doc.optional : doc.optional || doc.placeholder === "") continue
    const value = sample(doc)
    if (value === undefined) return undefined
    words.push(...(doc.kind === "flag" ? [`--${doc.name}`, value] : [value]))
  }
  return [`${leaf.summary.replace(/[:;(].*$/, "").trim().replace(/\.$/, "")}.`, words]
}

/** Its own examples, else the one its usage gives. */
export const of = (path: ReadonlyArray<string>, leaf: Commands.Leaf): ReadonlyArray<Commands.Example> => {
  if (leaf.examples.length > 0) return leaf.examples
  const usage = fromUsage(path, leaf)
  return usage === undefined ? [] : [usage]
}
