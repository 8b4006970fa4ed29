export * from "./Client.js"
