export * as TestDatabase from "./TestDatabase.js"
export * as TestServer from "./TestServer.js"
export * as Http from "./Http.js"
export * as DatabaseProxy from "./DatabaseProxy.js"
