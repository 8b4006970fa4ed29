/**
 * One process per embedded data folder: a lock file in the folder naming its holder, taken before the database
 * opens the folder and removed once it has closed it; the lock of a holder that is gone is replaced by the next.
 *
 * PGlite has no lock of its own: two processes on one folder both start, each with its own copy of the database in
 * memory, and each overwrites the other's files, so after a restart one server's writes are gone.
 *
 * The lock is a file created with O_EXCL (`orgplane.lock`: pid, host, boot and process start, as JSON). A process
 * that finds one asks whether its holder still runs: on the same host, its pid alive (`kill(pid, 0)`) and, on Linux,
 * started when the lock says (`/proc/<pid>/stat`) in the same boot (`/proc/sys/kernel/random/boot_id`), so a pid
 * reused by another process, or a lock from before a reboot, is not mistaken for the holder; a lock naming this very
 * pid is an earlier process's (a container's pid 1 after a restart), since this process's own are remembered apart.
 * No timer keeps the lock fresh, so a holder whose event loop is blocked (PGlite runs on it) never loses it. A
 * holder that is gone leaves its file behind (SIGKILL, a crash); the next process replaces it under a short-lived
 * second lock (`orgplane.lock.takeover`), so two newcomers never both replace it.
 *
 * Limits: a lock of another host (a folder on a network share) cannot be checked and is refused with the file to
 * delete; two processes on one host that do not see each other's pids (containers with the same host name sharing
 * the folder) are not told apart; outside Linux a holder's pid reused by another process holds the folder until
 * that process ends (the message names the pid); a process that dies in the instant it replaces a stale lock leaves
 * a takeover lock that the next start after 10 s removes.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"

/** The lock's file, in the data folder. */
export const lockFileName = "orgplane.lock"

/** Who holds a folder, as its lock file says. */
export interface Holder {
  readonly pid: number
  readonly host: string
  /** The boot it was taken in (Linux), or null. */
  readonly bootId: string | null
  /** When its process started, in clock ticks since boot (Linux), or null: tells a reused pid from the holder. */
  readonly processStart: string | null
  /** When it was taken (ISO 8601). */
  readonly since: string
  /** Tells this holder's lock from any other, so a process removes only its own. */
  readonly nonce: string
}

/** The folder is held by another process (or already by this one). */
export class DataFolderInUse extends Data.TaggedError("DataFolderInUse")<{
  readonly folder: string
  readonly lockFile: string
  /** Undefined when this process holds it already, or when others kept taking and replacing the lock. */
  readonly holder: Holder | undefined
  readonly where: "this process" | "this host" | "another host" | "unknown"
}> {
  override get message() {
    const advice = "the embedded database belongs to one process: stop the other one, use another data folder, or run several servers on Postgres (DATABASE_URL)"
    if (this.where === "this process") return `The data folder ${this.folder} is already open in this process (pid ${process.pid}); ${advice}.`
    const holder = this.holder
    if (holder === undefined) {
      return `The data folder ${this.folder} is being opened by other processes at the same moment (its lock ${this.lockFile} could not be taken in ${contentionMillis / 1000} s); ${advice}.`
    }
    const who = `pid ${holder.pid} on host ${holder.host}, since ${holder.since}`
    if (this.where === "another host") {
      return `The data folder ${this.folder} is in use by an orgplane process of another host (${who}); ${advice}. This host cannot tell whether that process still runs: if it does not, delete ${this.lockFile}.`
    }
    return `The data folder ${this.folder} is in use by another orgplane process (${who}); ${advice}.`
  }
}

/** The lock could not be read or written (a folder without permission, say). */
export class DataFolderLockFailed extends Data.TaggedError("DataFolderLockFailed")<{ readonly folder: string; readonly cause: unknown }> {
  override get message() {
    return `Could not lock the data folder ${this.folder}: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`
  }
}

/**
 * The folders this process holds, shared by every copy of this module in the process (a host may load the server
 * twice), so a second open here is refused rather than read as a lock left by an earlier process with this pid.
 */
const heldHere: Set<string> = (() => {
  const key = Symbol.for("@orgplane/server/platform/DataFolderLock")
  const existing: unknown = Reflect.get(globalThis, key)
  if (existing instanceof Set) return existing
  const created = new Set<string>()
  Reflect.set(globalThis, key, created)
  return created
})()

/** A lock found whose file stays without content this long was left by a process that died as it created it. */
const unwrittenGraceMillis = 10_000
/** A takeover lock this old was left by a process that died while replacing a stale lock (which takes milliseconds). */
const takeoverStaleMillis = 10_000
/** How long a start keeps trying while others create or replace the lock at the same moment. */
const contentionMillis = 15_000

const readOptional = (file: string) => Fs.readFile(file, "utf8").then((text) => text.trim(), () => undefined)

/** Field 22 of `/proc/<pid>/stat`, after the command name (which may hold spaces and parentheses). */
const processStart = async (pid: number | "self") => {
  const stat = await readOptional(`/proc/${pid}/stat`)
  if (stat === undefined) return null
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const parse = (text: string): Holder | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value !== "object" || value === null) return undefined
    const { bootId, host, nonce, pid, processStart, since } = value as Record<string, unknown>
    if (!Number.isSafeInteger(pid) || typeof host !== "string" || typeof since !== "string" || typeof nonce !== "string") return undefined
    return {
      pid: pid as number,
      host,
      bootId: typeof bootId === "string" ? bootId : null,
      processStart: typeof processStart === "string" ? processStart : null,
      since,
      nonce
    }
  } catch {
    return undefined
  }
}

/** Whether a lock's holder still runs: "gone" only when this host can tell that it does not. */
const holderState = async (holder: Holder, self: Holder): Promise<"running" | "gone" | "another host"> => {
  if (holder.host !== self.host) return "another host"
  if (holder.bootId !== null && self.bootId !== null && holder.bootId !== self.bootId) return "gone"
  if (holder.pid === self.pid || !isRunning(holder.pid)) return "gone"
  if (holder.processStart !== null) {
    const started = await processStart(holder.pid)
    if (started !== null && started !== holder.processStart) return "gone"
  }
  return "running"
}

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/**
 * Removes a stale lock, `stale` being the text it was judged by, under the takeover lock: only while the file still
 * has that text, so a lock another process took in the meantime stays.
 */
const replaceStale = async (file: string, stale: string) => {
  const takeover = `${file}.takeover`
  try {
    await Fs.writeFile(takeover, String(process.pid), { flag: "wx" })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    const stat = await Fs.stat(takeover).catch(() => undefined)
    if (stat !== undefined && Date.now() - stat.mtimeMs > takeoverStaleMillis) await Fs.rm(takeover, { force: true })
    else await sleep(50)
    return
  }
  try {
    if (await readOptional(file) === stale) await Fs.rm(file, { force: true })
  } finally {
    await Fs.rm(takeover, { force: true })
  }
}

interface Lock {
  readonly folder: string
  readonly file: string
  readonly text: string
}

/** Creates the lock file, replacing a stale one: the lock, or who holds the folder. */
const takeFile = async (folder: string, file: string): Promise<Lock | DataFolderInUse> => {
  const [bootId, started] = await Promise.all([readOptional("/proc/sys/kernel/random/boot_id"), processStart("self")])
  const self: Holder = {
    pid: process.pid,
    host: Os.hostname(),
    bootId: bootId ?? null,
    processStart: started,
    since: new Date().toISOString(),
    nonce: Crypto.randomBytes(12).toString("hex")
  }
  const text = JSON.stringify(self)
  const deadline = Date.now() + contentionMillis
  while (Date.now() < deadline) {
    try {
      const handle = await Fs.open(file, "wx")
      try {
        await handle.writeFile(`${text}\n`)
        await handle.sync()
      } finally {
        await handle.close()
      }
      return { folder, file, text }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const [found, stat] = await Promise.all([readOptional(file), Fs.stat(file).catch(() => undefined)])
    if (found === undefined || stat === undefined) continue // released meanwhile
    const holder = parse(found)
    if (holder === undefined) {
      // Created and not written yet, by a process starting now; or left so by one that died in that instant.
      if (Date.now() - stat.mtimeMs < unwrittenGraceMillis) {
        await sleep(100)
        continue
      }
    } else {
      const state = await holderState(holder, self)
      if (state !== "gone") return new DataFolderInUse({ folder, lockFile: file, holder, where: state === "running" ? "this host" : "another host" })
    }
    await replaceStale(file, found)
  }
  return new DataFolderInUse({ folder, lockFile: file, holder: undefined, where: "unknown" })
}

const take = async (folder: string): Promise<Lock | DataFolderInUse> => {
  const file = Path.join(folder, lockFileName)
  if (heldHere.has(folder)) return new DataFolderInUse({ folder, lockFile: file, holder: undefined, where: "this process" })
  // Claimed before the first await, so that a second open started meanwhile in this process is refused too.
  heldHere.add(folder)
  try {
    const taken = await takeFile(folder, file)
    if (taken instanceof DataFolderInUse) heldHere.delete(folder)
    return taken
  } catch (error) {
    heldHere.delete(folder)
    throw error
  }
}

const release = async (lock: Lock) => {
  heldHere.delete(lock.folder)
  // Only our own lock: a folder whose lock was deleted by hand and taken by another process stays theirs.
  if (await readOptional(lock.file) === lock.text) await Fs.rm(lock.file, { force: true })
}

/**
 * Holds `folder` (absolute, existing) for the scope: fails with `DataFolderInUse` when another process holds it,
 * before anything else touches it; released when the scope closes.
 */
export const hold = Effect.fn("DataFolderLock.hold")(function*(folder: string) {
  const real = yield* Effect.tryPromise({ try: () => Fs.realpath(folder), catch: (cause) => new DataFolderLockFailed({ folder, cause }) })
  return yield* Effect.acquireRelease(
    Effect.flatMap(
      Effect.tryPromise({ try: () => take(real), catch: (cause) => new DataFolderLockFailed({ folder: real, cause }) }),
      (taken) => taken instanceof DataFolderInUse ? Effect.fail(taken) : Effect.succeed(taken)
    ),
    (lock) => Effect.promise(() => release(lock).catch(() => undefined))
  )
})
