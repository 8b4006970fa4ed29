/**
 * Every answer a test server sends, held to the OpenAPI document (`ResponseContract.ts`) as it leaves: `watch` hooks a
 * Node HTTP server (packages/server's test servers are watched so) with AnswerWatch.ts, the checker being the document the
 * server serves (`@orgplane/schema`'s) with the server's own routes.
 */
import { openApiDocument, unroutedMember } from "@orgplane/schema"
import { docsRoutes, pathAmbiguity } from "@orgplane/server"
import type * as Http from "node:http"
import * as AnswerWatch from "./AnswerWatch.js"
import * as ResponseContract from "./ResponseContract.js"

let checker: ResponseContract.Checker | undefined

/** The checker of the document the server serves, made once per process. */
export const check: ResponseContract.Checker = (answer) => {
  if (checker === undefined) {
    checker = ResponseContract.make(openApiDocument(), { beside: docsRoutes, refusedBeforeRouting: pathAmbiguity, unroutedMember })
  }
  return checker(answer)
}

/** Checks every answer `server` sends from now on. */
export const watch = <S extends Http.Server>(server: S): S => AnswerWatch.watch(server, check)
