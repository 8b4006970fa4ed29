/**
 * The scheduled refresh of SAML metadata URLs (sso/SamlRefresh.ts) takes the connections whose latest fetch is the
 * oldest: an index over that instant (`saml.metadataRefresh.at`, an ISO-8601 UTC text written by `toISOString`, so
 * its byte order, collation "C", is time order) of the connections whose source is a metadata URL.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE INDEX sso_connections_metadata_refresh_idx ON sso_connections (((saml->'metadataRefresh'->>'at') COLLATE "C") NULLS FIRST, id)
  WHERE saml->>'source' = 'metadataUrl';
`))
