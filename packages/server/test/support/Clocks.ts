/** The testkit's clocks (packages/testkit/src/Clocks.ts), where the server's tests have always found them. */
export * from "../../../../packages/testkit/src/Clocks.js"
