/** AccountApi.ts: the account export's answer tells a browser to save it (`Content-Disposition: attachment`). */
import { describe, expect, it } from "@effect/vitest"
import * as OpenApi from "effect/http-api/OpenApi"
import { AccountApi } from "../src/AccountApi.js"
import { apiOf } from "../src/ApiOf.js"
import { isJsonObject, memberAt, savedDocument } from "./support/SavedDocument.js"

/** The headers of the export's 200 in `document`. */
const exportHeaders = (document: unknown) => memberAt(document, "paths", "/v1/me/export", "get", "responses", "200", "headers")

describe("AccountApi", () => {
  it("says the export is an attachment, in the group and in the saved document", () => {
    const headers = exportHeaders(OpenApi.fromApi(apiOf(AccountApi)))
    expect(headers).toMatchObject({ "Content-Disposition": { schema: { type: "string" }, description: expect.stringContaining("`attachment`") } })
    const disposition = isJsonObject(headers) ? headers["Content-Disposition"] : undefined
    expect(exportHeaders(savedDocument)).toMatchObject({ "Content-Disposition": disposition })
  })
})
