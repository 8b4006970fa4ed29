/**
 * Every answer a test server sends, held to the OpenAPI document (`ResponseContract.ts`) as it leaves: `watch` hooks a
 * Node HTTP server (packages/server's test servers are watched so) with AnswerWatch.ts, the checker being the document the
 * server serves (`@orgplane/schema`'s, or the file `ORGPLANE_TEST_OPENAPI` names) with the server's own routes.
 */
import { openApiDocument, unroutedMember } from "@orgplane/schema"
import { docsRoutes, pathAmbiguity } from "@orgplane/server"
import * as Fs from "node:fs"
import type * as Http from "node:http"
import * as AnswerWatch from "./AnswerWatch.js"
import { documentVariable } from "./ContractFindings.js"
import * as ResponseContract from "./ResponseContract.js"

let checker: ResponseContract.Checker | undefined

/** The checker of the document the server serves, made once per process. */
export const check: ResponseContract.Checker = (answer) => {
  if (checker === undefined) {
    const file = process.env[documentVariable]
    const document = file === undefined ? openApiDocument() : JSON.parse(Fs.readFileSync(file, "utf8"))
    checker = ResponseContract.make(document, { beside: docsRoutes, refusedBeforeRouting: pathAmbiguity, unroutedMember })
  }
  return checker(answer)
}

/** Checks every answer `server` sends from now on. */
export const watch = <S extends Http.Server>(server: S): S => AnswerWatch.watch(server, check)
