/**
 * A vitest setup file of every package's run: with `ORGPLANE_TEST_TIMES` naming a folder, each test file's wall and
 * CPU seconds are appended there (`<pid>.jsonl`, one line a file), so `scripts/test.mjs` can print the slowest files
 * and each package's total. The CPU is the worker's own (files of a worker run one after another: `isolate: false`)
 * plus that of the processes the file started and waited for (a server, the CLI), read from `/proc/self/stat` where
 * Linux has it. With `ORGPLANE_TEST_PROFILE` naming a folder, each file's CPU profile (V8's sampling profiler, in the
 * worker) is written there too, `<package>--<file>.cpuprofile`, for Chrome's DevTools or any profile reader.
 */
import * as Fs from "node:fs"
import * as Inspector from "node:inspector/promises"
import * as Path from "node:path"
import { afterAll } from "vitest"

const folder = process.env["ORGPLANE_TEST_TIMES"]

/** Clock ticks a second, as Linux counts a process's times (`getconf CLK_TCK`: 100 on every kernel Node runs on). */
const TICKS_PER_SECOND = 100

/** CPU seconds of the processes this one started and waited for, or 0 where `/proc` is not there. */
const childrenSeconds = () => {
  try {
    const stat = Fs.readFileSync("/proc/self/stat", "utf8")
    // After the command's name in parentheses: fields 3 on; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

const ownSeconds = () => {
  const { system, user } = process.cpuUsage()
  return (user + system) / 1e6
}

if (folder !== undefined && folder !== "") {
  // Read when vitest runs this setup, before it imports the test file: the file's own imports are its cost too.
  const started = { wall: performance.now(), own: ownSeconds(), children: childrenSeconds() }
  afterAll(({}, suite) => {
    const line = {
      package: Path.basename(process.cwd()),
      file: Path.relative(process.cwd(), "filepath" in suite ? String(suite.filepath) : suite.name),
      wall: (performance.now() - started.wall) / 1000,
      cpu: ownSeconds() - started.own + childrenSeconds() - started.children
    }
    Fs.mkdirSync(folder, { recursive: true })
    Fs.appendFileSync(Path.join(folder, `${process.pid}.jsonl`), `${JSON.stringify(line)}\n`)
  })
}

const profiles = process.env["ORGPLANE_TEST_PROFILE"]

if (profiles !== undefined && profiles !== "") {
  const session = new Inspector.Session()
  session.connect()
  const started = session.post("Profiler.enable")
    .then(() => session.post("Profiler.setSamplingInterval", { interval: 500 }))
    .then(() => session.post("Profiler.start"))
  afterAll(async ({}, suite) => {
    await started
    const { profile } = await session.post("Profiler.stop")
    session.disconnect()
    const file = Path.relative(process.cwd(), "filepath" in suite ? String(suite.filepath) : suite.name)
    Fs.mkdirSync(profiles, { recursive: true })
    Fs.writeFileSync(Path.join(profiles, `${Path.basename(process.cwd())}--${file.replaceAll("/", "_")}.cpuprofile`), JSON.stringify(profile))
  })
}
