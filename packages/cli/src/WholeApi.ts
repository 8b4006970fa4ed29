/** The whole API's definition, for the client of a group a command did not declare (see Target.ts): loaded then. */
export { Api } from "@orgplane/schema"
