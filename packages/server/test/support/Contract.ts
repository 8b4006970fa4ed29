/**
 * The contract check: every answer a test server sends is held to the OpenAPI document (`Server.layer`'s
 * `makeServer` is a watched `createHttpServer`), and `contractSetup.ts` fails the test that caused an answer the
 * document does not declare. The document is the one this server serves, `@orgplane/schema`'s, which the schema's
 * Api.test holds to the document 0.1.0 published (equal to it but for the order of members, which the check does
 * not read), with
 * this server's routes beside the API and its refusal before routing; testkit's checker and watch (ResponseContract.ts,
 * AnswerWatch.ts) are plain Node.
 */
import { openApiDocument, unroutedMember } from "@orgplane/schema"
import * as AnswerWatch from "../../../../packages/testkit/src/AnswerWatch.js"
import * as ResponseContract from "../../../../packages/testkit/src/ResponseContract.js"
import * as AgentsHttp from "../../src/agents/Http.js"
import * as ClaimPage from "../../src/identity/ClaimPage.js"
import * as Docs from "../../src/platform/Docs.js"
import * as Metrics from "../../src/platform/Metrics.js"
import { pathAmbiguity } from "../../src/platform/Routes.js"
import * as Server from "../../src/Server.js"

let checker: ResponseContract.Checker | undefined

/** The checker of the document the server serves, made once per process (test file). */
const check: ResponseContract.Checker = (answer) => {
  checker ??= ResponseContract.make(openApiDocument(), { beside: [...Docs.routes, ...ClaimPage.routes, ...Metrics.routes, ...AgentsHttp.routes], refusedBeforeRouting: pathAmbiguity, unroutedMember })
  return checker(answer)
}

/** `Server.createHttpServer`, every answer it sends checked against the document. */
export const watched = () => AnswerWatch.watch(Server.createHttpServer(), check)
