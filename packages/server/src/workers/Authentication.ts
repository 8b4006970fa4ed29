/**
 * The worker runtime's middleware: a worker token (`Authorization: Bearer opw_…`) becomes the `CurrentWorker` it
 * belongs to, in one statement. A missing, unknown or revoked token, or a deleted worker's, is 401.
 */
import { HttpServerRequest } from "@effect/platform"
import { Unauthorized, type WorkerCaller, WorkerAuthentication } from "@orgplane/schema"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { WorkerTokenStanding } from "../platform/Authority.js"
import { Crypto } from "../platform/Crypto.js"
import { orUnavailable } from "../platform/Sql.js"
import { WorkersRepository } from "./WorkersRepository.js"

const unauthorized = new Unauthorized()

/** The middleware, and how a worker token is read again when its write commits (platform/Authority.ts). */
export const layer = Layer.effectContext(
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const workers = yield* WorkersRepository
    const standing = (worker: WorkerCaller) =>
      Effect.map(
        workers.tokenStanding({ organizationId: worker.organizationId, workerId: worker.workerId, tokenId: worker.tokenId }),
        (found) => Option.exists(found, (live) => live.worker && live.token)
      )
    return Context.make(WorkerTokenStanding, standing).pipe(Context.add(WorkerAuthentication, {
      workerToken: (token: Redacted.Redacted) =>
        Effect.gen(function*() {
          // The platform strips the first 7 characters without looking at them: check the scheme here.
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!/^bearer /i.test(request.headers["authorization"] ?? "")) return yield* unauthorized
          const value = Redacted.value(token).trim()
          if (value === "") return yield* unauthorized
          const found = yield* orUnavailable(workers.resolveToken({ tokenHash: crypto.hashToken(value) }))
          if (Option.isNone(found)) return yield* unauthorized
          return found.value satisfies WorkerCaller
        })
    }))
  })
)
