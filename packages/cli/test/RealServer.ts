/**
 * The server the commands run against, started as the client's tests start it (`orgplane serve --data memory` from
 * the CLI's sources, on a free port, stopped with SIGTERM): one helper for both.
 */
export * from "../../client/test/RealServer.js"
