/**
 * Encoding a handler's answer without checking it again. A handler answers with values the server made itself: class
 * instances built from rows of its own tables, checked as they were read or written. The platform encodes every
 * answer through its success schema, which validates the whole value again on the way out (every id's pattern, every
 * date, every literal) before it transforms it.
 *
 * The Schema parse option `disableChecks` skips the checks (a node's refinements) and still runs every transformation
 * (a `Date` to its ISO string, a class to its fields, a struct to its declared keys, defaults), so the JSON is the
 * schema's own for any value of the schema's type. `encodingSuccess` gives an endpoint its success's parse options
 * (`SuccessParseOptions`, over those the API, its group or itself declare) with `disableChecks`; `HttpErrors.group`
 * applies it to every endpoint of the server.
 *
 * What is not checked: a handler's value that has the schema's shape but breaks one of its refinements (an id of the
 * wrong pattern, a negative count where the schema says positive) is sent as it is, where a checked encoding would
 * answer 500. A value of another shape (a bug the transformations meet) is still the platform's 500. With
 * `ORGPLANE_CHECK_RESPONSE_ENCODING=1` (set by the test suites, read as the server builds its groups) every answer
 * is checked, so a value its schema refuses is answered 500 and the whole suite checks the handlers.
 */
import * as Context from "effect/Context"
import type * as SchemaAST from "effect/SchemaAST"
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"

/** Whether every answer is checked by its schema, as without this module (the test suites set it). */
export const checkingEverything = () => process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"] === "1"

/**
 * The endpoint encoding its success without the schema's checks (see the module comment), unless `checked`; the
 * other parse options of its success as the API, its group or itself declare them (as the builder reads them: the
 * slot's options, else `ParseOptions`).
 */
export const encodingSuccess = (
  api: Pick<HttpApi.Top, "annotations">,
  group: HttpApiGroup.Top,
  endpoint: HttpApiEndpoint.Top,
  checked = checkingEverything()
) => {
  if (checked) return endpoint
  const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
  const declared: SchemaAST.ParseOptions | undefined = Context.getOrUndefined(annotations, HttpApi.SuccessParseOptions) ??
    Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  return endpoint.annotate(HttpApi.SuccessParseOptions, { ...declared, disableChecks: true })
}
