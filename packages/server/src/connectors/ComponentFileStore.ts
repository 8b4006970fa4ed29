/**
 * A sync's reading of the files a component carries: the blobs `ComponentFileSelection` chose, read from the code
 * host and stored by content (each component's in a transaction of its own, before the batch that lists them, so a
 * batch holds one component's bytes at a time), and the version list the batch writes.
 */
import type { ObjectType, OrganizationId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import { ComponentFilesRepository, type VersionFileRow } from "../catalog/ComponentFilesRepository.js"
import { type Credential, GitHub, type GitHubError } from "../integrations/codehost/GitHub.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { type Fingerprint, mediaTypeOf, type SelectedFile, selectFiles } from "./ComponentFileSelection.js"
import type { TreeIndex } from "./RepositoryTree.js"

/** What a batch writes for a component's files. */
export interface FilesOfComponent {
  /** The version's list: its entry, then its files. */
  readonly rows: ReadonlyArray<VersionFileRow>
  readonly fingerprint: Fingerprint
  readonly warnings: ReadonlyArray<string>
}

const FingerprintJson = Schema.fromJsonString(Schema.Array(Schema.Tuple([Schema.String, Schema.NullOr(Schema.String)])))
const decodeFingerprint = Schema.decodeUnknownOption(FingerprintJson)

/** A binding's stored fingerprint; null when it has none (or it cannot be read: then the files are read again). */
export const fingerprintOf = (json: string | null): Fingerprint | null => {
  if (json === null) return null
  const decoded = decodeFingerprint(json)
  return Option.getOrNull(decoded)
}

/** Whether a stored list is the one a sync would write (then the version stays). */
export const sameList = (stored: ReadonlyArray<VersionFileRow>, rows: ReadonlyArray<VersionFileRow>) => {
  if (stored.length !== rows.length) return false
  const byPath = new Map(stored.map((row) => [row.path, row]))
  return rows.every((row) => {
    const other = byPath.get(row.path)
    return other !== undefined && other.kind === row.kind && other.sha256 === row.sha256 && other.omitted === row.omitted &&
      other.size === row.size && other.mediaType === row.mediaType && other.executable === row.executable
  })
}

const sha256Of = (bytes: Uint8Array) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")

/**
 * Reads and stores the files of one component whose entry was read as `text`, and answers its list. A blob that
 * turns out larger than the limit it was listed under (the tree's size was wrong) is still stored as read: the
 * tree's size decided.
 */
export const readComponentFiles = Effect.fn("ComponentFileStore.readComponentFiles")(function*(input: {
  readonly organizationId: OrganizationId
  readonly credential: Credential
  readonly repository: string
  readonly index: TreeIndex
  readonly objectType: ObjectType
  readonly entryPath: string
  readonly text: string
}) {
  const github = yield* GitHub
  const store = yield* ComponentFilesRepository
  const selection = selectFiles(input.index, input.objectType, input.entryPath, input.text)
  type Read = { readonly file: SelectedFile; readonly bytes?: { readonly content: Uint8Array; readonly sha256: string } }
  const read = yield* Effect.forEach(
    selection.files,
    (file): Effect.Effect<Read, GitHubError> =>
      file.omitted !== undefined || file.sha === null
        ? Effect.succeed({ file })
        : Effect.map(github.blobBytes(input.credential, input.repository, file.sha), (content) => ({
          file,
          bytes: { content, sha256: sha256Of(content) }
        })),
    { concurrency: 4 }
  )
  const at = yield* now
  const stored = read.flatMap(({ bytes }) => bytes === undefined ? [] : [bytes])
  if (stored.length > 0) {
    yield* transaction(Effect.forEach(stored, ({ content, sha256 }) =>
      store.storeContent({ organizationId: input.organizationId, sha256, content, at }), { discard: true }))
  }
  const entry: VersionFileRow = {
    path: selection.entryPath,
    kind: "entry",
    size: new TextEncoder().encode(input.text).byteLength,
    sha256: null,
    mediaType: mediaTypeOf(input.entryPath, new Uint8Array()),
    omitted: null,
    executable: input.index.blobs.get(input.entryPath)?.executable === true
  }
  const rows: Array<VersionFileRow> = [entry]
  for (const { bytes, file } of read) {
    rows.push({
      path: file.path,
      kind: "file",
      size: bytes?.content.byteLength ?? file.size,
      sha256: bytes?.sha256 ?? null,
      mediaType: mediaTypeOf(file.path, bytes?.content),
      omitted: bytes === undefined ? (file.omitted ?? "not in the repository at this commit") : null,
      executable: file.executable
    })
  }
  return { rows, fingerprint: selection.fingerprint, warnings: selection.warnings } satisfies FilesOfComponent
})
