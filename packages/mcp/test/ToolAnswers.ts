/**
 * A tool call's answer as the tests read it (this package's, and the CLI's `orgplane mcp serve` test): whether it was a
 * tool error, and its data, decoded by what the tools declare they answer and fail with.
 */
import * as Schema from "effect/Schema"
import { Invocation, Tools } from "../src/index.js"

export interface Called {
  readonly isError: boolean
  /** A success's structured content, or the tool error's JSON (an `Invocation.ToolFailure`): read by the decoders below. */
  readonly data: unknown
}

export const wire = <S extends Schema.Top>(schema: S) => Schema.decodeUnknownSync(Schema.toEncoded(schema))
/** What the catalog tools (and a toolset's tools, as call_operation) answer and fail with, as they declare it. */
export const asFound = wire(Tools.FindOperations.successSchema)
export const asDescribed = wire(Tools.DescribeOperation.successSchema)
export const asResult = wire(Invocation.CallResult)
export const asFailure = wire(Invocation.ToolFailure)
