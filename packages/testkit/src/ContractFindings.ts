/**
 * What the response checker found (`ContractWatch.ts`), kept until the test that caused it ends: `contractSetup.ts`
 * fails that test with them. Nothing here loads the API or the server, so the setup file costs a test file nothing.
 *
 * A server in a child process of a test (a test server started there) appends what it finds to the file
 * named by `ORGPLANE_TEST_CONTRACT_LOG`, which the test's process reads at the same points.
 */
import * as Fs from "node:fs"

/** The file a child process appends its findings to. */
export const logVariable = "ORGPLANE_TEST_CONTRACT_LOG"

const found: Array<string> = []

/** Whether this process reads its own findings (a test process, through `contractSetup.ts`). */
let collecting = false

/** Keeps a finding for the test running now (or, in a child process of a test, for its process). */
export const report = (violation: string) => {
  const log = process.env[logVariable]
  if (collecting || log === undefined) found.push(violation)
  else Fs.appendFileSync(log, `${JSON.stringify(violation)}\n`)
}

/** Marks this process as the one that reads the findings (its children append theirs to `file`). */
export const collect = (file: string) => {
  collecting = true
  process.env[logVariable] = file
}

/** What was found since the last call, here and in child processes, and forgets it. */
export const take = (): ReadonlyArray<string> => {
  const taken = found.splice(0, found.length)
  const log = process.env[logVariable]
  if (collecting && log !== undefined) {
    // Moved aside first: what a child appends meanwhile starts a new file, read next time.
    const taking = `${log}.taking`
    let text = ""
    try {
      Fs.renameSync(log, taking)
      text = Fs.readFileSync(taking, "utf8")
      Fs.rmSync(taking, { force: true })
    } catch {
      // No child wrote anything.
    }
    for (const line of text.split("\n")) if (line !== "") taken.push(JSON.parse(line) as string)
  }
  return taken
}

/** Throws, listing them, when answers were found outside the document since the last call (`contractSetup.ts`). */
export const assertDeclared = () => {
  const taken = take()
  if (taken.length > 0) {
    throw new Error(`${taken.length} answer(s) the OpenAPI document does not declare:\n${taken.map((line) => `- ${line}`).join("\n")}`)
  }
}

