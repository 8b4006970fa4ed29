/**
 * A plugin's metadata as its repository gives it (`plugin.json` and its marketplace entry, merged by discovery):
 * each member decoded with its schema on its own, so one of the wrong type is left out rather than losing the rest.
 */
import type { JsonObject, PluginSourceMetadata } from "@orgplane/schema"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

const Text = Schema.Trim.check(Schema.isNonEmpty())
const member = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => Schema.decodeUnknownOption(schema)

const text = member(Text)
const author = member(Schema.Union([
  Text,
  Schema.Struct({ name: Text }).pipe(Schema.decodeTo(Schema.toType(Text), {
    decode: SchemaGetter.transform(({ name }) => name),
    encode: SchemaGetter.transform((name) => ({ name }))
  }))
]))
const authorEmail = member(Schema.Struct({ email: Text }))
const authorUrl = member(Schema.Struct({ url: Text }))
const repository = member(Schema.Union([
  Text,
  Schema.Struct({ url: Text }).pipe(Schema.decodeTo(Schema.toType(Text), {
    decode: SchemaGetter.transform(({ url }) => url),
    encode: SchemaGetter.transform((url) => ({ url }))
  }))
]))
const keywords = member(Schema.Array(Schema.Unknown))

/** The metadata of a discovered plugin; null when the repository gives none of it. */
export const sourceMetadataOf = (metadata: JsonObject): PluginSourceMetadata | null => {
  const found: PluginSourceMetadata = {
    version: Option.getOrNull(text(metadata.version)),
    author: Option.getOrNull(author(metadata.author)),
    authorEmail: Option.getOrNull(Option.map(authorEmail(metadata.author), (found) => found.email)),
    authorUrl: Option.getOrNull(Option.map(authorUrl(metadata.author), (found) => found.url)),
    homepage: Option.getOrNull(text(metadata.homepage)),
    repository: Option.getOrNull(repository(metadata.repository)),
    license: Option.getOrNull(text(metadata.license)),
    keywords: Option.getOrElse(keywords(metadata.keywords), () => []).flatMap((keyword) => Option.toArray(text(keyword))).slice(0, 50),
    category: Option.getOrNull(text(metadata.category))
  }
  const empty = found.keywords.length === 0 && Object.entries(found).every(([key, value]) => key === "keywords" || value === null)
  return empty ? null : found
}
