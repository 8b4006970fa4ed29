export * from "./Client.js"
export * from "./Pagination.js"
export * from "./Promise.js"
