/**
 * The modules the package exports as namespaces (`Examples.team`, `ScimAttributes.…`). Not in index.ts: a namespace
 * re-export there gives the index code of its own, and esbuild's code splitting then counts every module of the
 * package as reached by whatever imports one name from it (the CLI's first chunk held the whole schema).
 */
export * as Examples from "./Examples.js"
export * as OpenApiExamples from "./OpenApiExamples.js"
export * as OpenApiLinks from "./OpenApiLinks.js"
export * as ScimAttributes from "./ScimAttributes.js"
