/**
 * How `orgplane db dump` reads the embedded database of a running server: while a server holds a data folder it
 * answers on a unix socket that only its own user can open, with a copy of the folder's files taken at one instant
 * (PGlite's `dumpDataDir`, under the same lock every protocol message of its socket takes, so between two
 * messages). The copy is crash-consistent: loaded, Postgres replays its WAL and drops whatever a transaction still
 * open at that instant had written, as after a power cut. No second process opens the folder, which PGlite cannot
 * share (platform/DataFolderLock.ts), and the server runs no dump of its own on its single session.
 *
 * The socket is `<tmpdir>/orgplane-<uid>/<hash of the folder's real path>.sock`, so the CLI finds it from the
 * folder alone. Both ends hold that folder to one rule (`privacyProblem`): a folder, not a symbolic link, of this
 * user, closed to everyone else (no group or other permission bits). The server makes it so (0700) and, finding
 * one that breaks the rule (another user's folder of that name), logs why and serves on without the channel, as
 * on Windows: the dump of a stopped folder still works. The dump reads a snapshot only from its own user's server:
 * besides the folder's rule, the socket must be a socket (not a link) this user owns, and anything else is an error
 * (`ForeignChannel`), never a fall-back to another reading. Within a folder only its owner may enter, only its owner
 * can have made the socket, so these checks stand in for the peer's credentials (SO_PEERCRED), which Node does not
 * give a socket's client.
 *
 * The answer is one JSON line, `{"bytes":n}` then the tarball's n bytes, or `{"error":"…"}`.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import type { Stats } from "node:fs"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

/** The channel could not be served, or its answer could not be read. */
export class SnapshotChannelError extends Data.TaggedError("SnapshotChannelError")<{ readonly message: string; readonly cause?: unknown }> {}

/** The channel's folder or socket is not this user's own: nothing was read from it. */
export class ForeignChannel extends Data.TaggedError("ForeignChannel")<{ readonly message: string }> {}

const ownerId = () => typeof process.getuid === "function" ? process.getuid() : undefined

/** The private folder of this user's channels. */
const channelFolder = () => Path.join(Os.tmpdir(), `orgplane-${ownerId() ?? "user"}`)

/** The socket of the data folder `realFolder` (its real path). */
export const socketPathOf = (realFolder: string) =>
  Path.join(channelFolder(), `${NodeCrypto.createHash("sha256").update(realFolder).digest("hex").slice(0, 24)}.sock`)

/** That another user owns the file, in words; undefined when this user does (or where there are no user ids). */
const foreignOwner = (stat: Stats) => {
  const owner = ownerId()
  return owner !== undefined && stat.uid !== owner ? `another user (uid ${stat.uid}) owns it` : undefined
}

/**
 * Why the channels' folder, as `lstat` found it, is not a private folder of this user, or undefined when it is: a
 * folder (not a symbolic link), owned by this user, with no permission for its group or others. The rule the server
 * makes its folder by and the dump trusts a folder by.
 */
const privacyProblem = (stat: Stats): string | undefined =>
  !stat.isDirectory()
    ? `is not a folder${stat.isSymbolicLink() ? " (a symbolic link)" : ""}`
    : foreignOwner(stat) ?? ((stat.mode & 0o077) !== 0 ? `others may enter it (mode ${(stat.mode & 0o777).toString(8)})` : undefined)

/** Why the socket, as `lstat` found it, is not one of this user's, or undefined when it is. */
const socketProblem = (stat: Stats): string | undefined =>
  !stat.isSocket() ? `is not a socket${stat.isSymbolicLink() ? " (a symbolic link)" : ""}` : foreignOwner(stat)

/** Makes (or checks) the channels' folder: `privacyProblem`'s rule, or an error saying which part it breaks. */
const privateFolder = async () => {
  const folder = channelFolder()
  await Fs.mkdir(folder, { recursive: true, mode: 0o700 })
  const problem = privacyProblem(await Fs.lstat(folder))
  if (problem !== undefined) throw new Error(`${folder} ${problem}: it is not a folder of this user closed to others`)
  return folder
}

/** What `lstat` finds at `path`, or undefined when there is nothing there. */
const found = (path: string) =>
  Effect.tryPromise({
    try: () => Fs.lstat(path).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : Promise.reject(error))),
    catch: (cause) => new SnapshotChannelError({ message: `Could not look at ${path}`, cause })
  })

/** Fails with `ForeignChannel` when `stat` of `path` breaks `rule`. */
const trusted = (path: string, stat: Stats, rule: (stat: Stats) => string | undefined) => {
  const problem = rule(stat)
  return problem === undefined ? Effect.void : Effect.fail(
    new ForeignChannel({
      message: `The running server's snapshot channel ${path} ${problem}: orgplane db dump reads a snapshot only from a server of its own user, through a folder of this user closed to others holding a socket of this user. Nothing was read or written. A server of this user cannot serve a snapshot there either: give both the same TMPDIR of this user's own, or stop the server and dump its folder directly.`
    })
  )
}

/** The answer's head line, then the tarball. */
const answer = async (socket: Net.Socket, snapshot: () => Promise<Blob>) => {
  try {
    const bytes = new Uint8Array(await (await snapshot()).arrayBuffer())
    socket.write(`${JSON.stringify({ bytes: bytes.byteLength })}\n`)
    socket.end(bytes)
  } catch (error) {
    socket.end(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`)
  }
}

/**
 * Serves snapshots of the data folder `realFolder` for the scope (`snapshot` takes one). Never fails: a channel that
 * cannot be opened is logged and left out.
 */
export const serve = Effect.fn("SnapshotChannel.serve")(function*(realFolder: string, snapshot: () => Promise<Blob>) {
  if (process.platform === "win32") return
  const path = socketPathOf(realFolder)
  const opened = yield* Effect.result(Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await privateFolder()
        // A socket file left by a server of this folder that died: the folder's lock says no other server holds it.
        await Fs.rm(path, { force: true })
        const server = Net.createServer((socket) => {
          socket.on("error", () => socket.destroy())
          void answer(socket, snapshot)
        })
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject)
          server.listen(path, () => {
            server.off("error", reject)
            resolve()
          })
        })
        await Fs.chmod(path, 0o600)
        return server
      },
      catch: (cause) => new SnapshotChannelError({ message: `Could not open ${path}`, cause })
    }),
    (server) =>
      Effect.promise(async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()))
        await Fs.rm(path, { force: true })
      })
  ))
  if (opened._tag === "Failure") {
    yield* Effect.logWarning(`orgplane db dump cannot read this server's data folder while it runs (stop it to dump): ${opened.failure.message}`, opened.failure.cause)
  }
})

const readAll = (socket: Net.Socket) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("end", () => resolve(Buffer.concat(chunks)))
    socket.on("error", reject)
  })

/**
 * A snapshot of the data folder `realFolder` from the server of this user holding it, or none when no server of
 * this host and user answers for it (no channel folder, no socket, or one left by a server that is gone). Fails
 * with `ForeignChannel` when the channel's folder or socket is not this user's own (`privacyProblem`,
 * `socketProblem`), before connecting.
 */
export const fetch = Effect.fn("SnapshotChannel.fetch")(function*(realFolder: string) {
  if (process.platform === "win32") return Option.none<Uint8Array<ArrayBuffer>>()
  const folder = channelFolder()
  const path = socketPathOf(realFolder)
  const folderStat = yield* found(folder)
  if (folderStat === undefined) return Option.none<Uint8Array<ArrayBuffer>>()
  yield* trusted(folder, folderStat, privacyProblem)
  const socketStat = yield* found(path)
  if (socketStat === undefined) return Option.none<Uint8Array<ArrayBuffer>>()
  yield* trusted(path, socketStat, socketProblem)
  const received = yield* Effect.tryPromise({
    try: () =>
      new Promise<Buffer | undefined>((resolve, reject) => {
        const socket = Net.createConnection(path)
        socket.once("error", (error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT" || error.code === "ECONNREFUSED") resolve(undefined)
          else reject(error)
        })
        socket.once("connect", () => {
          socket.removeAllListeners("error")
          readAll(socket).then(resolve, reject)
        })
      }),
    catch: (cause) => new SnapshotChannelError({ message: `Could not read the running server's snapshot from ${path}`, cause })
  })
  if (received === undefined) return Option.none<Uint8Array<ArrayBuffer>>()
  const newline = received.indexOf(10)
  const head = yield* Effect.try({
    try: (): { readonly bytes?: unknown; readonly error?: unknown } => JSON.parse(received.subarray(0, newline).toString("utf8")),
    catch: (cause) => new SnapshotChannelError({ message: `The running server's answer on ${path} is not a snapshot`, cause })
  })
  if (typeof head.error === "string") return yield* new SnapshotChannelError({ message: `The running server could not take a snapshot: ${head.error}` })
  const body = received.subarray(newline + 1)
  if (newline < 0 || head.bytes !== body.byteLength) {
    return yield* new SnapshotChannelError({ message: `The running server's snapshot on ${path} ended early (${body.byteLength} of ${String(head.bytes)} bytes)` })
  }
  return Option.some(new Uint8Array(body))
})
