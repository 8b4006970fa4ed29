export * as Transport from "./Transport.js"
