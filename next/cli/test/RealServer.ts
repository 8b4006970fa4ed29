/**
 * The Effect 3 server the commands run against, started as next/client's tests start it (`orgplane serve --data
 * memory` from packages/cli's sources, on a free port, stopped with SIGTERM): one helper for both until the swap.
 */
export * from "../../client/test/RealServer.js"
