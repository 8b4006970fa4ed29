/**
 * The worker runtime's middleware: a worker token (`Authorization: Bearer opw_…`) becomes the `CurrentWorker` it
 * belongs to, in one statement. A missing, unknown or revoked token, or a deleted worker's, is 401.
 *
 * The security handler wraps the endpoint and provides `CurrentWorker` to it; `WorkerTokenStanding` takes the
 * commit's time as platform/Authority.ts declares it, which a worker token's standing does not depend on.
 */
import { CurrentWorker, type WorkerCaller, WorkerAuthentication } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { WorkerTokenStanding } from "../platform/Authority.js"
import { Crypto } from "../platform/Crypto.js"
import { presentedBearer, unauthorized } from "../platform/PresentedCredential.js"
import { orUnavailable } from "../platform/Sql.js"
import { WorkersRepository } from "./WorkersRepository.js"

/** The middleware, and how a worker token is read again when its write commits (platform/Authority.ts). */
export const layer = Layer.effectContext(
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const workers = yield* WorkersRepository

    const standing = (worker: WorkerCaller, _at: Date) =>
      Effect.map(
        workers.tokenStanding({ organizationId: worker.organizationId, workerId: worker.workerId, tokenId: worker.tokenId }),
        (found) => Option.exists(found, (live) => live.worker && live.token)
      )

    /** The worker a token belongs to. */
    const resolve = Effect.fn("WorkerAuthentication.workerToken")(function*(token: Redacted.Redacted) {
      const value = yield* presentedBearer(yield* HttpServerRequest.HttpServerRequest, token)
      const found = yield* orUnavailable(workers.resolveToken({ tokenHash: crypto.hashToken(value) }))
      if (Option.isNone(found)) return yield* unauthorized("worker_token_unknown")
      return found.value satisfies WorkerCaller
    })

    return Context.make(WorkerTokenStanding, standing).pipe(Context.add(
      WorkerAuthentication,
      WorkerAuthentication.of({
        workerToken: (httpEffect, { credential }) =>
          Effect.flatMap(resolve(credential), (worker) => Effect.provideService(httpEffect, CurrentWorker, worker))
      })
    ))
  })
)
