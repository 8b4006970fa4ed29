/**
 * How `orgplane db dump` reads the embedded database of a running server: while a server holds a data folder it
 * answers on a unix socket that only its own user can open, with a copy of the folder's files taken at one instant
 * (PGlite's `dumpDataDir`, under the same lock every protocol message of its socket takes, so between two
 * messages). The copy is crash-consistent: loaded, Postgres replays its WAL and drops whatever a transaction still
 * open at that instant had written, as after a power cut. No second process opens the folder, which PGlite cannot
 * share (platform/DataFolderLock.ts), and the server runs no dump of its own on its single session.
 *
 * The socket is `<tmpdir>/orgplane-<uid>/<hash of the folder's real path>.sock`, so the CLI finds it from the
 * folder alone; its folder is made 0700 and refused when another user owns it or others may enter it. A server
 * that cannot open the channel (a foreign folder of that name, Windows) logs why and serves on without it: the dump
 * of a stopped folder still works.
 *
 * The answer is one JSON line, `{"bytes":n}` then the tarball's n bytes, or `{"error":"…"}`.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"

/** The channel could not be served, or its answer could not be read. */
export class SnapshotChannelError extends Data.TaggedError("SnapshotChannelError")<{ readonly message: string; readonly cause?: unknown }> {}

const ownerId = () => typeof process.getuid === "function" ? process.getuid() : undefined

/** The private folder of this user's channels. */
const channelFolder = () => Path.join(Os.tmpdir(), `orgplane-${ownerId() ?? "user"}`)

/** The socket of the data folder `realFolder` (its real path). */
export const socketPathOf = (realFolder: string) =>
  Path.join(channelFolder(), `${NodeCrypto.createHash("sha256").update(realFolder).digest("hex").slice(0, 24)}.sock`)

/** Makes (or checks) the channels' folder: a directory of this user, closed to everyone else. */
const privateFolder = async () => {
  const folder = channelFolder()
  await Fs.mkdir(folder, { recursive: true, mode: 0o700 })
  const stat = await Fs.lstat(folder)
  if (!stat.isDirectory() || (ownerId() !== undefined && stat.uid !== ownerId()) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${folder} is not a folder of this user closed to others`)
  }
  return folder
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
 * A snapshot of the data folder `realFolder` from the server holding it, or none when no server of this host
 * answers for it (no socket, or one left by a server that is gone).
 */
export const fetch = Effect.fn("SnapshotChannel.fetch")(function*(realFolder: string) {
  if (process.platform === "win32") return Option.none<Uint8Array<ArrayBuffer>>()
  const path = socketPathOf(realFolder)
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
