/** The server package's version: what /health and the OpenAPI document report unless ORGPLANE_VERSION says otherwise. */
import packageJson from "../package.json" with { type: "json" }

export const VERSION: string = packageJson.version
