/**
 * `pnpm test [vitest arguments]`: the whole suite, each package's own vitest run (every folder with a
 * vitest.config.ts) in two lanes side by side: the server's suite in one, and packages/schema, client, testkit, mcp,
 * cli, then examples/ in turn in the other. The lanes fill each other's waits on two cores (a file waiting on a
 * child process, a database down on purpose, a receiver's backoff); the server's lane prints as it goes, the other
 * lane each package's output once that package is done. Flags go to every run (`--outputFile=x.json` becomes
 * `x.<package>.json`, one report each); a path filter runs the package it names, with the rest of the path as
 * vitest's filter (`pnpm test packages/server/test/Teams.test.ts`, `pnpm test packages/schema`).
 * Fails when any run fails. A run of whole packages (no path, or only packages' folders) ends with each package's wall
 * and CPU seconds and the 15 slowest files.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.dirname(Path.dirname(new URL(import.meta.url).pathname))
// The order of the runs: the quick ones first, so a broken schema fails in seconds.
const order = ["packages/schema", "packages/client", "packages/testkit", "packages/server", "packages/mcp", "packages/cli", "examples"]
const folders = order.filter((folder) => Fs.existsSync(Path.join(root, folder, "vitest.config.ts")))

const args = process.argv.slice(2)
// A filter is an argument that is not a flag, nor a flag's value (`--reporter default`): a path that exists is one
// wherever it stands (`--silent packages/schema`).
const filters = args.filter((arg, index) =>
  !arg.startsWith("-") && (Fs.existsSync(Path.resolve(root, arg)) || !/^--?[\w-]+$/.test(args[index - 1] ?? "-"))
)
const flags = args.filter((arg) => !filters.includes(arg))
const relative = filters.map((filter) => Path.relative(root, Path.resolve(root, filter)))
const unknown = relative.filter((filter) => !folders.some((folder) => filter === folder || filter.startsWith(`${folder}/`)))
if (unknown.length > 0) {
  console.error(`pnpm test: ${unknown.join(", ")} is in none of ${folders.join(", ")}`)
  process.exit(2)
}

/** CPU seconds of the processes this one started and waited for (each package's vitest and what it started). */
const childrenSeconds = () => {
  try {
    const stat = Fs.readFileSync("/proc/self/stat", "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return Number.NaN
  }
}

// Each file's wall and CPU seconds (packages/testkit/src/FileTimes.ts, a setup file of every package's run), for the
// table a whole run ends with; `ORGPLANE_TEST_TIMES` keeps them in a folder of the caller's.
const started = performance.now()
const timesFolder = process.env["ORGPLANE_TEST_TIMES"] || Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-test-times-"))

/** Where a package's own wall and CPU seconds are kept for the table: `<package>.total.json` in the times folder. */
const totalFile = (folder) => Path.join(timesFolder, `${folder.replace(/^packages\//, "")}.total.json`)

/** Runs one package's vitest (the process the lanes start for each package); its wall and CPU go to the times folder. */
const runPackage = (folder) => {
  const mine = relative.filter((filter) => filter === folder || filter.startsWith(`${folder}/`))
  const paths = mine.map((filter) => filter.slice(folder.length + 1)).filter((path) => path !== "")
  const name = folder.replace(/^packages\//, "")
  const own = flags.map((flag) =>
    flag.startsWith("--outputFile=")
      ? `--outputFile=${Path.resolve(root, flag.slice("--outputFile=".length)).replace(/(\.json)?$/, `.${name}$1`)}`
      : flag
  )
  const cwd = Path.join(root, folder)
  console.log(`\n--- ${folder}`)
  const wall = performance.now()
  const cpu = childrenSeconds()
  const result = spawnSync(Path.join(cwd, "node_modules", ".bin", "vitest"), ["run", ...own, ...paths], {
    cwd,
    stdio: "inherit",
    env: { ...process.env, ORGPLANE_TEST_TIMES: timesFolder }
  })
  const total = { name, wall: (performance.now() - wall) / 1000, cpu: childrenSeconds() - cpu }
  Fs.writeFileSync(totalFile(folder), JSON.stringify(total))
  return (result.status ?? 1) === 0
}

const single = process.env["ORGPLANE_TEST_PACKAGE"]
if (single !== undefined) process.exit(runPackage(single) ? 0 : 1)

const chosen = folders.filter((folder) => relative.length === 0 || relative.some((filter) => filter === folder || filter.startsWith(`${folder}/`)))
const lanes = [chosen.filter((folder) => folder === "packages/server"), chosen.filter((folder) => folder !== "packages/server")]
  .filter((lane) => lane.length > 0)

/**
 * A lane's packages in turn, each in a process of this script's (whose own CPU count is the package's); `printing`
 * passes the output through as it comes, else each package's output is kept and printed once it ends.
 */
const runLane = async (lane, printing) => {
  let ok = true
  for (const folder of lane) {
    const child = spawn(process.execPath, [new URL(import.meta.url).pathname, ...args], {
      cwd: root,
      stdio: printing ? "inherit" : ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        ORGPLANE_TEST_PACKAGE: folder,
        ORGPLANE_TEST_TIMES: timesFolder,
        ...(!printing && process.stdout.isTTY ? { FORCE_COLOR: "1" } : {})
      }
    })
    const output = []
    child.stdout?.on("data", (chunk) => output.push(chunk))
    child.stderr?.on("data", (chunk) => output.push(chunk))
    const code = await new Promise((resolve) => child.on("close", (status) => resolve(status ?? 1)))
    if (!printing) process.stdout.write(Buffer.concat(output))
    ok = code === 0 && ok
  }
  return ok
}

for (const folder of chosen) Fs.rmSync(totalFile(folder), { force: true })
const results = await Promise.all(lanes.map((lane, index) => runLane(lane, index === 0 || lanes.length === 1)))
const failed = results.includes(false)
const totals = chosen.flatMap((folder) => {
  const file = totalFile(folder)
  return Fs.existsSync(file) ? [JSON.parse(Fs.readFileSync(file, "utf8"))] : []
})

const seconds = (value) => (Number.isNaN(value) ? "?" : value.toFixed(1)).padStart(7)
// A run of whole packages ends with each package's total and the 15 slowest files, so that growth is seen where it
// happens.
if (relative.every((filter) => folders.includes(filter))) {
  const files = Fs.readdirSync(timesFolder).filter((name) => name.endsWith(".jsonl"))
    .flatMap((name) => Fs.readFileSync(Path.join(timesFolder, name), "utf8").split("\n").filter((line) => line !== "").map((line) => JSON.parse(line)))
  console.log(`\n--- test times (seconds)\n${"package".padEnd(52)}   wall     CPU`)
  for (const total of totals) console.log(`${total.name.padEnd(52)}${seconds(total.wall)} ${seconds(total.cpu)}`)
  const cpu = totals.reduce((sum, total) => sum + total.cpu, 0)
  console.log(`${"all (the lanes side by side)".padEnd(52)}${seconds((performance.now() - started) / 1000)} ${seconds(cpu)}`)
  console.log(`\n${"the 15 slowest files".padEnd(52)}   wall     CPU`)
  for (const file of files.sort((a, b) => b.wall - a.wall).slice(0, 15)) {
    console.log(`${`${file.package}/${file.file}`.padEnd(52)}${seconds(file.wall)} ${seconds(file.cpu)}`)
  }
}
process.exit(failed ? 1 : 0)
