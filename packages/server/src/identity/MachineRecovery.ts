/**
 * `orgplane admin reset-password <email>`: a password reset link made where the server's database is (the embedded
 * data folder, or `DATABASE_URL`), without a running server or a session, as `grafana-cli admin reset-admin-password`
 * and `gitea admin user change-password` are: whoever runs the server can always get back in, its operator included.
 * The link is the same kind the API issues (identity/PasswordResets.ts); the person's organizations record it.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AuditRecorder from "../platform/AuditRecorder.js"
import { publicUrl, ServerConfig } from "../platform/Config.js"
import * as Crypto from "../platform/Crypto.js"
import { IdGenerator } from "../platform/Ids.js"
import { requireMigrated } from "../platform/StoredSecrets.js"
import { PasswordResets } from "./PasswordResets.js"

/** What the command prints: the link, and where to use it (`ORGPLANE_PUBLIC_URL`, when set). */
export const issue = Effect.fn("MachineRecovery.issue")(function*(input: { readonly email: string; readonly latestMigration: number }) {
  yield* requireMigrated(input.latestMigration, "run this again")
  const settings = yield* ServerConfig
  const passwordReset = yield* PasswordResets.use((resets) => resets.issueOnMachine(input.email))
  return { passwordReset, baseUrl: settings.publicUrl === undefined ? null : publicUrl(settings) }
}, Effect.provide(
  PasswordResets.layer.pipe(Layer.provideMerge(Layer.mergeAll(Crypto.layer, AuditRecorder.AuditRecorder.layer)), Layer.provideMerge(IdGenerator.layer))
))
