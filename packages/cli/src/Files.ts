/**
 * What a command is handed on standard input or in a file, read in one place. Failures are the reason in words
 * (without the input's name): each command wraps it in its own error, naming its flag.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Standard input, whole, as UTF-8. */
export const readStdin: Effect.Effect<string, string> = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
    return Buffer.concat(chunks).toString("utf8")
  },
  catch: (error) => `cannot read standard input: ${messageOf(error)}`
})

/**
 * A file as UTF-8, refused before it is read when it holds more than `maxBytes` (bytes on disk are the UTF-8 an
 * API counts); `limit` says the limit in words ("1 MiB, the API's limit").
 */
export const readFile = Effect.fn("Files.readFile")(function*(path: string, maxBytes: number, limit: string) {
  const fs = yield* FileSystem.FileSystem
  const cannot = (error: PlatformError.PlatformError) =>
    `cannot read '${path}': ${error.reason._tag === "NotFound" ? "no such file" : error.message}`
  const info = yield* Effect.mapError(fs.stat(path), cannot)
  if (info.type !== "File") return yield* Effect.fail(`'${path}' is not a file`)
  if (Number(info.size) > maxBytes) return yield* Effect.fail(`'${path}' is larger than ${limit}`)
  return yield* Effect.mapError(fs.readFileString(path), cannot)
})

/** `-` reads standard input, anything else the file. */
export const readFileOrStdin = (path: string, maxBytes: number, limit: string) =>
  path === "-" ? readStdin : readFile(path, maxBytes, limit)
