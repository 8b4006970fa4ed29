/**
 * The server the commands run against, started as next/client's tests start it (`orgplane serve --data memory` from
 * next/cli's sources, on a free port, stopped with SIGTERM): one helper for both.
 */
export * from "../../client/test/RealServer.js"
