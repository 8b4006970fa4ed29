/**
 * The profile file: named profiles (server URL and credentials) in `<config dir>/config.json`, readable by its
 * owner only (file 0600, folder 0700), since it holds session tokens.
 */
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import * as CliConfig from "./Config.js"
import { ProfileError } from "./Errors.js"

export const Profile = Schema.Struct({
  url: Schema.String,
  token: Schema.optionalKey(Schema.String),
  apiKey: Schema.optionalKey(Schema.String),
  /** Who the token belongs to, for display only. */
  email: Schema.optionalKey(Schema.String)
})
export type Profile = typeof Profile.Type

export const ProfileFile = Schema.Struct({
  profiles: Schema.Record(Schema.String, Profile)
})
export type ProfileFile = typeof ProfileFile.Type

export const DEFAULT_PROFILE = "default"

/** Whether a profile was saved for the server at `url` (normalized, without a trailing slash). */
export const isFor = (profile: Profile, url: string) => profile.url.replace(/\/+$/, "") === url

const empty: ProfileFile = { profiles: {} }

const decode = Schema.decodeUnknownEffect(Schema.fromJsonString(ProfileFile))
const encode = (file: ProfileFile) => `${JSON.stringify(file, null, 2)}\n`

/** Where the profile file lives. */
export const path = Effect.map(Effect.orDie(CliConfig.configDirectory), (directory) => Path.join(directory, "config.json"))

/** The profile file, or an empty one when it does not exist yet. */
export const load = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const file = yield* path
  const text = yield* fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (error) => error.reason._tag === "NotFound",
      () => Effect.succeed(Option.none<string>())
    ),
    Effect.mapError((error) => new ProfileError({ path: file, message: `cannot read: ${error.message}` }))
  )
  if (Option.isNone(text)) return empty
  return yield* decode(text.value).pipe(
    Effect.mapError(() => new ProfileError({ path: file, message: "not a valid orgplane profile file (fix or delete it)" }))
  )
})

/** Writes the file atomically (temporary file, then rename), owner-only. */
export const save = (contents: ProfileFile) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* path
    const failed = (error: { readonly message: string }) => new ProfileError({ path: file, message: `cannot write: ${error.message}` })
    // `mode` only applies to what mkdir creates: a folder the user chose keeps its own permissions.
    yield* fs.makeDirectory(Path.dirname(file), { recursive: true, mode: 0o700 }).pipe(Effect.mapError(failed))
    const temporary = `${file}.${process.pid}.tmp`
    yield* fs.writeFileString(temporary, encode(contents), { mode: 0o600 }).pipe(Effect.mapError(failed))
    yield* fs.chmod(temporary, 0o600).pipe(Effect.mapError(failed))
    yield* fs.rename(temporary, file).pipe(
      Effect.mapError(failed),
      Effect.tapError(() => Effect.ignore(fs.remove(temporary)))
    )
    return file
  })

/** Replaces (or, with `undefined`, deletes) one profile and saves the file; returns the file's path. */
export const update = (name: string, f: (profile: Profile | undefined) => Profile | undefined) =>
  Effect.gen(function*() {
    const contents = yield* load
    const { [name]: current, ...others } = contents.profiles
    const next = f(current)
    return yield* save({ profiles: next === undefined ? others : { ...contents.profiles, [name]: next } })
  })
