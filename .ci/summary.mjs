// Prints vitest JSON reports as plain closing lines: "<label>: N passed, N failed, N skipped", one per report,
// then "total: ..." when given several.
import { existsSync, readFileSync } from "node:fs"
const pairs = process.argv.slice(2)
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
  for (const key of Object.keys(totals)) totals[key] += counts[key]
  if (pairs.length > 2) console.log(`${label}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`)
}
console.log(`${pairs.length > 2 ? "total" : pairs[1]}: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`)
