// Prints vitest JSON reports as plain closing lines: each failed test (its file, its name and its message's first
// lines, so that the end of a long log says what failed), then "<label>: N passed, N failed, N skipped", one per
// report, then "total: ..." when given several.
import { existsSync, readFileSync } from "node:fs"
const pairs = process.argv.slice(2)
/** A failure's message, cut to its first lines (the assertion and where it stands). */
const firstLines = (text = "") => text.split("\n").slice(0, 8).join("\n    ")
const totals = { passed: 0, failed: 0, skipped: 0 }
for (let i = 0; i < pairs.length; i += 2) {
  const [file, label] = [pairs[i], pairs[i + 1]]
  if (!existsSync(file)) {
    console.log(`${label}: no report (the test run did not finish)`)
    totals.failed++
    continue
  }
  const report = JSON.parse(readFileSync(file, "utf8"))
  const counts = {
    passed: report.numPassedTests,
    // A failed test, or a file that failed without any (it did not load, or a hook threw); vitest's
    // numFailedTestSuites also counts every describe block around a failed test, so it is not used.
    failed: report.numFailedTests +
      report.testResults.filter((file) => file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed")).length,
    skipped: report.numPendingTests + report.numTodoTests
  }
  for (const file of report.testResults.filter((file) => file.status === "failed")) {
    const tests = file.assertionResults.filter((test) => test.status === "failed")
    const where = `${label}/${file.name.slice(file.name.lastIndexOf("/test/") + 1)}`
    if (tests.length === 0) console.log(`FAILED ${where}: ${firstLines(file.message)}`)
    for (const test of tests) console.log(`FAILED ${where} > ${test.fullName}: ${firstLines(test.failureMessages.join("\n"))}`)
  }
  for (const key of Object.keys(totals)) totals[key] += counts[key]
  if (pairs.length > 2) console.log(`${label}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`)
}
console.log(`${pairs.length > 2 ? "total" : pairs[1]}: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`)
