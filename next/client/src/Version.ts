/** The client's version, sent in its user agent (`orgplane-client/<version>`): the package's own, the one source. */
import packageJson from "../package.json" with { type: "json" }

export const VERSION: string = packageJson.version
