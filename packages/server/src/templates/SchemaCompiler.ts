/**
 * Ajv, compiling the registered template schemas (SchemaRegistry.ts). Its own module, imported by the registry
 * only when a folder of schemas is configured: Ajv's three dialects and its formats are a fortieth of a second of a
 * start-up that does not use them.
 */
import { Ajv, type Options as AjvOptions, type ValidateFunction } from "ajv"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

// ajv-formats is CommonJS whose `module.exports` is the plugin, with the plugin again as its `default`: `.default` is
// the plugin whichever view of it the loader gives.
const addFormats = addFormatsModule.default

export interface Compiled {
  /** Checks without changing the document. */
  readonly validate: ValidateFunction
  /** Checks a copy and fills in the schema's `default`s. */
  readonly withDefaults: ValidateFunction
}

const ajvFor = (schema: unknown, options: AjvOptions) => {
  const dialect = typeof schema === "object" && schema !== null && "$schema" in schema ? String(schema.$schema ?? "") : ""
  const ajv = dialect.includes("2020-12") ? new Ajv2020(options) : dialect.includes("2019-09") ? new Ajv2019(options) : new Ajv(options)
  addFormats(ajv)
  return ajv
}

/** A schema as Ajv takes it: an object or a boolean schema; anything else refused as Ajv refuses it. */
const asSchema = (schema: unknown): object | boolean => {
  if ((typeof schema === "object" && schema !== null) || typeof schema === "boolean") return schema
  throw new Error("schema must be object or boolean")
}

/** Compiles one schema twice: a strict check, and a check that fills in defaults. Throws what Ajv throws. */
export const compile = (schema: unknown): Compiled => {
  // Operators' schemas may use keywords Ajv does not know (`$comment`-like annotations, vendor members): not strict.
  const base: AjvOptions = { allErrors: true, strict: false, logger: false }
  return {
    validate: ajvFor(schema, base).compile(asSchema(schema)),
    withDefaults: ajvFor(schema, { ...base, useDefaults: true }).compile(asSchema(schema))
  }
}
