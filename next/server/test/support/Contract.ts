/**
 * The contract check of the Effect 3 suite (packages/testkit's `ContractWatch`), on the Effect 4 server: every answer a
 * test server sends is held to the OpenAPI document Effect 3 publishes, the contract the move must keep
 * (`Server.layer`'s `makeServer` is a watched `createHttpServer`), and `contractSetup.ts` fails the test that caused an
 * answer the document does not declare.
 */
import * as ContractWatch from "../../../../packages/testkit/src/ContractWatch.js"
import * as Server from "../../src/Server.js"

/** `Server.createHttpServer`, every answer it sends checked against the document. */
export const watched = () => ContractWatch.watch(Server.createHttpServer())
