/**
 * One process per embedded data folder (platform/DataFolderLock.ts), seen from one process through the embedded
 * database's public layer: a second open is refused before it touches the folder, naming the folder and the holder;
 * a lock its holder left behind (exited, from another boot, a reused pid, never written) is replaced; one of a running
 * process or of another host is kept. Two real `orgplane serve` processes: packages/cli/test/Binary.test.ts.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { Database } from "../../src/index.js"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as TestDatabase from "../support/TestDatabase.js"
import { v8Flags } from "../../../../packages/testkit/src/ShortLived.js"

let root: string
let folder: string
let lockFile: string
beforeAll(async () => {
  root = await Fs.realpath(await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-folder-")))
  folder = Path.join(root, "data")
  lockFile = Path.join(folder, "orgplane.lock")
  await Fs.mkdir(folder)
})
afterAll(() => Fs.rm(root, { recursive: true, force: true }))

interface Opened {
  readonly close: () => Promise<void>
  readonly query: (sql: string) => Promise<unknown>
}

/**
 * The embedded database on `folder`, kept open until `close`; the failure's message when it does not open. The new
 * folder is loaded from the tests' migrated template (a server's new folder is loaded from its own), not made by
 * initdb: seconds of CPU that the lock, what these tests are about, does not need.
 */
const open = async (): Promise<Opened | string> => {
  const scope = Scope.makeUnsafe()
  const newFolder = { dump: Effect.promise(TestDatabase.embeddedMigrated), damaged: Effect.void }
  const built = await Effect.runPromiseExit(Layer.buildWithScope(Database.layerEmbedded({ dataDir: folder, newFolder }), scope))
  if (Exit.isFailure(built)) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    const error = Cause.squash(built.cause)
    return `${(error as { _tag?: string })._tag}: ${error instanceof Error ? error.message : String(error)}`
  }
  const sql = Context.get(built.value, SqlClient.SqlClient)
  return {
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
    query: (text) => Effect.runPromise(sql.unsafe(text))
  }
}

const opened = async () => {
  const result = await open()
  if (typeof result === "string") throw new Error(`the folder did not open: ${result}`)
  return result
}

/** Every file of the folder with its size and modification time. */
const snapshot = async () => {
  const entries = await Fs.readdir(folder, { recursive: true, withFileTypes: true })
  const files = await Promise.all(entries.filter((entry) => entry.isFile()).map(async (entry) => {
    const file = Path.join(entry.parentPath, entry.name)
    const stat = await Fs.stat(file)
    return `${Path.relative(folder, file)} ${stat.size} ${stat.mtimeMs}`
  }))
  return files.sort()
}

const writeLock = (holder: Record<string, unknown>) =>
  Fs.writeFile(lockFile, JSON.stringify({ host: Os.hostname(), bootId: null, processStart: null, since: "2026-01-01T00:00:00.000Z", nonce: "left", ...holder }))

const lock = async () => JSON.parse(await Fs.readFile(lockFile, "utf8")) as { pid: number; host: string; nonce: string }

/** The pid of a process that has exited. */
const exitedPid = async () => {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
  await new Promise((resolve) => child.on("exit", resolve))
  return child.pid!
}

/** The start time /proc gives a process (Linux). */
const startOf = async (pid: number) => {
  const stat = await Fs.readFile(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
}

describe("an embedded data folder", { timeout: 60_000 }, () => {
  it("is held by the process that opens it: a second open is refused before it touches the folder, and the lock goes with the close", async () => {
    const first = await opened()
    try {
      // One statement a query: @effect/sql-pg 4 has no simple query protocol (Migrator.ts: `script`).
      await first.query("CREATE TABLE kept (value text)")
      await first.query("INSERT INTO kept VALUES ('first')")
      expect(await lock()).toMatchObject({ pid: process.pid, host: Os.hostname() })
      const before = await snapshot()
      const second = await open()
      expect(second).toBe(
        `DataFolderInUse: The data folder ${folder} is already open in this process (pid ${process.pid}); the embedded database belongs to one process: stop the other one, use another data folder, or run several servers on Postgres (DATABASE_URL).`
      )
      expect(await snapshot()).toEqual(before)
    } finally {
      await first.close()
    }
    await expect(Fs.stat(lockFile)).rejects.toMatchObject({ code: "ENOENT" })
    const again = await opened()
    try {
      expect(await again.query("SELECT value FROM kept")).toEqual([{ value: "first" }])
    } finally {
      await again.close()
    }
  })

  it("is refused while the lock names a running process of this host, with its pid, host and since", async () => {
    await writeLock({ pid: process.ppid, since: "2026-11-25T08:00:00.000Z", nonce: "running" })
    try {
      expect(await open()).toBe(
        `DataFolderInUse: The data folder ${folder} is in use by another orgplane process (pid ${process.ppid} on host ${Os.hostname()}, since 2026-11-25T08:00:00.000Z); the embedded database belongs to one process: stop the other one, use another data folder, or run several servers on Postgres (DATABASE_URL).`
      )
      expect((await lock()).nonce).toBe("running")
    } finally {
      await Fs.rm(lockFile)
    }
  })

  it("is refused while the lock names another host, which this one cannot check: the message says which file to delete", async () => {
    await writeLock({ pid: 4242, host: "elsewhere.example", nonce: "elsewhere" })
    try {
      const refused = await open()
      expect(refused).toContain(`is in use by an orgplane process of another host (pid 4242 on host elsewhere.example, since 2026-01-01T00:00:00.000Z)`)
      expect(refused).toContain(`if it does not, delete ${lockFile}.`)
      expect((await lock()).nonce).toBe("elsewhere")
    } finally {
      await Fs.rm(lockFile)
    }
  })

  it("waits for a lock being written: one created and filled a moment later by a running process is refused", async () => {
    await Fs.writeFile(lockFile, "")
    const opening = open()
    await new Promise((resolve) => setTimeout(resolve, 300))
    await writeLock({ pid: process.ppid, nonce: "late" })
    try {
      expect(await opening).toMatch(new RegExp(`^DataFolderInUse: .* \\(pid ${process.ppid} on host `))
    } finally {
      await Fs.rm(lockFile)
    }
  })

  const replaced = async (left: () => Promise<void>) => {
    await left()
    const database = await opened()
    try {
      expect(await lock()).toMatchObject({ pid: process.pid, host: Os.hostname() })
      expect((await lock()).nonce).not.toBe("left")
    } finally {
      await database.close()
    }
  }

  it("is taken over from a holder that exited (SIGKILL, a crash) without releasing it", () =>
    replaced(async () => writeLock({ pid: await exitedPid() })))

  it("is taken over from a lock naming this very pid, which an earlier process left (a container's pid 1 after a restart)", () =>
    replaced(() => writeLock({ pid: process.pid })))

  it("is taken over from a lock created and never written, once older than a starting process takes to write it", () =>
    replaced(async () => {
      await Fs.writeFile(lockFile, "")
      const past = new Date(Date.now() - 60_000)
      await Fs.utimes(lockFile, past, past)
    }))

  it.runIf(process.platform === "linux")("is taken over from a pid reused by another process, or a lock of another boot (Linux)", async () => {
    await replaced(() => writeLock({ pid: process.ppid, processStart: "1" }))
    const running = { pid: process.ppid, processStart: await startOf(process.ppid) }
    await replaced(() => writeLock({ ...running, bootId: "00000000-0000-0000-0000-000000000000" }))
    // The same process in this boot is its holder.
    const bootId = (await Fs.readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim()
    await writeLock({ ...running, bootId, nonce: "running" })
    try {
      expect(await open()).toMatch(/^DataFolderInUse: /)
    } finally {
      await Fs.rm(lockFile)
    }
  })

  it("is taken by exactly one of four processes starting together over a stale lock; the others are refused naming it", async () => {
    await writeLock({ pid: await exitedPid() })
    const holders = Array.from({ length: 4 }, () =>
      spawn(process.execPath, [...v8Flags, "--conditions=@orgplane/source", "--import", "tsx", "test/folder/holder.ts"], {
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
        env: { ...process.env, DATA_FOLDER: folder },
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      }))
    const next = (child: ChildProcess) => new Promise<unknown>((resolve, reject) => {
      child.once("message", resolve)
      child.once("exit", () => reject(new Error("a holder exited")))
    })
    try {
      await Promise.all(holders.map(next))
      const answers = holders.map(next)
      for (const child of holders) child.send("go")
      const results = await Promise.all(answers)
      const winner = holders.filter((_, i) => (results[i] as { held?: boolean }).held === true)
      expect(winner).toHaveLength(1)
      expect(await lock()).toMatchObject({ pid: winner[0]!.pid })
      for (const result of results.filter((result) => (result as { held?: boolean }).held !== true)) {
        expect(result).toEqual({ refused: expect.stringContaining(`is in use by another orgplane process (pid ${winner[0]!.pid} on host ${Os.hostname()}`) })
      }
      const exited = holders.map((child) => new Promise((resolve) => child.once("exit", resolve)))
      for (const child of holders) child.send("release")
      await Promise.all(exited)
      await expect(Fs.stat(lockFile)).rejects.toMatchObject({ code: "ENOENT" })
    } finally {
      for (const child of holders) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    }
  })
})
